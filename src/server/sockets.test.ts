/**
 * WebSockets on Node's server, over real sockets: what only the Node adapter decides (the frame
 * limit `ws` holds, invalid UTF-8, handshakes that stall) and the app's socket limit. The rules
 * every runtime shares are in the conformance suite (src/http/conformance.test.ts).
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { z } from 'zod';
import { procedure, procedures } from '../core/procedure.js';
import { webSocket } from '../core/sockets.js';
import { createApp } from './create-app.js';

const rooms = () =>
  procedures('rooms', {
    // A handler that never takes its messages: what a client floods it with waits, up to maxQueued.
    stuckRoom: procedure()
      .rest({ method: 'GET', path: '/rooms/stuck' })
      .output(webSocket({ receive: z.object({ n: z.number() }), send: z.object({}), maxQueued: 100 }))
      .query(
        ({ signal }) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve())),
      ),
    echoRoom: procedure()
      .rest({ method: 'GET', path: '/rooms/echo' })
      .output(
        webSocket({
          receive: z.object({ text: z.string() }),
          send: z.object({ text: z.string() }),
          maxMessageSize: 1024,
        }),
      )
      .query(async function* ({ messages }) {
        for await (const message of messages) yield message;
      }),
    slowRoom: procedure()
      .rest({ method: 'GET', path: '/rooms/slow' })
      .query(async () => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        return { slow: true };
      }),
    greetRoom: procedure()
      .rest({ method: 'POST', path: '/rooms/greetings' })
      .input(z.object({ name: z.string() }))
      .mutation(({ input }) => ({ greeting: `hello ${input.name}` })),
  });
const app = createApp({ logger: false, maxSockets: 2 });
app.mount([rooms()]);
let origin = '';
beforeAll(async () => {
  origin = (await app.listen({ port: 0, handleSignals: false, logRoutes: false })).replace(/^http/, 'ws');
});
afterAll(() => app.close());

/** Opens the echo socket; resolves once open, or with the status that refused it. */
function open(): Promise<{ ws: WebSocket; closed: Promise<number> } | number> {
  const ws = new WebSocket(`${origin}/api/rooms/echo`);
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, closed }));
    ws.once('unexpected-response', (_request, response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    ws.once('error', reject);
  });
}

async function opened() {
  const socket = await open();
  if (typeof socket === 'number') throw new Error(`refused with ${socket}`);
  return socket;
}

describe('WebSockets on Node', () => {
  /** A raw connection to the app: what it received, and a wait for a text to appear `count` times in it. */
  function rawConnection() {
    const { hostname, port } = new URL(origin.replace(/^ws/, 'http'));
    const socket = connect(Number(port), hostname);
    let text = '';
    let wake: () => void = () => undefined;
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      wake();
    });
    const seen = (pattern: RegExp, count: number) =>
      new Promise<void>((resolve, reject) => {
        socket.once('error', reject);
        const timer = setTimeout(
          () => reject(new Error(`${pattern} not seen ${count} times in: ${text}`)),
          5000,
        );
        wake = () => {
          if ((text.match(new RegExp(pattern, 'g')) ?? []).length < count) return;
          clearTimeout(timer);
          resolve();
        };
        wake();
      });
    return { socket, hostname, seen, text: () => text };
  }
  const greeting = /\{"greeting":"[^"]*"\}/;
  const greet = (hostname: string, name: string, upgrade = '') => {
    const body = JSON.stringify({ name });
    return `POST /api/rooms/greetings HTTP/1.1\r\nHost: ${hostname}\r\n${upgrade}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  };
  // As `curl --http2` asks over plain HTTP.
  const h2c =
    'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n';

  it('serves an upgrade to anything but a WebSocket (h2c, or a POST) as the plain request it is, body and all, and the next one on its connection', async () => {
    const { socket, hostname, seen, text } = rawConnection();
    socket.write(greet(hostname, 'h2c', h2c));
    await seen(greeting, 1);
    socket.write(greet(hostname, 'websocket', 'Connection: Upgrade\r\nUpgrade: websocket\r\n'));
    await seen(greeting, 2);
    socket.write(greet(hostname, 'next'));
    await seen(greeting, 3);
    socket.destroy();
    expect(text().match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 200']);
    for (const name of ['h2c', 'websocket', 'next']) expect(text()).toContain(`{"greeting":"hello ${name}"}`);
  });

  it('answers an upgrade pipelined behind a request still being answered after that answer, in order', async () => {
    const slow = (hostname: string) => `GET /api/rooms/slow HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`;
    const plain = rawConnection();
    plain.socket.write(slow(plain.hostname) + greet(plain.hostname, 'behind', h2c));
    await plain.seen(greeting, 1);
    plain.socket.destroy();
    expect(plain.text().indexOf('{"slow":true}')).toBeGreaterThan(0);
    expect(plain.text().indexOf('{"slow":true}')).toBeLessThan(plain.text().indexOf('hello behind'));
    // A WebSocket handshake behind it: the slow answer, then the 101, and the server lives on.
    const handshake = rawConnection();
    handshake.socket.write(
      `${slow(handshake.hostname)}GET /api/rooms/echo HTTP/1.1\r\nHost: ${handshake.hostname}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
    );
    await handshake.seen(/HTTP\/1\.1 101/, 1);
    handshake.socket.destroy();
    expect(handshake.text().indexOf('{"slow":true}')).toBeLessThan(handshake.text().indexOf('HTTP/1.1 101'));
    const socket = await opened();
    socket.ws.close();
    await socket.closed;
  });

  it('refuses a handshake past maxSockets with 503 before the upgrade, and takes one again once a socket closes', async () => {
    const first = await opened();
    const second = await opened();
    expect(await open()).toBe(503);
    first.ws.close();
    await first.closed;
    // The server counts the socket closed once its own side of the close is done.
    let third = await open();
    for (let tries = 0; third === 503 && tries < 40; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      third = await open();
    }
    if (typeof third === 'number') throw new Error(`refused with ${third}`);
    second.ws.close();
    third.ws.close();
    await Promise.all([second.closed, third.closed]);
  });

  it('closes with 1009 on a frame over four times the message limit, unread', async () => {
    const socket = await opened();
    socket.ws.send(JSON.stringify({ text: 'x'.repeat(70 * 1024) }));
    expect(await socket.closed).toBe(1009);
  });

  it('closes with 1008 a client that floods a handler with small messages, past maxQueued', async () => {
    const ws = new WebSocket(`${origin}/api/rooms/stuck`);
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
    );
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    for (let n = 0; n < 5000 && ws.readyState === WebSocket.OPEN; n++) ws.send(`{"n":${n}}`);
    expect(await closed).toEqual({ code: 1008, reason: 'messages arrive faster than they are handled' });
  });

  it('closes with 1007 on a text frame that is not UTF-8', async () => {
    const socket = await opened();
    socket.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
    expect(await socket.closed).toBe(1007);
  });
});

