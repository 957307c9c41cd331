import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { z } from 'zod';
import { eventually } from '../../test/processes.js';
import { eventStream } from '../core/events.js';
import { procedure, procedures } from '../core/procedure.js';
import { webSocket } from '../core/sockets.js';
import { mcpPlugin } from '../mcp/plugin.js';
import { createApp } from './create-app.js';
import { createApp as createAppWithoutFastify } from './create-app-fetch.js';
import { batched } from './log-output.js';

describe('batched', () => {
  it('writes the lines of one turn of the event loop together, and at once past 64 KiB', async () => {
    const writes: string[] = [];
    const output = batched({ write: (text: string) => writes.push(text) });
    output.write('a\n');
    output.write('b\n');
    output.write('c\n');
    expect(writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['a\nb\nc\n']);
    output.write('x'.repeat(64 * 1024));
    expect(writes).toHaveLength(2);
    output.write('d\n');
    output.flush();
    expect(writes.at(-1)).toBe('d\n');
  });

  it('writes what is held for the end of the turn in the same write', async () => {
    const writes: string[] = [];
    let held = ['request line\n'];
    const output = batched({ write: (text: string) => writes.push(text) }, () => {
      for (const line of held) output.write(line);
      held = [];
    });
    output.write('error line\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['error line\nrequest line\n']);
  });
});

describe('the request line', () => {
  it('is written when the process exits in the same turn as the answer', async () => {
    const script = fileURLToPath(new URL('./fixtures/exit-on-close.ts', import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script], {
      env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'info' },
      timeout: 30_000,
    });
    const lines = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { reqId?: string; msg: string });
    expect(lines.find((line) => line.reqId === 'exit-1')?.msg).toBe('request completed');
  });

  it('holds what pino would write, in its order; errors go through a child logger with the request id', async () => {
    const lines: string[] = [];
    const things = procedures('things', {
      getThing: procedure()
        .input(z.object({ id: z.string(), q: z.string().optional() }))
        .query(({ input }) => {
          if (input.id === 'broken') throw new Error('broken');
          return { id: input.id };
        }),
    });
    const app = createApp({ logger: { stream: { write: (line) => lines.push(line) } } }).mount([things]);
    const url = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
    await (await fetch(`${url}/api/things/7?q=%22`, { headers: { 'x-request-id': 'line-7' } })).text();
    await (await fetch(`${url}/api/things/broken`, { headers: { 'x-request-id': 'line-8' } })).text();
    await app.close();
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const line = parsed.find((each) => each.reqId === 'line-7' && each.msg === 'request completed');
    expect(Object.keys(line ?? {})).toEqual(nodeLineKeys);
    expect(line).toMatchObject({
      level: 30,
      pid: process.pid,
      req: {
        method: 'GET',
        url: '/api/things/7?q=%22',
        host: expect.any(String),
        remoteAddress: '127.0.0.1',
      },
      res: { statusCode: 200 },
    });
    expect(Object.keys(line?.req as object)).toEqual([
      'method',
      'url',
      'host',
      'remoteAddress',
      'remotePort',
    ]);
    const failed = parsed.filter((each) => each.reqId === 'line-8');
    expect(failed.map((each) => each.msg)).toContain('Unexpected error');
    expect(failed.find((each) => each.msg === 'Unexpected error')).toMatchObject({ level: 50 });
  });
});

/** An app of one read, `GET /api/things/:id?q=`, whose log lines land in `lines`. */
function thingsLoggingTo(make: typeof createApp = createApp) {
  const lines: string[] = [];
  const things = procedures('things', {
    getThing: procedure()
      .input(z.object({ id: z.string(), q: z.string().optional() }))
      .query(({ input }) => ({ id: input.id })),
  });
  const app = make({ logger: { stream: { write: (line) => lines.push(line) } } }).mount([things]);
  return { app, lines };
}

