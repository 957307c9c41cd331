/**
 * WebSockets on Node's server, over real sockets: what only the Node adapter decides (the frame
 * limit `ws` holds, invalid UTF-8) and the app's socket limit. The rules every runtime shares are
 * in the conformance suite (src/http/conformance.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { z } from 'zod';
import { procedure, procedures } from '../core/procedure.js';
import { webSocket } from '../core/sockets.js';
import { createApp } from './create-app.js';

const app = createApp({ logger: false, maxSockets: 2 });
app.mount([
  procedures('rooms', {
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
  }),
]);
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

  it('closes with 1007 on a text frame that is not UTF-8', async () => {
    const socket = await opened();
    socket.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
    expect(await socket.closed).toBe(1007);
  });
});
