/**
 * The same two sockets written by hand on Bun's own server (`Bun.serve`'s `websocket`): the echo
 * parses and validates with the same schema, the push sends until Bun says it holds too much and
 * goes on when Bun drains.
 */
import { announce } from './announce.js';
import { pushed, Said } from './socket-data.js';

interface Socket {
  data: { path: string };
  send(text: string): number;
}
interface BunServe {
  serve(options: {
    port: number;
    hostname: string;
    fetch(
      request: Request,
      server: { upgrade(request: Request, options: object): boolean },
    ): Response | undefined;
    websocket: object;
  }): { port: number };
}

const text = JSON.stringify(pushed);
/** Sends until Bun reports backpressure (-1) or a drop (0); `drain` calls it again. */
const pushAll = (ws: Socket) => {
  while (ws.send(text) > 0);
};

const { Bun } = globalThis as unknown as { Bun: BunServe };
const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch(request, bun) {
    const path = new URL(request.url).pathname;
    if (bun.upgrade(request, { data: { path } })) return undefined;
    return new Response(null, { status: 426 });
  },
  websocket: {
    perMessageDeflate: false,
    open(ws: Socket) {
      if (ws.data.path === '/api/push') pushAll(ws);
    },
    drain(ws: Socket) {
      if (ws.data.path === '/api/push') pushAll(ws);
    },
    message(ws: Socket, message: string | Uint8Array) {
      if (typeof message !== 'string') return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(message);
      } catch {
        ws.send('{"type":"error"}');
        return;
      }
      const said = Said.safeParse(parsed);
      ws.send(said.success ? JSON.stringify(said.data) : '{"type":"error"}');
    },
  },
});
announce({ address: `http://127.0.0.1:${server.port}/api` });