describe('handshakes that stall', () => {
  /** A connection that sent a handshake's first lines and never ends its headers. */
  function stalled(port: number, trickle: boolean) {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', () => undefined);
    socket.write('GET /api/rooms/echo HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n');
    // One more header line every 50 ms: sending keeps no stalled handshake alive.
    const timer = trickle ? setInterval(() => socket.write(`X-Slow-${Date.now()}: 1\r\n`), 50) : undefined;
    const closed = new Promise<string>((resolve) =>
      socket.on('close', () => {
        clearInterval(timer);
        resolve(text);
      }),
    );
    return { closed };
  }

  it('cuts 500 with 408 after timeouts.headers, trickling or silent, while a socket opens and echoes beside them', async () => {
    const slow = createApp({ logger: false, timeouts: { headers: 1500, request: 600_000 } });
    slow.mount([rooms()]);
    const address = new URL(await slow.listen({ port: 0, handleSignals: false, logRoutes: false }));
    try {
      const started = Date.now();
      const held = Array.from({ length: 500 }, (_, index) => stalled(Number(address.port), index % 10 === 0));
      const ws = new WebSocket(`ws://127.0.0.1:${address.port}/api/rooms/echo`);
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
      const echoed = new Promise<string>((resolve) => ws.once('message', (data) => resolve(String(data))));
      ws.send('{"text":"beside"}');
      expect(await echoed).toBe('{"text":"beside"}');
      const answers = await Promise.all(held.map(({ closed }) => closed));
      expect(answers.filter((text) => !text.startsWith('HTTP/1.1 408 '))).toEqual([]);
      // Within the headers timeout and the server's check interval (docs/deployment.md, "Timeouts").
      expect(Date.now() - started).toBeLessThan(15_000);
      ws.close();
    } finally {
      await slow.close();
    }
  });
});

describe('observers of a Node app', () => {
  it('are told of a handshake as the 101 it was answered with (the hijacked reply runs no onResponse hook)', async () => {
    const answers: { method: string; status: number }[] = [];
    const observed = createApp({ logger: false });
    observed.observe(({ method, status }) => answers.push({ method, status }));
    observed.mount([rooms()]);
    const address = await observed.listen({ port: 0, handleSignals: false, logRoutes: false });
    try {
      const ws = new WebSocket(`${address.replace(/^http/, 'ws')}/api/rooms/echo`);
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
      expect(answers).toEqual([{ method: 'GET', status: 101 }]);
      ws.close();
    } finally {
      await observed.close();
    }
  });
});
