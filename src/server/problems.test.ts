import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { answerClientError } from './problems.js';

const lines: { fields: object; message: string }[] = [];
const host = {
  log: { info: (fields: object, message: string) => lines.push({ fields, message }) },
} as unknown as FastifyInstance;

/** Just enough of a socket to see what the answer writes. */
function socketWith(current: { headersSent: boolean } | null) {
  const written: string[] = [];
  let destroyed = false;
  const socket = {
    writable: true,
    get destroyed() {
      return destroyed;
    },
    _httpMessage: current,
    write: (text: string) => written.push(text),
    destroy: () => {
      destroyed = true;
    },
  } as unknown as Socket;
  return { socket, written, isDestroyed: () => destroyed };
}

const timeout = Object.assign(new Error('timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });

describe('answerClientError', () => {
  it('answers a connection with no response under way, then closes it', () => {
    const { socket, written, isDestroyed } = socketWith(null);
    answerClientError.call(host, timeout, socket);
    expect(written.join('')).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(isDestroyed()).toBe(true);
    // The answer's request id is on its log line.
    const id = /\r\nX-Request-Id: ([^\r]+)\r\n/.exec(written.join(''))?.[1];
    expect(lines.at(-1)).toEqual({
      fields: {
        reqId: id,
        remoteAddress: undefined,
        remotePort: undefined,
        res: { statusCode: 408 },
        reason: 'ERR_HTTP_REQUEST_TIMEOUT: timeout',
      },
      message: 'request refused: The request did not arrive in time',
    });
  });

  it('writes nothing into a response whose headers are already sent, and closes the connection', () => {
    const { socket, written, isDestroyed } = socketWith({ headersSent: true });
    answerClientError.call(host, timeout, socket);
    expect(written).toEqual([]);
    expect(isDestroyed()).toBe(true);
  });
});
