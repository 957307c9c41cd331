/**
 * What the server answers outside a procedure's own work, over real sockets: HTTP it cannot
 * parse, headers over the limit, clients too slow to send (timeouts), and the phases of a
 * shutdown (drain, close). Every error is problem+json (docs/errors.md, docs/deployment.md).
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import WebSocket from 'ws';
import { z } from 'zod';
import { eventually } from '../../test/processes.js';
import { download, fileAt } from '../core/files.js';
import { guard } from '../core/guards.js';
import { procedure, procedures } from '../core/procedure.js';
import type { BaseContext } from '../core/request-context.js';
import { webSocket } from '../core/sockets.js';
import { rateLimit } from '../core/steps.js';
import type { App, AppOptions } from './app.js';
import { createApp } from './create-app.js';
import { createApp as createAppWithoutFastify } from './create-app-fetch.js';

/** The two Node servers: Fastify (`proceedjs`), and Node's own http module (`proceedjs/node`). */
/** An app of proceedjs served by Fastify: it asks for app.server as it is set up. */
const createAppOnFastify: typeof createApp = (options) => {
  const app = createApp(options);
  void app.server;
  return app;
};
const nodeServers = [
  { server: 'Fastify', create: createAppOnFastify },
  { server: 'node:http (proceedjs/node)', create: createAppWithoutFastify },
];
/** The server the cases of a shared block run on, set before each. */
let make: typeof createApp = createApp;
const onEachServer = (create: typeof createApp) =>
  beforeEach(() => {
    make = create;
  });

const apps: App[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

async function started(options: AppOptions<object> = {}, slow = gate()) {
  const things = procedures('things', {
    listThings: procedure().query(() => [{ id: 1 }]),
    // One call a minute: a second is a 429, unless the app is closing (then a 503 first).
    countThing: procedure()
      .rest({ method: 'POST', path: '/things/count' })
      .use(rateLimit({ name: 'count', max: 1, window: 60_000 }))
      .mutation(() => ({ counted: true })),
    createThing: procedure()
      .input(z.object({ name: z.string() }).partial())
      .mutation(() => ({ id: 2 })),
    slowThing: procedure()
      .rest({ method: 'GET', path: '/things/slow' })
      .query(async () => {
        await slow.opened;
        return { done: true };
      }),
  });
  const app = make({ logger: false, ...options }).mount([things]);
  apps.push(app);
  const address = new URL(await app.listen({ port: 0, handleSignals: false, logRoutes: false }));
  return { app, port: Number(address.port), slow };
}

/** A raw connection: what it received so far, and when the server closed it. */
class RawConnection {
  text = '';
  isClosed = false;
  readonly socket: Socket;
  readonly closed: Promise<void>;

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.setEncoding('utf8');
    this.socket.on('data', (chunk: string) => {
      this.text += chunk;
    });
    this.socket.on('error', () => undefined);
    this.closed = new Promise((resolve) =>
      this.socket.on('close', () => {
        this.isClosed = true;
        resolve();
      }),
    );
  }

  /** Resolves once what the connection received contains `text`. */
  received(text: string): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (!this.text.includes(text)) return;
        this.socket.off('data', check);
        resolve();
      };
      this.socket.on('data', check);
      check();
    });
  }

  send(text: string): Promise<void> {
    return new Promise((resolve) => this.socket.write(text, () => resolve()));
  }
}

