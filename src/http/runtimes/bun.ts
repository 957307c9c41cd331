/** Bun (docs/deployment.md, "Fetch runtimes"): `app.listen` serves app.fetch with `Bun.serve`. */
import { ProceedError } from '../../core/errors.js';
import { completedHandshake } from '../handshake.js';
import type { SocketSession } from '../sockets.js';
import { type NativeServe, type Runtime, type SocketUpgrade, withNodeCode } from './common.js';
import { openedFile } from './node.js';

interface BunServer {
  readonly port: number;
  stop(closeActiveConnections?: boolean): Promise<void> | void;
  upgrade?(request: Request, options: { data: BunSocketData; headers: [string, string][] }): boolean;
}

interface BunSocketData {
  readonly session: SocketSession;
}

/** Bun's server-side WebSocket. */
interface BunSocket {
  readonly data: BunSocketData;
  send(text: string): number;
  cork(write: () => void): void;
  getBufferedAmount(): number;
  close(code?: number, reason?: string): void;
  terminate(): void;
  ping(): number;
}

/**
 * What Bun calls for every socket of the server (`Bun.serve`'s `websocket`). Bun reads at most
 * `maxPayloadLength` of a frame (past it, 1009); pings are the session's.
 */
export const bunSocketHandlers = {
  open(ws: BunSocket): void {
    // Bun writes each send outside its own callbacks at once, a system call per message: what a
    // handler sends in one turn is held and written in one corked batch after it (the same
    // batches Bun makes inside its callbacks), counted as buffered meanwhile.
    let held: string[] = [];
    let heldBytes = 0;
    let scheduled = false;
    const write = () => {
      scheduled = false;
      const batch = held;
      held = [];
      heldBytes = 0;
      if (batch.length === 1) ws.send(batch[0] as string);
      else if (batch.length > 1)
        ws.cork(() => {
          for (const text of batch) ws.send(text);
        });
      // Bun tells a drain only of what it held: a send waiting on the batch goes on here.
      ws.data.session.drained();
    };
    ws.data.session.open({
      send: (text) => {
        held.push(text);
        heldBytes += text.length;
        if (!scheduled) {
          scheduled = true;
          setImmediate(write);
        }
      },
      buffered: () => ws.getBufferedAmount() + heldBytes,
      close: (code, reason) => {
        write();
        ws.close(code, reason);
      },
      terminate: () => ws.terminate(),
      ping: () => void ws.ping(),
      tellsDrain: true,
    });
  },
  message(ws: BunSocket, message: string | Uint8Array): void {
    if (typeof message === 'string') ws.data.session.received(message, false);
    else ws.data.session.received(message, true);
  },
  pong(ws: BunSocket): void {
    ws.data.session.pong();
  },
  drain(ws: BunSocket): void {
    ws.data.session.drained();
  },
  close(ws: BunSocket, code: number): void {
    ws.data.session.ended(code);
  },
  perMessageDeflate: false,
  sendPings: false,
  // The session's pings find clients that are gone; Bun's own timeout is its longest.
  idleTimeout: 960,
  maxPayloadLength: 16 * 1024 * 1024,
};

function upgradeSocket({ request, argument, session, headers }: SocketUpgrade): Response {
  const server = argument as BunServer | undefined;
  if (
    typeof server?.upgrade !== 'function' ||
    !server.upgrade(request as Request, { data: { session }, headers: [...headers] as [string, string][] })
  ) {
    session.ended();
    throw new ProceedError(
      'BAD_REQUEST',
      'The WebSocket handshake could not be completed: serve the app with app.listen(), or pass websocket: app.websocket to Bun.serve (docs/sockets.md)',
    );
  }
  // Bun answers the handshake itself: this answer is not sent.
  return completedHandshake();
}

interface BunGlobal {
  hash: { xxHash64(data: string | Uint8Array): bigint };
  serve(options: {
    port: number;
    hostname: string;
    fetch: (request: Request, server: BunServer) => Promise<Response>;
    websocket: typeof bunSocketHandlers;
    maxRequestBodySize: number;
    idleTimeout: number;
    error: (error: unknown) => Response;
  }): BunServer;
}

/** Bun's server, passed beside each request. */
interface BunArgument {
  requestIP?: (request: Request) => { address: string; port?: number } | null;
}

/** Bun's own cap on a request body, which it buffers until the handler reads it. */
const bunBodyCap = 128 * 1024 * 1024;

const serve: NativeServe = async ({ port, host, fetch, bodyLimit, keepAlive, failed }) => {
  const { Bun } = globalThis as unknown as { Bun: BunGlobal };
  let server: BunServer;
  try {
    server = Bun.serve({
      port,
      hostname: host,
      fetch,
      websocket: bunSocketHandlers,
      // The app's limit answers 413 as problem+json; Bun's cap stays for bodies far larger,
      // which it would otherwise hold in memory unread (a 413 of its own answers them).
      maxRequestBodySize: Math.max(bodyLimit, bunBodyCap),
      // Seconds, at most 255: idle keep-alive connections outlive a load balancer's, as on Node.
      idleTimeout: Math.min(255, Math.ceil(keepAlive / 1000)),
      error: failed,
    });
  } catch (error) {
    throw withNodeCode(error);
  }
  return {
    port: server.port,
    stop: async (force) => {
      await server.stop(force);
    },
  };
};

export const bun: Runtime = {
  name: 'Bun',
  peerAddress(request, argument) {
    const server = argument as BunArgument | undefined;
    return typeof server?.requestIP === 'function'
      ? (server.requestIP(request as Request)?.address ?? undefined)
      : undefined;
  },
  peerPort(request, argument) {
    const server = argument as BunArgument | undefined;
    return typeof server?.requestIP === 'function'
      ? (server.requestIP(request as Request)?.port ?? undefined)
      : undefined;
  },
  spoolsToDisk: true,
  diskFile: openedFile,
  compresses: true,
  namesConnections: true,
  readsRefusedBodies: false,
  streamsKeepLength: false,
  listens: true,
  serve,
  hasStandardOutput: true,
  importsTypeScript: true,
  upgradeSocket,
  socketHandlers: bunSocketHandlers,
  sharesRequestObjects: true,
  xxHash64: (data) => (globalThis as unknown as { Bun: BunGlobal }).Bun.hash.xxHash64(data),
};