describe('the request line, escaped', () => {
  it('writes a host and a URL that need escaping as JSON does: the line still parses, the values intact', async () => {
    const { app, lines } = thingsLoggingTo();
    const url = new URL(
      await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false }),
    );
    // fetch would normalise both: the request goes over a socket as a client could send it.
    const host = 'quote"back\\slash\ttab';
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(url.port), '127.0.0.1', () => {
        socket.write(
          `GET /api/things/7?q=a\\b HTTP/1.1\r\nHost: ${host}\r\nX-Request-Id: escaped-1\r\nConnection: close\r\n\r\n`,
        );
      });
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    // No URL holds that host (RFC 9112, 3.2): refused, and logged as sent.
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    await eventually(
      () => lines.some((line) => line.includes('"escaped-1"')),
      10_000,
      'the line of escaped-1',
    );
    await app.close();
    const line = lines.find((each) => each.includes('"escaped-1"')) ?? '';
    const parsed = JSON.parse(line) as { req: { url: string; host: string } };
    expect(parsed.req).toMatchObject({ url: '/api/things/7?q=a\\b', host });
    expect(line).toContain(JSON.stringify(host));
  });
});

describe('the request line of an event stream its client leaves', () => {
  it('is one line, "request completed": the normal end of a feed, not an abort or a stream error', async () => {
    const lines: string[] = [];
    const ticks = procedures('ticks', {
      tickEvents: procedure()
        .rest({ method: 'GET', path: '/ticks' })
        .output(eventStream(z.object({ n: z.number() })))
        .query(async function* ({ signal }) {
          for (let n = 0; !signal.aborted; n++) {
            yield { n };
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        }),
    });
    const app = createApp({ logger: { stream: { write: (line) => lines.push(line) } } }).mount([ticks]);
    const url = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
    const leaving = new AbortController();
    const response = await fetch(`${url}/api/ticks`, {
      signal: leaving.signal,
      headers: { 'x-request-id': 'feed-1' },
    });
    await response.body?.getReader().read();
    leaving.abort();
    await eventually(() => lines.some((line) => line.includes('"feed-1"')), 10_000, 'the line of feed-1');
    await new Promise((resolve) => setTimeout(resolve, 200));
    await app.close();
    const ofFeed = lines
      .filter((line) => line.includes('"feed-1"'))
      .map((line) => JSON.parse(line) as { msg: string });
    expect(ofFeed.map((line) => line.msg)).toEqual(['request completed']);
  });
});

/** A socket at /api/rooms/socket that sends each message back. */
function echoRooms() {
  return procedures('rooms', {
    roomSocket: procedure()
      .rest({ method: 'GET', path: '/rooms/socket' })
      .output(webSocket({ receive: z.object({ t: z.string() }), send: z.object({ t: z.string() }) }))
      .query(async function* ({ messages }) {
        for await (const message of messages) yield message;
      }),
  });
}

describe('the request line of a WebSocket handshake', () => {
  it('says 101 and "request completed" once the socket is open, its token redacted', async () => {
    const lines: string[] = [];
    const rooms = echoRooms();
    const app = createApp({ logger: { stream: { write: (line) => lines.push(line) } } }).mount([rooms]);
    const url = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/api/rooms/socket?access_token=sekrit`, {
      headers: { 'x-request-id': 'socket-1' },
    });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    await eventually(() => lines.some((line) => line.includes('"socket-1"')), 10_000, 'the line of socket-1');
    const echoed = new Promise((resolve) => ws.once('message', resolve));
    ws.send('{"t":"hi"}');
    await echoed;
    ws.close(1000);
    // The socket's own line when it ends, with the handshake's request id.
    await eventually(
      () => lines.some((line) => line.includes('"socket closed"')),
      10_000,
      'the close line of socket-1',
    );
    await app.close();
    expect(JSON.parse(lines.find((each) => each.includes('"socket closed"')) ?? '{}')).toMatchObject({
      level: 30,
      reqId: 'socket-1',
      procedure: 'rooms.roomSocket',
      closedBy: 'client',
      code: 1000,
      received: 1,
      sent: 1,
    });
    const line = JSON.parse(lines.find((each) => each.includes('"socket-1"')) ?? '{}') as Record<
      string,
      unknown
    >;
    expect(line).toMatchObject({
      msg: 'request completed',
      res: { statusCode: 101 },
      req: { url: '/api/rooms/socket?access_token=[redacted]' },
    });
  });
});

describe('the close line of a WebSocket that Node closed itself', () => {
  it('says the server closed it, with 1009, for a frame over the size limit', async () => {
    const lines: Record<string, unknown>[] = [];
    const rooms = echoRooms();
    const app = createApp({
      logger: { stream: { write: (line: string) => lines.push(JSON.parse(line)) } },
    }).mount([rooms]);
    const url = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/api/rooms/socket`, {
      headers: { 'x-request-id': 'big-frame' },
    });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const closed = new Promise((resolve) => ws.once('close', resolve));
    ws.on('error', () => undefined);
    ws.send(JSON.stringify({ t: 'x'.repeat(8 * 1024 * 1024) }));
    await closed;
    await eventually(() => lines.some((line) => line.msg === 'socket closed'), 10_000, 'the close line');
    await app.close();
    expect(lines.find((line) => line.msg === 'socket closed')).toMatchObject({
      reqId: 'big-frame',
      closedBy: 'server',
      code: 1009,
      reason: 'a frame over the size limit',
    });
  });
});

