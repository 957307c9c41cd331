/**
 * The same two sockets written by hand on Node with `ws` (what a Node user picks without a
 * framework): the echo parses and validates with the same schema, the push waits while `ws`
 * holds more than the same send buffer.
 */
import { createServer } from 'node:http';
import { type WebSocket, WebSocketServer } from 'ws';
import { announce } from './announce.js';
import { pushed, Said, sendBuffer } from './socket-data.js';

const sockets = new WebSocketServer({ noServer: true, perMessageDeflate: false, clientTracking: false });
const server = createServer((_request, response) => response.writeHead(426).end());

function echo(ws: WebSocket): void {
  ws.on('message', (data, binary) => {
    if (binary) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(String(data));
    } catch {
      ws.send('{"type":"error"}');
      return;
    }
    const said = Said.safeParse(parsed);
    ws.send(said.success ? JSON.stringify(said.data) : '{"type":"error"}');
  });
}

function push(ws: WebSocket): void {
  let open = true;
  ws.on('close', () => {
    open = false;
  });
  const text = JSON.stringify(pushed);
  // As Proceed's session does: at most 4 ms a turn, so the loop never starves the process's
  // other sockets; past the send buffer, a look every millisecond until ws has written it.
  const more = () => {
    const started = performance.now();
    while (open && ws.bufferedAmount <= sendBuffer && performance.now() - started < 4) ws.send(text);
    if (!open) return;
    if (ws.bufferedAmount <= sendBuffer) setImmediate(more);
    else setTimeout(more, 1);
  };
  more();
}

server.on('upgrade', (request, socket, head) => {
  const path = request.url ?? '';
  sockets.handleUpgrade(request, socket, head, (ws) => {
    ws.on('error', () => undefined);
    if (path === '/api/echo') echo(ws);
    else if (path === '/api/push') push(ws);
    else ws.close(1008);
  });
});
server.listen(0, '127.0.0.1', () => {
  const bound = server.address();
  if (bound === null || typeof bound === 'string') throw new Error('no port');
  announce({ address: `http://127.0.0.1:${bound.port}/api` });
});
