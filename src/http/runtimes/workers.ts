/**
 * Cloudflare Workers (workerd; docs/deployment.md, "Cloudflare Workers"): requests arrive
 * through `fetch` only; nothing listens, there is no disk, and Cloudflare's edge owns the
 * connections and compresses.
 */
import { followStandardSocket, type Runtime, type SocketUpgrade, standardPeer } from './common.js';

declare const WebSocketPair: new () => { 0: WebSocket; 1: WebSocket };

/** A Worker's socket: a pair, one end returned to the client, the other accepted here. */
function upgradeSocket({ session, headers }: SocketUpgrade): Response {
  const pair = new WebSocketPair();
  const client = pair[0];
  const server = pair[1] as WebSocket & { accept(): void };
  server.accept();
  followStandardSocket(server, session);
  session.open(standardPeer(server, undefined));
  const init = {
    status: 101,
    webSocket: client,
    headers: headers.map(([name, value]): [string, string] => [name, value]),
  };
  return new Response(null, init as ResponseInit);
}

export const workers: Runtime = {
  name: 'Cloudflare Workers',
  // Set by Cloudflare's edge, which a client cannot.
  peerAddress: (request) => request.headers.get('cf-connecting-ip') ?? undefined,
  peerPort: () => undefined,
  spoolsToDisk: false,
  diskFile: () => Promise.reject(new Error('Cloudflare Workers have no disk: uploads stay in memory')),
  compresses: false,
  namesConnections: false,
  readsRefusedBodies: true,
  streamsKeepLength: true,
  listens: false,
  serve: undefined,
  hasStandardOutput: false,
  importsTypeScript: false,
  xxHash64: undefined,
  upgradeSocket,
  socketHandlers: undefined,
  sharesRequestObjects: false,
};