describe('the request line of a URL with a token', () => {
  it("writes no access_token's value, through Fastify's routes and through app.fetch", async () => {
    const { app, lines } = thingsLoggingTo();
    await app.inject({
      url: '/api/things/7?access_token=sekrit-one&q=x',
      headers: { 'x-request-id': 'token-1' },
    });
    await app.fetch(
      new Request('http://api.example/api/things/8?q=y&access_token=sekrit-two', {
        headers: { 'x-request-id': 'token-2' },
      }),
    );
    await eventually(
      () =>
        lines.some((line) => line.includes('"token-1"')) && lines.some((line) => line.includes('"token-2"')),
      10_000,
      'the lines of both requests',
    );
    await app.close();
    const urlOf = (id: string) =>
      (JSON.parse(lines.find((line) => line.includes(`"${id}"`)) ?? '{}') as { req?: { url?: string } }).req
        ?.url;
    expect(urlOf('token-1')).toBe('/api/things/7?access_token=[redacted]&q=x');
    expect(urlOf('token-2')).toBe('/api/things/8?q=y&access_token=[redacted]');
    expect(lines.join('')).not.toContain('sekrit');
  });
});

describe('the request lines of one connection', () => {
  it("write each request's own host and client address, and the connection's port", async () => {
    const lines: string[] = [];
    const things = procedures('things', {
      getThing: procedure()
        .input(z.object({ id: z.string() }))
        .query(({ input }) => ({ id: input.id })),
    });
    const app = createApp({
      trustProxy: true,
      logger: { stream: { write: (line) => lines.push(line) } },
    }).mount([things]);
    const url = new URL(
      await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false }),
    );
    // One keep-alive connection, as a proxy in front sends many clients' requests.
    const requests = [
      { id: 'peer-1', host: 'one.example', client: '203.0.113.1' },
      { id: 'peer-2', host: 'one.example', client: '203.0.113.1' },
      { id: 'peer-3', host: 'two.example', client: '203.0.113.1' },
      { id: 'peer-4', host: 'two.example', client: '203.0.113.2' },
    ];
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(url.port), '127.0.0.1');
      let answered = 0;
      const send = () => {
        const { id, host, client } = requests[answered] as (typeof requests)[number];
        socket.write(
          `GET /api/things/${id} HTTP/1.1\r\nHost: ${host}\r\nX-Forwarded-For: ${client}\r\nX-Request-Id: ${id}\r\n\r\n`,
        );
      };
      socket.on('connect', send);
      socket.on('data', (chunk: Buffer) => {
        const statuses = chunk.toString().match(/HTTP\/1\.1 \d{3} /g) ?? [];
        if (statuses.some((status) => status !== 'HTTP/1.1 200 '))
          reject(new Error(`answered ${statuses.join()}`));
        // The next request once the last one's answer began: a chunk without one sends nothing.
        answered += statuses.length;
        if (statuses.length === 0) return;
        if (answered < requests.length) send();
        else socket.end(resolve);
      });
      socket.on('error', reject);
    });
    await eventually(() => lines.some((line) => line.includes('"peer-4"')), 10_000, 'the line of peer-4');
    await app.close();
    const logged = requests.map(({ id }) => {
      const line = lines.find((each) => each.includes(`"reqId":"${id}"`)) ?? '{}';
      return (JSON.parse(line) as { req?: { host: string; remoteAddress: string; remotePort: number } }).req;
    });
    expect(logged.map((req) => [req?.host, req?.remoteAddress])).toEqual(
      requests.map(({ host, client }) => [host, client]),
    );
    // One connection: one client port in every line.
    expect(logged.every((req) => typeof req?.remotePort === 'number')).toBe(true);
    expect(new Set(logged.map((req) => req?.remotePort)).size).toBe(1);
  });
});

