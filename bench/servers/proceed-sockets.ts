/**
 * Proceed's WebSocket procedures as its users write them (docs/sockets.md): an echo whose messages
 * are validated and written through their schemas, and a push that sends as fast as `send` lets
 * it. `app.listen` on Node (ws) and on Bun (Bun.serve). No request log.
 */
import { createApp, procedure, procedures, webSocket } from 'proceedjs';
import { z } from 'zod';
import { announce } from './announce.js';
import { Pushed, pushed, Said, sendBuffer } from './socket-data.js';

const app = createApp({ logger: false, maxSockets: 20_000 });
app.mount([
  procedures('sockets', {
    echoSocket: procedure()
      .rest({ method: 'GET', path: '/echo' })
      .output(webSocket({ receive: Said, send: Said }))
      .query(async function* ({ messages }) {
        for await (const said of messages) yield said;
      }),
    pushSocket: procedure()
      .rest({ method: 'GET', path: '/push' })
      .output(webSocket({ receive: z.never(), send: Pushed, sendBuffer }))
      .query(async ({ send, signal }) => {
        while (!signal.aborted) await send(pushed);
      }),
  }),
]);
const address = await app.listen({ port: 0, logRoutes: false });
announce({ address: `${address}/api` });
