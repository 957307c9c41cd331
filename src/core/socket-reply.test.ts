/**
 * A socket procedure's reply: each message of the client checked as a JSON body is (docs/sockets.md).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Call } from './call.js';
import { ValidationError } from './errors.js';
import { procedure, procedures } from './procedure.js';
import { ResponseControl } from './response.js';
import { planRoutes } from './routes.js';
import { socketer } from './socket-reply.js';
import { webSocket } from './sockets.js';

function messageCheck(receive: z.ZodType) {
  const [route] = planRoutes([
    procedures('rooms', {
      roomSocket: procedure()
        .rest({ method: 'GET', path: '/rooms/socket' })
        .output(webSocket({ receive, send: z.object({}) }))
        .query(async () => undefined),
    }),
  ]);
  if (route === undefined) throw new Error('not planned');
  const reply = socketer(route)?.({ ctx: {} } as Call, {}, new ResponseControl<never>([200]));
  if (reply?.socket === undefined) throw new Error('no socket');
  return reply.socket.check;
}

describe('a socket message', () => {
  it('reads its dates where the receive schema has them, as a JSON body does, and refuses one not on the calendar', () => {
    const check = messageCheck(z.object({ at: z.date(), say: z.string() }));
    expect(check({ at: '2024-01-01T00:00:00Z', say: '2024-01-01' })).toEqual({
      at: new Date('2024-01-01T00:00:00Z'),
      say: '2024-01-01',
    });
    expect(() => check({ at: '2024-02-30', say: 'x' })).toThrow(ValidationError);
  });
});