/** The fields of Node's request line, in its order. */
const nodeLineKeys = ['level', 'time', 'pid', 'hostname', 'reqId', 'req', 'res', 'responseTime', 'msg'];

/** The line of the request `reqId` names: Node's fields, in Node's order, with `req` as given. */
function expectNodeLine(lines: string[], reqId: string, req: Record<string, string>): void {
  const line = lines
    .map((each) => JSON.parse(each) as Record<string, unknown>)
    .find((each) => each.reqId === reqId);
  expect(Object.keys(line ?? {})).toEqual(nodeLineKeys);
  expect(line).toMatchObject({
    level: 30,
    msg: 'request completed',
    req,
    res: { statusCode: 200 },
    responseTime: expect.any(Number),
  });
}

describe('the request line of app.fetch', () => {
  it('has the fields and order of the Node line, the client address from the runtime included', async () => {
    const { app, lines } = thingsLoggingTo();
    const request = new Request('http://api.example/api/things/7?q=%22', {
      headers: { 'x-request-id': 'fetch-7' },
    });
    await (await app.fetch(request, { ip: '203.0.113.7' })).text();
    await app.close();
    expectNodeLine(lines, 'fetch-7', {
      method: 'GET',
      url: '/api/things/7?q=%22',
      host: 'api.example',
      remoteAddress: '203.0.113.7',
    });
  });
});

describe('the request line of the node:http server (proceedjs/node)', () => {
  it("is Node's line, with the fields and order of the Fastify adapter's", async () => {
    const { app, lines } = thingsLoggingTo(createAppWithoutFastify);
    const origin = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
    const ids = ['node-1', 'node-2', 'node-3'];
    await Promise.all(
      ids.map(async (id) =>
        (await fetch(`${origin}/api/things/7`, { headers: { 'x-request-id': id } })).text(),
      ),
    );
    await eventually(
      () => lines.filter((line) => line.includes('"node-')).length === 3,
      5_000,
      'the three request lines',
    );
    await app.close();
    expectNodeLine(lines, 'node-1', {
      method: 'GET',
      url: '/api/things/7',
      host: new URL(origin).host,
      remoteAddress: '127.0.0.1',
    });
  });
});

