import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { procedure, procedures } from '../core/procedure.js';
import { createApp } from './app.js';
import { serializeError } from './logger.js';

/** Shaped like the error Drizzle throws for a failed query: the parameters are in the message. */
class QueryError extends Error {
  override name = 'DrizzleQueryError';
  readonly params = ['scrypt$16384$8$1$salt$hash', 'ada@example.com'];
  constructor() {
    super(
      'Failed query: update "users" set "password_hash" = $1 where "email" = $2\nparams: scrypt$16384$8$1$salt$hash,ada@example.com',
      {
        cause: Object.assign(new Error('connection terminated'), { code: '57P01' }),
      },
    );
  }
}

describe('logged errors', () => {
  it('keep type, message, code and cause, without query parameters', () => {
    const logged = serializeError(new QueryError()) as Record<string, unknown>;
    expect(logged.type).toBe('DrizzleQueryError');
    expect(logged.message).toBe(
      'Failed query: update "users" set "password_hash" = $1 where "email" = $2\nparams: [redacted]',
    );
    expect(logged.cause).toMatchObject({ type: 'Error', message: 'connection terminated', code: '57P01' });
    expect(JSON.stringify(logged)).not.toContain('scrypt$');
  });

  it('never reach the log with a hash, from a handler that fails', async () => {
    const lines: string[] = [];
    const failing = procedures('failing', {
      listFailing: procedure().query(() => {
        throw new QueryError();
      }),
    });
    const app = createApp({ logger: { stream: { write: (line) => lines.push(line) } } }).mount([failing]);
    // 57P01 (the server shutting down) is an outage: 503, logged at warn with its cause.
    expect((await app.inject({ method: 'GET', url: '/api/failing' })).statusCode).toBe(503);
    const logged = lines.join('');
    expect(logged).toContain('Failed query');
    expect(logged).not.toContain('scrypt$');
    expect(logged).not.toContain('ada@example.com');
  });
});

describe('request logs', () => {
  const things = procedures('things', {
    getThing: procedure()
      .input(z.object({ id: z.string() }))
      .query(({ input }) => ({ id: input.id })),
  });
  const logged = async (level: string) => {
    const lines: string[] = [];
    const app = createApp({ logger: { level, stream: { write: (line) => lines.push(line) } } }).mount([
      things,
    ]);
    await app.ready();
    lines.length = 0;
    await app.inject({ method: 'GET', url: '/api/things/7', headers: { 'x-request-id': 'req-7' } });
    await app.close();
    return lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.reqId === 'req-7');
  };

  it('writes one line per request at info, when it is answered, with what the arrival line had', async () => {
    const lines = await logged('info');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: { method: 'GET', url: '/api/things/7' },
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
    });
  });

  it('also logs the arrival at debug, for a request that never finishes', async () => {
    expect((await logged('debug')).map((line) => line.msg)).toEqual([
      'incoming request',
      'request completed',
    ]);
  });
});