interface Parsed {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Splits the responses in what a connection received (Content-Length framing only). */
function responses(text: string): Parsed[] {
  const found: Parsed[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    const [statusLine = '', ...lines] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(
      lines.map((line) => [
        line.slice(0, line.indexOf(':')).toLowerCase(),
        line.slice(line.indexOf(':') + 1).trim(),
      ]),
    );
    const length = Number(headers['content-length'] ?? 0);
    const body = rest.slice(end + 4, end + 4 + length);
    found.push({ status: Number(statusLine.split(' ')[1]), headers, body });
    rest = rest.slice(end + 4 + length);
  }
  return found;
}

function expectProblemAnswer(answer: Parsed | undefined, status: number, code: string): void {
  expect(answer?.status).toBe(status);
  expect(answer?.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  const body = JSON.parse(answer?.body ?? '{}') as Record<string, unknown>;
  expect(body).toMatchObject({
    status,
    code,
    type: `urn:proceed:problem:${code.toLowerCase().replaceAll('_', '-')}`,
  });
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
}

describe.each(nodeServers)('errors before any route runs are problem+json, on $server', ({ create }) => {
  onEachServer(create);
  it('answers a URL over the header limit with 431 HEADERS_TOO_LARGE and closes', async () => {
    const { port } = await started();
    const connection = new RawConnection(port);
    await connection.send(`GET /api/things?q=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: a\r\n\r\n`);
    await connection.closed;
    const [answer] = responses(connection.text);
    expectProblemAnswer(answer, 431, 'HEADERS_TOO_LARGE');
    expect(answer?.headers.connection).toBe('close');
    expect(answer?.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers malformed HTTP with 400 BAD_REQUEST', async () => {
    const { port } = await started();
    const connection = new RawConnection(port);
    await connection.send('NOT HTTP AT ALL\r\n\r\n');
    await connection.closed;
    expectProblemAnswer(responses(connection.text)[0], 400, 'BAD_REQUEST');
  });

  it('answers an HTTP/1.1 request without Host with a problem, then closes; serves HTTP/1.0 without one, and ignores an Expect it cannot meet', async () => {
    const { port } = await started();
    const hostless = new RawConnection(port);
    await hostless.send('GET /api/things HTTP/1.1\r\n\r\n');
    await hostless.closed;
    const [noHost] = responses(hostless.text);
    expectProblemAnswer(noHost, 400, 'BAD_REQUEST');
    expect(JSON.parse(noHost?.body ?? '{}').detail).toContain('Host');
    expect(noHost?.headers.connection).toBe('close');
    // HTTP/1.0 has no Host to require.
    const old = new RawConnection(port);
    await old.send('GET /api/things HTTP/1.0\r\n\r\n');
    await old.closed;
    expect(responses(old.text.replace(/^HTTP\/1\.0 /, 'HTTP/1.1 '))[0]?.status).toBe(200);
    const expecting = new RawConnection(port);
    await expecting.send(
      'POST /api/things HTTP/1.1\r\nHost: a\r\nExpect: weird\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
    );
    await expecting.closed;
    // An expectation it cannot meet is ignored, as on every other runtime: the request is served.
    expect(responses(expecting.text)[0]?.status).toBe(201);
  });

  it('refuses a transfer coding other than chunked with 400 and closes: the body would reach the route still coded', async () => {
    const { port } = await started();
    for (const coding of ['gzip, chunked', 'foo, chunked']) {
      const connection = new RawConnection(port);
      await connection.send(
        `POST /api/things HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nTransfer-Encoding: ${coding}\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
      );
      await connection.closed;
      const [refused] = responses(connection.text);
      expectProblemAnswer(refused, 400, 'BAD_REQUEST');
      expect(JSON.parse(refused?.body ?? '{}').detail).toContain(`Transfer-Encoding: ${coding}`);
    }
    // Chunked alone is the framing every client uses for a body of unknown length.
    const chunked = new RawConnection(port);
    await chunked.send(
      'POST /api/things HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
    );
    await chunked.closed;
    expect(responses(chunked.text)[0]?.status).toBe(201);
  });

  it('answers CONNECT, which no route serves, with 405 and closes (Node dropped it without a byte)', async () => {
    const { port } = await started();
    for (const target of ['/api/things', `127.0.0.1:${port}`]) {
      const connection = new RawConnection(port);
      await connection.send(`CONNECT ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
      await connection.closed;
      const [refused] = responses(connection.text);
      expectProblemAnswer(refused, 405, 'METHOD_NOT_ALLOWED');
      expect(refused?.headers.allow).toBe('GET, HEAD, POST, PUT, PATCH, DELETE');
    }
    // A client that resets the connection at once: the socket Node handed over has no error
    // listener of Node's, and an error there would have ended the process.
    for (let attempt = 0; attempt < 5; attempt++) {
      const reset = connect(port, '127.0.0.1');
      reset.on('error', () => undefined);
      await new Promise<void>((resolve) => reset.once('connect', () => resolve()));
      reset.write(`CONNECT /api/things HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      reset.resetAndDestroy();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    const after = new RawConnection(port);
    await after.send('GET /api/things HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
    await after.closed;
    expect(responses(after.text)[0]?.status).toBe(200);
  });

  it('cuts headers that stall with 408 REQUEST_TIMEOUT after timeouts.headers', async () => {
    // The request timeout is far off: only the headers timeout can end this one (a hang fails
    // the test by its own timeout).
    const { port } = await started({ timeouts: { headers: 300, request: 600_000 } });
    const connection = new RawConnection(port);
    await connection.send('GET /api/things HTTP/1.1\r\nHost: a\r\n');
    await connection.closed;
    expectProblemAnswer(responses(connection.text)[0], 408, 'REQUEST_TIMEOUT');
  });

  it('cuts a body that never finishes with 408 after timeouts.request', async () => {
    const { port } = await started({ timeouts: { headers: 300, request: 600 } });
    const connection = new RawConnection(port);
    await connection.send(
      'POST /api/things HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"na',
    );
    await connection.closed;
    expectProblemAnswer(responses(connection.text)[0], 408, 'REQUEST_TIMEOUT');
  });

  it('keeps serving new clients beside 2,000 connections whose headers stall, and cuts them all', async () => {
    const { port } = await started({ timeouts: { headers: 3000, request: 6000 } });
    const slow = Array.from({ length: 2000 }, () => new RawConnection(port));
    await Promise.all(slow.map((connection) => connection.send('GET /api/things HTTP/1.1\r\nHost: a\r\n')));
    // A new client is served while every stalled connection is still held: it did not wait for them.
    const served = await fetch(`http://127.0.0.1:${port}/api/things`);
    expect(served.status).toBe(200);
    expect(slow.filter((connection) => connection.isClosed)).toHaveLength(0);
    await Promise.all(slow.map((connection) => connection.closed));
    // Then each was answered 408 and closed by the server.
    expect(slow.filter((connection) => !connection.text.startsWith('HTTP/1.1 408 '))).toHaveLength(0);
  });

  it('refuses a Host no URL can hold with a 400, routes an HTTP/1.0 request without one and an absolute-form target; OPTIONS * is a 404', async () => {
    // With the request log on: it names the request's host.
    const lines: string[] = [];
    const { port } = await started({
      logger: { level: 'info', stream: { write: (line) => lines.push(line) } },
    });
    const answered = async (head: string) => {
      const connection = new RawConnection(port);
      await connection.send(`${head}\r\nConnection: close\r\n\r\n`);
      await connection.closed;
      return responses(connection.text)[0];
    };
    // RFC 9112, section 3.2: a server MUST refuse these (one moved the path on Deno).
    for (const host of ['a b', '1.2.3.4.5', 'a:99999', '[1.2.3.4]', 'evil.example/api/other?', 'a, b']) {
      const answer = await answered(`GET /api/things HTTP/1.1\r\nHost: ${host}`);
      expect({ host, status: answer?.status }).toEqual({ host, status: 400 });
      expect(answer?.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(JSON.parse(answer?.body ?? '')).toMatchObject({ code: 'BAD_REQUEST' });
    }
    for (const head of [
      'GET /api/things HTTP/1.0',
      'GET /api/things HTTP/1.1\r\nHost: ',
      'GET http://api.example/api/things HTTP/1.1\r\nHost: api.example',
    ]) {
      const answer = await answered(head);
      expect(answer?.status).toBe(200);
      expect(JSON.parse(answer?.body ?? '')).toEqual([{ id: 1 }]);
    }
    const star = await answered('OPTIONS * HTTP/1.1\r\nHost: a');
    expect(star?.status).toBe(404);
    expect(star?.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(lines.filter((line) => line.includes('"level":50'))).toEqual([]);
  });

  it('answers 413 to a chunked body past the limit, reads on to its bound, then closes the connection', async () => {
    const { port } = await started({ bodyLimit: 1024 });
    const connection = new RawConnection(port);
    connection.socket.on('error', () => undefined);
    await connection.send(
      'POST /api/things HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
    );
    // 64 KiB chunks, 12 MiB in all: past the 10 MiB a refused body is read on for.
    const chunk = `10000\r\n${'x'.repeat(0x10000)}\r\n`;
    for (let sent = 0; sent < 192 && !connection.isClosed; sent++)
      await Promise.race([connection.send(chunk), connection.closed]);
    await connection.closed;
    const [answer, another] = responses(connection.text);
    expect(answer?.status).toBe(413);
    expect(another).toBeUndefined();
  });

  it('refuses impossible timeouts at creation', () => {
    expect(() => make({ timeouts: { headers: 0 } })).toThrow(/timeouts.headers must be/);
    expect(() => make({ timeouts: { headers: 5000, request: 1000 } })).toThrow(
      /must not be longer than timeouts.request/,
    );
    expect(() => make({ drainDelay: -1 })).toThrow(/drainDelay must be/);
  });
});

describe.each(nodeServers)('the connection limit, on $server', ({ create }) => {
  onEachServer(create);
  /** An app whose create counts its runs: a request shed or refused must never run it. */
  async function counting(maxConnections: number) {
    let creates = 0;
    let waiting = 0;
    let onWaiting: () => void = () => undefined;
    const slow = gate();
    const things = procedures('things', {
      listThings: procedure().query(() => [{ id: 1 }]),
      createThing: procedure().mutation(() => {
        creates++;
        return { id: 2 };
      }),
      slowThing: procedure()
        .rest({ method: 'GET', path: '/things/slow' })
        .query(async () => {
          waiting++;
          onWaiting();
          await slow.opened;
          return { done: true };
        }),
    });
    const app = make({ logger: false, maxConnections }).mount([things]);
    apps.push(app);
    const address = new URL(await app.listen({ port: 0, handleSignals: false, logRoutes: false }));
    /** Resolves once `count` requests wait at the gate. */
    const waitingFor = (count: number) =>
      new Promise<void>((resolve) => {
        onWaiting = () => {
          if (waiting >= count) resolve();
        };
        onWaiting();
      });
    return { port: Number(address.port), slow, creates: () => creates, waiting: waitingFor };
  }

  const slowBody =
    'POST /api/things HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"na';

  it('sheds the connection that waited longest on its client, serves the newcomer, and runs nothing shed', async () => {
    const { port, creates } = await counting(20);
    const stalled = Array.from({ length: 20 }, () => new RawConnection(port));
    for (const connection of stalled) await connection.send(slowBody);
    // Each new client (kept open, so the server stays at its limit) takes the place of the
    // oldest stalled one: it is served at once.
    const served: RawConnection[] = [];
    for (let index = 0; index < 3; index++) {
      const client = new RawConnection(port);
      served.push(client);
      await client.send('GET /api/things HTTP/1.1\r\nHost: a\r\n\r\n');
      await stalled[index]?.closed;
      await client.received('\r\n\r\n');
      expect(responses(client.text)[0]?.status).toBe(200);
    }
    for (const client of served) client.socket.destroy();
    // The oldest three were shed, in order; the rest still wait for their bodies.
    expect(stalled.map((connection) => connection.isClosed)).toEqual(
      Array.from({ length: 20 }, (_, index) => index < 3),
    );
    for (const connection of stalled.slice(3)) connection.socket.destroy();
    expect(creates()).toBe(0);
  });

  it('answers a newcomer 503 when every connection has a request at work, and never runs its request', async () => {
    const { port, slow, creates, waiting } = await counting(3);
    const busy = Array.from({ length: 3 }, () => new RawConnection(port));
    for (const connection of busy) await connection.send('GET /api/things/slow HTTP/1.1\r\nHost: a\r\n\r\n');
    // Until the server holds all three requests: their handlers wait at the gate.
    await waiting(3);
    const refused = new RawConnection(port);
    await refused.send(
      'POST /api/things HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    );
    await refused.closed;
    const [answer] = responses(refused.text);
    expectProblemAnswer(answer, 503, 'UNAVAILABLE');
    expect(answer?.headers['retry-after']).toBe('1');
    expect(answer?.headers.connection).toBe('close');
    slow.open();
    for (const connection of busy) {
      await connection.received('"done":true');
      connection.socket.destroy();
    }
    expect(creates()).toBe(0);
  });

  it('counts a WebSocket and a file being sent against the limit, as each holds a descriptor', async () => {
    const largeFile = join(mkdtempSync(join(tmpdir(), 'proceed-limit-')), 'large.bin');
    writeFileSync(largeFile, new Uint8Array(16 * 1024 * 1024));
    onTestFinished(() => rmSync(dirname(largeFile), { recursive: true, force: true }));
    let sending = 0;
    const held = procedures('held', {
      heldSocket: procedure()
        .rest({ method: 'GET', path: '/held/socket' })
        .output(webSocket({ receive: z.string(), send: z.string() }))
        .query(async function* ({ messages }) {
          for await (const message of messages) yield message;
        }),
      heldFile: procedure()
        .rest({ method: 'GET', path: '/held/file' })
        .output(download())
        .query(() => {
          sending++;
          return fileAt(largeFile, { type: 'application/octet-stream' });
        }),
    });
    const app = make({ logger: false, maxConnections: 3 }).mount([held]);
    apps.push(app);
    const { port } = new URL(await app.listen({ port: 0, handleSignals: false, logRoutes: false }));
    const socket = new WebSocket(`ws://127.0.0.1:${port}/api/held/socket`);
    await once(socket, 'open');
    // A download its client does not read: its connection and its file, two descriptors.
    const stalled = new RawConnection(Number(port));
    await stalled.send('GET /api/held/file HTTP/1.1\r\nHost: a\r\n\r\n');
    await expect.poll(() => sending).toBe(1);
    stalled.socket.pause();
    const refused = new RawConnection(Number(port));
    await refused.send('GET /api/held/file HTTP/1.1\r\nHost: a\r\n\r\n');
    await refused.received('\r\n\r\n');
    expect(refused.text.slice(0, 12)).toBe('HTTP/1.1 503');
    await refused.closed;
    expectProblemAnswer(responses(refused.text)[0], 503, 'UNAVAILABLE');
    expect(sending).toBe(1);
    // The socket closed and the download gone, there is room again.
    socket.close();
    stalled.socket.destroy();
    await expect
      .poll(async () => (await fetch(`http://127.0.0.1:${port}/api/held/file`, { method: 'HEAD' })).status)
      .toBe(200);
  });

  it('stops counting a file once its answer ends, even when its client left before it was made', async () => {
    const largeFile = join(mkdtempSync(join(tmpdir(), 'proceed-limit-')), 'large.bin');
    writeFileSync(largeFile, new Uint8Array(1024 * 1024));
    onTestFinished(() => rmSync(dirname(largeFile), { recursive: true, force: true }));
    let started = 0;
    let made = 0;
    const slow = procedures('slow', {
      slowFile: procedure()
        .rest({ method: 'GET', path: '/slow/file' })
        .output(download())
        .query(async () => {
          started++;
          await new Promise((resolve) => setTimeout(resolve, 150));
          made++;
          return fileAt(largeFile, { type: 'application/octet-stream' });
        }),
    });
    const app = make({ logger: false, maxConnections: 3 }).mount([slow]);
    apps.push(app);
    const { port } = new URL(await app.listen({ port: 0, handleSignals: false, logRoutes: false }));
    for (let client = 0; client < 4; client++) {
      const leaving = new RawConnection(Number(port));
      await leaving.send('GET /api/slow/file HTTP/1.1\r\nHost: a\r\n\r\n');
      // Gone while its handler runs: the answer is made after the client left.
      await expect.poll(() => started, { timeout: 5000 }).toBe(client + 1);
      leaving.socket.destroy();
    }
    await expect.poll(() => made, { timeout: 5000 }).toBe(4);
    const after = await fetch(`http://127.0.0.1:${port}/api/slow/file`, { method: 'HEAD' });
    expect(after.status).toBe(200);
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => make({ maxConnections: 0 })).toThrow(/maxConnections must be a positive integer/);
    expect(() => make({ maxConnections: 1.5 })).toThrow(/maxConnections must be a positive integer/);
    expect(() => make({ maxSockets: 0 })).toThrow(
      'createApp: maxSockets must be a whole number of 1 or more (got 0)',
    );
    expect(() => make({ maxSocketsPerClient: 2.5 })).toThrow(
      'createApp: maxSocketsPerClient must be a whole number of 1 or more (got 2.5)',
    );
  });
});

describe.each(nodeServers)('draining, on $server', ({ create }) => {
  onEachServer(create);
  it('drains: readiness 503 at once, liveness and routes still served (Connection: close), then closes', async () => {
    const { app, port } = await started({ drainDelay: 800 });
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/api/health`)).status).toBe(200);
    const shutdown = app.shutdown();
    expect(app.phase).toBe('draining');
    const readiness = await fetch(`${base}/api/health`);
    expect(readiness.status).toBe(503);
    expect(readiness.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    expect(readiness.headers.get('retry-after')).toBe('1');
    expect(await readiness.json()).toMatchObject({
      code: 'UNAVAILABLE',
      detail: 'The service is shutting down',
    });
    expect((await fetch(`${base}/api/health/live`)).status).toBe(200);
    const served = await fetch(`${base}/api/things`);
    expect(served.status).toBe(200);
    expect(served.headers.get('connection')).toBe('close');
    await shutdown;
    expect(app.phase).toBe('closing');
    await expect(fetch(`${base}/api/health/live`)).rejects.toThrow();
  });

  it('closes the connection of an answer that was at work when draining began, not at the close', async () => {
    // A drain long enough that a busy machine answers well within it.
    const { app, port, slow } = await started({ drainDelay: 3000 });
    const inFlight = app.countRequestsInFlight();
    const connection = new RawConnection(port);
    await connection.send('GET /api/things/slow HTTP/1.1\r\nHost: a\r\n\r\n');
    await eventually(() => inFlight() >= 1, 10_000, 'the request to arrive');
    const shutdown = app.shutdown();
    slow.open();
    await connection.closed;
    // Before the drain is up.
    expect(app.phase).toBe('draining');
    const [answer] = responses(connection.text);
    expect(answer?.status).toBe(200);
    expect(answer?.headers.connection).toBe('close');
    await shutdown;
  });
});

describe.each(nodeServers)('shutdown, on $server', ({ create }) => {
  onEachServer(create);
  /** Resolves once the server has handed `count` requests to the app. */
  const arrivals = (app: App, count: number) => {
    const inFlight = app.countRequestsInFlight();
    return () => eventually(() => inFlight() >= count, 10_000, 'the request to arrive');
  };

  it('serves a request whose body is still arriving when closing begins', async () => {
    const { app, port } = await started({ drainDelay: 0 });
    const arrived = arrivals(app, 1);
    const connection = new RawConnection(port);
    await connection.send(
      'POST /api/things HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{"name"',
    );
    await arrived();
    // Closing begins at once, before the rest of the body is sent.
    const closing = app.close();
    expect(app.phase).toBe('closing');
    await connection.send(':"x"}');
    await closing;
    // Served, then its connection closed as the server stops: the close waited for it.
    await connection.closed;
    const [answer] = responses(connection.text);
    expect(answer?.status).toBe(201);
  });

  it('refuses a request that arrives while closing before its rate limit is counted, as app.fetch does', async () => {
    const { app, port, slow } = await started({ drainDelay: 0 });
    await fetch(`http://127.0.0.1:${port}/api/things/count`, { method: 'POST' });
    const first = arrivals(app, 1);
    const connection = new RawConnection(port);
    await connection.send('GET /api/things/slow HTTP/1.1\r\nHost: a\r\n\r\n');
    await first();
    const closing = app.close();
    // Behind the request in flight: a limited route past its limit, then a malformed body.
    await connection.send('POST /api/things/count HTTP/1.1\r\nHost: a\r\n\r\n');
    slow.open();
    await closing;
    await connection.closed;
    const [finished, limited] = responses(connection.text);
    expect(finished?.status).toBe(200);
    expectProblemAnswer(limited, 503, 'UNAVAILABLE');
    expect(limited?.headers['x-ratelimit-limit']).toBeUndefined();
    const viaFetch = createApp({ logger: false }).mount([
      procedures('things', {
        createThing: procedure()
          .input(z.object({ name: z.string() }).partial())
          .mutation(() => ({ id: 2 })),
      }),
    ]);
    await viaFetch.ready();
    const closingFetch = viaFetch.close();
    const malformed = await viaFetch.fetch(
      new Request('http://api.example/api/things', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"name":',
      }),
    );
    expect(malformed.status).toBe(503);
    await closingFetch;
  });

  it('refuses a malformed body that arrives while closing with a 503, not the 400 its body would get', async () => {
    const { app, port, slow } = await started({ drainDelay: 0 });
    const first = arrivals(app, 1);
    const connection = new RawConnection(port);
    await connection.send('GET /api/things/slow HTTP/1.1\r\nHost: a\r\n\r\n');
    await first();
    const closing = app.close();
    await connection.send(
      'POST /api/things HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n{"name":',
    );
    slow.open();
    await closing;
    await connection.closed;
    const [finished, refused] = responses(connection.text);
    expect(finished?.status).toBe(200);
    expectProblemAnswer(refused, 503, 'UNAVAILABLE');
  });

  // Fastify's server tells when it accepted the connection; the node:http one is watched the same way (Lifecycle.watch).
  it.runIf(create === createAppOnFastify)(
    "does not wait for a connection that never sent a byte (a client's spare connection)",
    async () => {
      // Node counts a fresh connection as busy: without ending it, close would wait out
      // shutdownTimeout, which is longer than the test may take.
      const { app, port } = await started({ drainDelay: 0, shutdownTimeout: 600_000 });
      const accepted = once(app.server.server, 'connection');
      const spare = new RawConnection(port);
      await accepted;
      await app.close();
      await spare.closed;
      expect(spare.text).toBe('');
    },
  );

  it('finishes a request in flight and answers one that arrives while closing with a 503 problem', async () => {
    const { app, port, slow } = await started({ drainDelay: 0 });
    const first = arrivals(app, 1);
    const connection = new RawConnection(port);
    await connection.send('GET /api/things/slow HTTP/1.1\r\nHost: a\r\n\r\n');
    await first();
    const closing = app.close();
    // The same connection stays open while its request runs; a second request arrives on it.
    const second = arrivals(app, 2);
    await connection.send('GET /api/things HTTP/1.1\r\nHost: a\r\n\r\n');
    await second();
    slow.open();
    await closing;
    await connection.closed;
    const [finished, refused] = responses(connection.text);
    expect(finished?.status).toBe(200);
    expect(JSON.parse(finished?.body ?? '{}')).toEqual({ done: true });
    expectProblemAnswer(refused, 503, 'UNAVAILABLE');
    expect(refused?.headers['retry-after']).toBe('1');
    expect(refused?.headers.connection).toBe('close');
  });
});

describe.each(nodeServers)('Expect: 100-continue, on $server', ({ create }) => {
  onEachServer(create);
  /** A raw upload from `x-allow: yes` only (a guard, which runs before an upload is read), up to 1 MiB. */
  async function served() {
    const ran: number[] = [];
    const allowed = guard({
      name: 'allowed',
      check: (ctx: BaseContext) => ctx.request.header('x-allow') === 'yes',
    });
    const files = procedures('files', {
      createFile: procedure()
        .guard(allowed)
        .input(z.file())
        .uploads({ fileSize: 1024 * 1024 })
        .mutation(({ input }) => {
          ran.push(input.size);
          return { size: input.size };
        }),
    });
    const app = make({ logger: false }).mount([files]);
    apps.push(app);
    const address = new URL(await app.listen({ port: 0, handleSignals: false, logRoutes: false }));
    return { port: Number(address.port), ran };
  }
  const head = (headers: string, length: number) =>
    `POST /api/files HTTP/1.1\r\nHost: a\r\nContent-Type: application/octet-stream\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n${headers}\r\n`;

  it('sends 100 only once the route reads the body, then its answer', async () => {
    const { port, ran } = await served();
    const client = new RawConnection(port);
    await client.send(head('x-allow: yes\r\n', 5));
    await client.received('HTTP/1.1 100 Continue\r\n\r\n');
    await client.send('hello');
    await client.received('{"size":5}');
    expect(ran).toEqual([5]);
    client.socket.destroy();
  });

  it('reads on a body refused midway once its 100 was sent, and keeps the connection', async () => {
    const { port, ran } = await served();
    const client = new RawConnection(port);
    // Chunked: no length to refuse it by before it is read.
    await client.send(
      'POST /api/files HTTP/1.1\r\nHost: a\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\nx-allow: yes\r\n\r\n',
    );
    await client.received('HTTP/1.1 100 Continue\r\n\r\n');
    const chunk = `10000\r\n${'x'.repeat(0x10000)}\r\n`;
    for (let sent = 0; sent < 32; sent++) await client.send(chunk);
    await client.send('0\r\n\r\n');
    await client.received('"code":"PAYLOAD_TOO_LARGE"');
    const [refused] = responses(client.text.slice('HTTP/1.1 100 Continue\r\n\r\n'.length));
    expectProblemAnswer(refused, 413, 'PAYLOAD_TOO_LARGE');
    expect(refused?.headers.connection).toBe('keep-alive');
    expect(client.isClosed).toBe(false);
    expect(ran).toEqual([]);
    client.socket.destroy();
  });

  it('answers a refusal before the body without a 100, and closes: the client never sends it', async () => {
    const { port, ran } = await served();
    const refused = new RawConnection(port);
    await refused.send(head('', 512 * 1024));
    await refused.closed;
    expect(refused.text).not.toContain('100 Continue');
    expectProblemAnswer(responses(refused.text)[0], 401, 'UNAUTHENTICATED');

    const tooLarge = new RawConnection(port);
    await tooLarge.send(head('x-allow: yes\r\n', 5 * 1024 * 1024));
    await tooLarge.closed;
    expect(tooLarge.text).not.toContain('100 Continue');
    expectProblemAnswer(responses(tooLarge.text)[0], 413, 'PAYLOAD_TOO_LARGE');
    expect(ran).toEqual([]);
  });
});
