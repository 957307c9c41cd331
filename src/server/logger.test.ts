import { connect } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { eventually } from '../../test/processes.js';
import { procedure, procedures } from '../core/procedure.js';
import { UnavailableError } from '../core/unavailable.js';
import { createApp } from './create-app.js';
import { appLogger, serializeError } from './logger.js';

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

/** The lines logged for the request with this id. */
const linesOf = (lines: string[], reqId: string) =>
  lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.reqId === reqId);

/** The first line logged for the request with this id, once it is there. */
async function lineOf(lines: string[], reqId: string): Promise<Record<string, unknown>> {
  await eventually(() => linesOf(lines, reqId).length > 0, 10_000, 'the log line');
  return linesOf(lines, reqId)[0] as Record<string, unknown>;
}

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

  it('logs a request the client left before its answer, and one the router refused, over a socket', async () => {
    const lines: string[] = [];
    let arrived = false;
    let release = () => {};
    const slow = procedures('slow', {
      listSlow: procedure().query(
        () =>
          new Promise((resolve) => {
            arrived = true;
            release = () => resolve([]);
          }),
      ),
      // An outage the client did not wait for: still the server's failure.
      listFailing: procedure()
        .rest({ method: 'GET', path: '/slow/failing' })
        .query(
          () =>
            new Promise((_, reject) => {
              arrived = true;
              release = () => reject(new UnavailableError());
            }),
        ),
    });
    const app = createApp({ logger: { stream: { write: (line) => lines.push(line) } } }).mount([slow]);
    const inFlight = app.countRequestsInFlight();
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = new URL(url);
    /** Sends a request, leaves once its handler runs, then lets the handler finish. */
    const leave = async (path: string, id: string) => {
      arrived = false;
      const socket = connect(Number(port), '127.0.0.1');
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\n\r\n`);
      await eventually(() => arrived, 10_000, `the request ${id} to arrive`);
      socket.destroy();
      await eventually(() => inFlight() === 0, 10_000, 'the server to see the client leave');
      release();
    };
    try {
      // The client sends a request and leaves before the answer; the line is written as the
      // answer is made, and says so.
      await leave('/api/slow', 'left-early');
      const left = await lineOf(lines, 'left-early');
      expect(left).toMatchObject({
        level: 30,
        msg: 'request aborted: the client left before the answer was sent',
        req: { method: 'GET', url: '/api/slow' },
        // Not the 200 the handler went on to make: the client got nothing.
        res: { statusCode: 499 },
      });
      await leave('/api/slow/failing', 'left-failing');
      expect(await lineOf(lines, 'left-failing')).toMatchObject({
        msg: 'request aborted: the client left before the answer was sent',
        res: { statusCode: 503 },
      });
      // A malformed URL never reaches a route: the router refuses it, and it is logged all the same.
      const refused = await fetch(`${url}/api/slow/%E0%A4%A`, { headers: { 'x-request-id': 'bad-url' } });
      expect(refused.status).toBe(400);
      expect(await lineOf(lines, 'bad-url')).toMatchObject({
        msg: 'request completed',
        res: { statusCode: 400 },
      });
    } finally {
      await app.close();
    }
    // Closed, the server has no connection left to log for: one line each, no second one later.
    expect(linesOf(lines, 'left-early')).toHaveLength(1);
    expect(linesOf(lines, 'bad-url')).toHaveLength(1);
  });

  it('writes none above info', async () => {
    expect(await logged('warn')).toEqual([]);
  });

  it('also logs the arrival at debug, for a request that never finishes', async () => {
    expect((await logged('debug')).map((line) => line.msg)).toEqual([
      'incoming request',
      'request completed',
    ]);
  });
});

describe('the trace fields of a line', () => {
  it('leave no line with the fields of another when there is no span to name', () => {
    const lines: string[] = [];
    let span: Record<string, string> | undefined;
    const logger = appLogger({ level: 'info', stream: { write: (line) => lines.push(line) } }, () => span);
    logger?.info({ reqId: 'first' }, 'outside any span');
    span = { trace_id: 'a'.repeat(32) };
    logger?.info('inside a span');
    span = undefined;
    logger?.info('outside again');
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed.map((line) => [line.msg, line.reqId, line.trace_id])).toEqual([
      ['outside any span', 'first', undefined],
      ['inside a span', undefined, 'a'.repeat(32)],
      ['outside again', undefined, undefined],
    ]);
  });
});

describe('the log level', () => {
  afterEach(() => vi.unstubAllEnvs());
  const quiet = { write: () => undefined };

  it('refuses one pino does not know, naming the setting it came from, and takes an empty LOG_LEVEL as unset', () => {
    vi.stubEnv('LOG_LEVEL', 'verbose');
    expect(() => appLogger({ stream: quiet })).toThrow(
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "verbose")',
    );
    expect(appLogger({ level: 'warn', stream: quiet })?.level).toBe('warn');
    vi.stubEnv('LOG_LEVEL', '');
    expect(appLogger({ stream: quiet })?.level).toBe('info');
    expect(() => appLogger({ level: 'loud', stream: quiet })).toThrow(/^logger.level must be one of/);
  });
});
