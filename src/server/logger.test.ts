import { describe, expect, it } from 'vitest';
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