describe('the app logger on Node', () => {
  const collect = () => {
    const lines: string[] = [];
    return { lines, stream: { write: (line: string) => lines.push(line) } };
  };
  const parsed = (lines: string[]) => lines.map((line) => JSON.parse(line) as Record<string, unknown>);

  it('adds no listener to an answer above info beyond those of an app that logs nothing', async () => {
    const counts = async (logger: false | { level: string; stream: { write(line: string): void } }) => {
      const app = createApp({ logger });
      let seen: number[] = [];
      app.server.get('/listeners', (_request, reply) => {
        seen = ['finish', 'close', 'error'].map((event) => reply.raw.listenerCount(event));
        return 'ok';
      });
      const url = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
      await (await fetch(`${url}/listeners`)).text();
      await app.close();
      return seen;
    };
    const silent = await counts(false);
    // Both have the one listener of an answer written after its end (below), and only that.
    expect(await counts({ level: 'warn', stream: collect().stream })).toEqual(silent);
  });

  it('times the request line itself, and logs an answer written after its end without crashing', async () => {
    const { lines, stream } = collect();
    const app = createApp({ logger: { level: 'info', stream } });
    app.server.get('/slow', async () => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      return 'ok';
    });
    app.server.get('/late-write', (request, reply) => {
      reply.hijack();
      reply.raw.end('done');
      reply.raw.write('too late');
      request.log.info('wrote after the end');
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
    await (await fetch(`${url}/slow`, { headers: { 'x-request-id': 'slow-1' } })).text();
    await (await fetch(`${url}/late-write`, { headers: { 'x-request-id': 'late-1' } })).text();
    await eventually(
      () => parsed(lines).some((line) => line.msg === 'request errored'),
      10_000,
      'the "request errored" line',
    );
    await app.close();
    const slow = parsed(lines).find((line) => line.reqId === 'slow-1' && line.msg === 'request completed');
    expect(slow?.responseTime).toBeGreaterThanOrEqual(25);
    const errored = parsed(lines).find((line) => line.msg === 'request errored');
    expect(errored).toMatchObject({
      level: 50,
      reqId: 'late-1',
      err: { code: 'ERR_STREAM_WRITE_AFTER_END' },
      req: { method: 'GET', url: '/late-write' },
    });
  });

  it("writes a route's own lower level, though the app logs above it", async () => {
    const { lines, stream } = collect();
    const app = createApp({ logger: { level: 'info', stream } });
    app.server.get('/deep', { logLevel: 'debug' }, (request) => {
      request.log.debug('a debug line of a debug route');
      return 'ok';
    });
    app.server.get('/shallow', (request) => {
      request.log.debug('a debug line of an info route');
      return 'ok';
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
    await (await fetch(`${url}/deep`)).text();
    await (await fetch(`${url}/shallow`)).text();
    await app.close();
    const messages = parsed(lines).map((line) => line.msg);
    expect(messages).toContain('a debug line of a debug route');
    expect(messages).not.toContain('a debug line of an info route');
  });

  it("writes a request's line at the route's own level: none for a silent route, one for a debug route of a warn app", async () => {
    const completed = async (level: string, routeLevel: string) => {
      const { lines, stream } = collect();
      const app = createApp({ logger: { level, stream } });
      app.server.get('/health', { logLevel: routeLevel as 'info' }, () => 'ok');
      // A route that always logs, asked after: once its line is there, the first one's would be.
      app.server.get('/after', { logLevel: 'trace' }, () => 'ok');
      const url = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
      await (await fetch(`${url}/health`)).text();
      await (await fetch(`${url}/after`)).text();
      const completedAt = (path: string) =>
        parsed(lines).filter(
          (line) =>
            line.msg === 'request completed' && (line.req as { url?: string } | undefined)?.url === path,
        ).length;
      await eventually(() => completedAt('/after') === 1, 10_000, 'the line of /after');
      await app.close();
      return completedAt('/health');
    };
    expect(await completed('info', 'silent')).toBe(0);
    expect(await completed('info', 'warn')).toBe(0);
    expect(await completed('warn', 'debug')).toBe(1);
    expect(await completed('info', 'info')).toBe(1);
  });

  it('writes "incoming request" wherever debug is on, and only there', async () => {
    const incoming = async (level: string, routeLevel?: string) => {
      const { lines, stream } = collect();
      const app = createApp({ logger: { level, stream } });
      app.server.get(
        '/seen',
        routeLevel === undefined ? {} : { logLevel: routeLevel as 'debug' },
        () => 'ok',
      );
      const url = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
      await (await fetch(`${url}/seen`)).text();
      await app.close();
      return parsed(lines).filter((line) => line.msg === 'incoming request').length;
    };
    expect(await incoming('debug')).toBe(1);
    expect(await incoming('info', 'debug')).toBe(1);
    expect(await incoming('info')).toBe(0);
  });

  it('writes "incoming request" through a child logger of a factory that cannot say its level', async () => {
    const debugLines: unknown[][] = [];
    const app = createApp({ logger: { level: 'info', stream: { write: () => undefined } } });
    app.server.setChildLoggerFactory((parent) => {
      const bare = {
        fatal: () => undefined,
        error: () => undefined,
        warn: () => undefined,
        info: () => undefined,
        trace: () => undefined,
        debug: (...args: unknown[]) => debugLines.push(args),
        child: () => bare,
        level: parent.level,
        silent: () => undefined,
      };
      return bare;
    });
    app.server.get('/bare', () => 'ok');
    const url = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
    await (await fetch(`${url}/bare`)).text();
    await app.close();
    expect(debugLines.map((args) => args[1])).toEqual(['incoming request']);
  });
});

describe('what Fastify checked and passed when it held the logger', () => {
  it("refuses a route's or a plugin's log level the logger does not have, when the route is added", async () => {
    const app = createApp({ logger: { level: 'info', stream: { write: () => undefined } } });
    expect(() => app.server.get('/bad', { logLevel: 'verbose' as never }, () => 'ok')).toThrow(
      /Log level for 'GET:\/bad' route must be a valid logger level/,
    );
    const other = createApp({ logger: { level: 'info', stream: { write: () => undefined } } });
    void other.server.register(
      async (plugin) => {
        plugin.get('/in-plugin', () => 'ok');
      },
      { logLevel: 'loud' as never },
    );
    await expect(other.server.ready()).rejects.toThrow(/valid logger level/);
    await app.close();
  });

  it("hands a child logger factory of the app's the app's logger as the parent", async () => {
    const lines: string[] = [];
    const app = createApp({ logger: { level: 'info', stream: { write: (line) => lines.push(line) } } });
    app.server.setChildLoggerFactory((parent, bindings, options) =>
      parent.child({ ...bindings, tenant: 'acme' }, options),
    );
    app.server.get('/tenant', (request) => {
      request.log.info('from the factory of the app');
      return 'ok';
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
    await (await fetch(`${url}/tenant`)).text();
    await app.close();
    const line = lines
      .map((each) => JSON.parse(each) as Record<string, unknown>)
      .find((each) => each.msg === 'from the factory of the app');
    expect(line).toMatchObject({ tenant: 'acme', level: 30 });
  });

  it('survives an answer written after its end in an app that logs nothing', async () => {
    const app = createApp({ logger: false });
    let finished: Promise<void> = Promise.resolve();
    app.server.get('/late-write', (_request, reply) => {
      reply.hijack();
      // The 'error' of the late write comes on the next tick, before the answer's 'close'.
      finished = new Promise((resolve) => reply.raw.once('close', () => setImmediate(resolve)));
      reply.raw.end('done');
      reply.raw.write('too late');
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
    expect(await (await fetch(`${url}/late-write`)).text()).toBe('done');
    await finished;
    await app.close();
  });
});

describe('ctx.request.log', () => {
  it("writes a handler's line with the request's id, on the server, through app.fetch and in a tool call", async () => {
    const lines: Record<string, unknown>[] = [];
    const app = createApp({
      logger: { level: 'info', stream: { write: (line: string) => lines.push(JSON.parse(line)) } },
    }).mount([
      procedures('mail', {
        createMail: procedure()
          .input(z.object({ to: z.string() }))
          .mutation(({ input, ctx }) => {
            ctx.request.log.info({ to: input.to }, 'mail queued');
            return { id: '1' };
          }),
      }),
    ]);
    await app.register(mcpPlugin, { collections: ['mail'] });
    const origin = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
    const post = (id: string, body: object, path = '/api/mail') => ({
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-request-id': id,
      },
      body: JSON.stringify(body),
      path,
    });
    const overSocket = post('over-socket', { to: 'ada' });
    await (await fetch(`${origin}${overSocket.path}`, overSocket)).text();
    const inProcess = post('in-process', { to: 'grace' });
    await (await app.fetch(new Request(`http://api.example${inProcess.path}`, inProcess))).text();
    const tool = post(
      'tool-call',
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'createMail', arguments: { to: 'alan' } },
      },
      '/mcp',
    );
    await (await app.fetch(new Request(`http://localhost${tool.path}`, tool), { ip: '127.0.0.1' })).text();
    await app.close();
    const queued = lines.filter((line) => line.msg === 'mail queued').map(({ reqId, to }) => ({ reqId, to }));
    expect(queued).toEqual([
      { reqId: 'over-socket', to: 'ada' },
      { reqId: 'in-process', to: 'grace' },
      { reqId: 'tool-call', to: 'alan' },
    ]);
  });
});

describe("an app route's request.log", () => {
  it("writes the route's lines, and a failed health check's, with the request's id", async () => {
    const lines: Record<string, unknown>[] = [];
    const app = createApp({
      logger: { level: 'info', stream: { write: (line: string) => lines.push(JSON.parse(line)) } },
      health: {
        check: () => {
          throw new Error('database unreachable');
        },
      },
    }).mount([]);
    app.route('POST', '/hooks/payment', (request) => {
      request.log.info({ event: 'paid' }, 'webhook received');
      return { status: 204 };
    });
    const origin = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
    const hook = await fetch(`${origin}/hooks/payment`, {
      method: 'POST',
      headers: { 'x-request-id': 'hook-1' },
    });
    expect(hook.status).toBe(204);
    const probe = await fetch(`${origin}/api/health`, { headers: { 'x-request-id': 'probe-1' } });
    expect(probe.status).toBe(503);
    const inProcess = await app.fetch(
      new Request('http://api.example/api/health', { headers: { 'x-request-id': 'probe-2' } }),
    );
    expect(inProcess.status).toBe(503);
    await app.close();
    expect(lines.filter((line) => line.msg === 'webhook received').map(({ reqId }) => reqId)).toEqual([
      'hook-1',
    ]);
    expect(lines.filter((line) => line.msg === 'Health check failed').map(({ reqId }) => reqId)).toEqual([
      'probe-1',
      'probe-2',
    ]);
  });
});

describe('a request Node refuses before any route', () => {
  it('has its line, with the X-Request-Id its answer carried', async () => {
    const lines: Record<string, unknown>[] = [];
    const app = createApp({
      logger: { level: 'info', stream: { write: (line: string) => lines.push(JSON.parse(line)) } },
    }).mount([]);
    const origin = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
    const { port } = new URL(origin);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1');
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString('latin1');
      });
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      socket.write('GET / HTTP/1.1\r\nHost: localhost\r\nBad Header: x\r\n\r\n');
    });
    await app.close();
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    const id = /\r\nX-Request-Id: ([^\r]+)\r\n/.exec(answer)?.[1];
    expect(id).toMatch(/\S/);
    expect(lines.find((line) => line.reqId === id)).toMatchObject({
      level: 30,
      remoteAddress: '127.0.0.1',
      res: { statusCode: 400 },
      reason: expect.stringMatching(/^HPE_/),
      msg: 'request refused: The request is not valid HTTP',
    });
  });
});
