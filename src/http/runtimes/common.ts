/**
 * What differs from one runtime to another, in one object per runtime (one file each beside
 * this one), so that no other module asks which runtime it runs on (docs/architecture.md,
 * "Runtimes"). `src/http/runtime.ts` picks the one this process runs on.
 */

import type { PipelineRequest, SocketUpgrade } from '../sent.js';

export type { SocketUpgrade } from '../sent.js';

import type { SocketPeer, SocketSession } from '../sockets.js';

export type FetchHandler = (request: Request, runtime?: unknown) => Promise<Response>;

/** A standard `WebSocket` (Deno's, a Worker's) as a session drives it. */
export function standardPeer(socket: WebSocket, ping: (() => void) | undefined): SocketPeer {
  return {
    send: (text) => socket.send(text),
    buffered: () => socket.bufferedAmount ?? 0,
    close: (code, reason) => socket.close(code, reason),
    // A standard socket has no way to drop its connection unannounced: closed with "going away".
    terminate: () => socket.close(1001, 'no answer to pings'),
    ping,
    tellsDrain: false,
  };
}

/** Hands a standard `WebSocket`'s events to its session. */
export function followStandardSocket(socket: WebSocket, session: SocketSession): void {
  socket.addEventListener('message', (event: MessageEvent) => {
    const { data } = event;
    if (typeof data === 'string') session.received(data, false);
    else session.received(new Uint8Array(data instanceof ArrayBuffer ? data : new ArrayBuffer(0)), true);
  });
  socket.addEventListener('close', (event: CloseEvent) => session.ended(event.code));
  socket.addEventListener('error', () => session.ended());
}

/** A runtime's own server, started: its port, and how to stop it (gracefully, then at once). */
export interface NativeServer {
  readonly port: number;
  /** Stops accepting and waits for the requests in flight; `force` ends them. */
  stop(force: boolean): Promise<void>;
}

export interface NativeServeOptions {
  port: number;
  host: string;
  fetch: FetchHandler;
  /** The app's body limit: the runtime refuses much larger bodies before reading them. */
  bodyLimit: number;
  /** How long an idle keep-alive connection stays open, in ms (the app's `timeouts.keepAlive`). */
  keepAlive: number;
  /** The answer when app.fetch itself fails: a problem+json 500, never the runtime's own page. */
  failed: (error: unknown) => Response;
}

export type NativeServe = (options: NativeServeOptions) => Promise<NativeServer>;

export interface Runtime {
  readonly name: 'Node.js' | 'Bun' | 'Deno' | 'Cloudflare Workers';
  /**
   * The peer's address from what the runtime passes beside a request to a fetch handler (Bun's
   * server, Deno's handler info, the Node request of a bridge), or from what its platform sets;
   * undefined when it says nothing.
   */
  peerAddress(request: PipelineRequest, argument: object | undefined): string | undefined;
  /** The peer's port, for the request line; undefined where the runtime does not tell it. */
  peerPort(request: PipelineRequest, argument: unknown): number | undefined;
  /** Where an upload's large files wait: on disk (a spool per request), or in memory. */
  readonly spoolsToDisk: boolean;
  /** A `File` whose bytes stay on disk at `path`. */
  diskFile(path: string, size: number, name: string, type: string): Promise<File>;
  /** Whether the app compresses its answers; where not, the platform does (Cloudflare's edge). */
  readonly compresses: boolean;
  /** Whether an answer may say `Connection: close`; where not, the platform owns connections. */
  readonly namesConnections: boolean;
  /**
   * Whether a body the app refused is read to its end before the answer, whatever its size: the
   * platform breaks a connection answered mid-body otherwise (workerd).
   */
  readonly readsRefusedBodies: boolean;
  /**
   * Whether a `Response` whose body is a stream keeps the `Content-Length` it was given. Bun
   * drops it and sends the body chunked (Bun's issue 10507): there a file answer is handed over
   * as a `Blob`, which keeps its length (docs/files.md).
   */
  readonly streamsKeepLength: boolean;
  /** Whether the app can open a port (`app.listen`, the metrics listener): Workers listen for it. */
  readonly listens: boolean;
  /** The runtime's own server for `app.listen`, where there is one instead of Node's http module. */
  readonly serve: NativeServe | undefined;
  /** Whether the process has a standard output to log to; where not, logs go through console. */
  readonly hasStandardOutput: boolean;
  /** Whether the runtime imports TypeScript itself (the CLI adds a loader on Node). */
  readonly importsTypeScript: boolean;
  /**
   * The runtime's own xxHash64 (seed 0) of a string's UTF-8 bytes or of bytes, where it has one
   * (Bun): entity tags then need no WebAssembly hasher and no copy of the text into its memory,
   * and are the same as that hasher's (src/http/entity-tags.ts).
   */
  readonly xxHash64: ((data: string | Uint8Array) => bigint) | undefined;
  /**
   * Completes a WebSocket handshake through app.fetch and gives the socket to its session: the
   * answer to return. Undefined on Node, where the app's own server opens sockets (app.listen).
   */
  readonly upgradeSocket: ((upgrade: SocketUpgrade) => Response) | undefined;
  /** What the runtime's server calls for every socket, where it asks for them apart (Bun). */
  readonly socketHandlers: object | undefined;
  /**
   * Whether one request's work may act on what another request opened (a logout closing the
   * user's open sockets at once): not on Workers, where a request's I/O objects are its own.
   */
  readonly sharesRequestObjects: boolean;
}

/** Deno names socket errors (`AddrInUse`); the CLI reads Node's codes (`EADDRINUSE`). */
export function withNodeCode(error: unknown): unknown {
  if (typeof error !== 'object' || error === null) return error;
  const named = error as { name?: string; code?: string };
  const codes: Record<string, string> = {
    AddrInUse: 'EADDRINUSE',
    PermissionDenied: 'EACCES',
    AddrNotAvailable: 'EADDRNOTAVAIL',
  };
  const code = named.name === undefined ? undefined : codes[named.name];
  if (named.code === undefined && code !== undefined) named.code = code;
  return error;
}
