/**
 * Listening, draining, graceful closing and the SIGTERM/SIGINT handlers of an app's server
 * (docs/deployment.md, "Shutdown"). An app is `serving`, then `draining` (readiness answers 503
 * while every route still serves, so load balancers stop sending), then `closing` (no new
 * connections; requests in flight finish; a request that still arrives gets a 503 problem).
 */
import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { ProceedError, toProblem } from '../core/errors.js';
import { OpenSockets } from '../http/open-sockets.js';
import { rawProblemResponse } from './problems.js';

/** Where an app listens: the interface it was asked for and its port (see `App.onListen`). */
export interface Listening {
  host: string;
  port: number;
}

export interface ListenOptions {
  /** Default 3030. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** On SIGTERM and SIGINT: drain, close gracefully, then exit 0. Default true. */
  handleSignals?: boolean;
  /** Log one line per route before listening. Default true (`--workers` logs them once, not per worker). */
  logRoutes?: boolean;
}

export type Phase = 'serving' | 'draining' | 'closing';

/**
 * How often a Node server looks for requests over their time, on either Node server (Node's default
 * is 30 s, which would let a 10 s headers timeout run to 40 s).
 */
export const timeoutCheckInterval = 1000;

/** A connection's current response, as Node's http server keeps it (null between requests). */
type ServedSocket = Socket & { _httpMessage?: ServerResponse | null };

/**
 * Whether a connection waits on its client rather than on the server: no request yet (its
 * headers still coming, or idle between requests), or a request whose body is still coming and
 * that nothing has answered. Closing it loses no work: no handler has run for it.
 */
function waitsOnClient(socket: ServedSocket): boolean {
  const response = socket._httpMessage;
  if (response === undefined || response === null) return true;
  return !response.headersSent && response.req?.complete === false;
}

/** How many of the oldest connections are looked at for one to shed, at most. */
const shedScanLimit = 1000;

/** The answer to a connection over the limit with nothing to shed: retry shortly. */
const overLimitProblem = () =>
  toProblem(
    new ProceedError('UNAVAILABLE', 'The server is at its connection limit; retry shortly', {
      headers: { 'retry-after': '1' },
    }),
  );

/** Where an app is in its life; read on every request, so a plain field. */
export class Lifecycle {
  phase: Phase = 'serving';
  /** The app's open WebSockets; their limit is set from the app's settings. */
  readonly sockets = new OpenSockets(0);
  /** The app's open event streams: no cap for the instance (`maxConnections` is), one per client. */
  readonly streams = new OpenSockets(Number.POSITIVE_INFINITY, 0, 'event streams');
  readonly #closingListeners = new Set<() => void>();

  /** Sets the limits of the long-lived answers from the app's settings (docs/sockets.md, "Limits"). */
  limit(settings: { maxSockets: number; maxSocketsPerClient: number; maxStreamsPerClient: number }): void {
    this.sockets.max = settings.maxSockets;
    this.sockets.maxPerClient = settings.maxSocketsPerClient;
    this.streams.maxPerClient = settings.maxStreamsPerClient;
  }

  /**
   * Calls `listener` when the app begins closing (at once if it has): open event streams end then
   * (docs/events.md). Returns what removes it, so that a stream that ended leaves nothing behind.
   */
  readonly onClosing = (listener: () => void): (() => void) => {
    if (this.phase === 'closing') {
      listener();
      return () => undefined;
    }
    this.#closingListeners.add(listener);
    return () => this.#closingListeners.delete(listener);
  };

  /** Enters `closing` and tells whoever listens. */
  beginClosing(): void {
    if (this.phase === 'closing') return;
    this.phase = 'closing';
    for (const listener of this.#closingListeners) listener();
    this.#closingListeners.clear();
  }
  /** Open connections, oldest first (a Set keeps insertion order). */
  readonly #connections = new Set<Socket>();
  /** Connections that became WebSockets: each still holds a descriptor, and is never shed. */
  readonly #upgraded = new Set<Duplex>();
  /** Files being sent: each holds a descriptor beside its connection's. */
  #filesOpen = 0;
  #atLimit = false;

  #maxConnections = Number.POSITIVE_INFINITY;

  /** Well under the limit again: the next time it is reached is warned of. */
  #eased(): void {
    if (this.#atLimit && this.#held < this.#maxConnections * 0.9) this.#atLimit = false;
  }

  /** Descriptors the limit counts: connections, WebSockets, and files being sent. */
  get #held(): number {
    return this.#connections.size + this.#upgraded.size + this.#filesOpen;
  }

  /**
   * Follows the server's connections, so that closing can end those that never sent a byte.
   * Node counts a new connection as busy (its headers timeout runs from the connect), so
   * `closeIdleConnections` leaves it open: a client's spare, pre-opened connection would hold
   * the close until `shutdownTimeout`.
   *
   * It also holds the connection limit (docs/deployment.md, "Connection limits"): past it, the
   * process would run out of file descriptors, and then Node's accept drops new clients without
   * an answer while the database pool cannot connect either. A connection over the limit sheds
   * the oldest one that waits on its client (a slow or stalled client, an idle keep-alive); when
   * every connection is busy with a request, the newcomer alone gets a 503 and is closed. Node's
   * own HTTP handling is given only the connections admitted, so no request of a refused one
   * ever reaches a route.
   */
  watch(server: Server, maxConnections: number, log: { warn(message: string): void }): void {
    this.#maxConnections = maxConnections;
    const serveHttp = server.listeners('connection') as Array<(socket: Socket) => void>;
    this.#serveHttp = (socket) => {
      for (const serve of serveHttp) serve.call(server, socket);
    };
    server.removeAllListeners('connection');
    server.on('connection', (socket: Socket) => {
      if (this.#held >= maxConnections && !this.#shedOne()) {
        this.#refuse(socket);
        return;
      }
      if (this.#held + 1 >= maxConnections && !this.#atLimit) {
        this.#atLimit = true;
        log.warn(
          `Connection limit reached (${maxConnections}): shedding the connections that wait longest on their clients`,
        );
      }
      this.#connections.add(socket);
      socket.once('close', () => {
        this.#connections.delete(socket);
        this.#eased();
      });
      for (const serve of serveHttp) serve.call(server, socket);
    });
  }

  #serveHttp: ((socket: Socket) => void) | undefined;

  /**
   * Hands a connection admitted already back to Node's HTTP parsing (an upgrade the app does not
   * take, src/server/sockets.ts): neither counted nor refused again.
   */
  serveAgain(socket: Socket): void {
    if (this.#serveHttp === undefined) throw new Error('serveAgain: the server is not watched');
    this.#serveHttp(socket);
  }

  /** Closes the oldest connection that waits on its client; false when there is none. */
  #shedOne(): boolean {
    let looked = 0;
    for (const socket of this.#connections) {
      if (looked++ >= shedScanLimit) return false;
      if (!waitsOnClient(socket)) continue;
      this.#connections.delete(socket);
      socket.destroy();
      return true;
    }
    return false;
  }

  /**
   * Answers 503 and closes, without HTTP parsing: the client's request is read and dropped. The
   * connection is half-closed first and ended a second later, so that the client reads the answer
   * rather than a reset.
   */
  #refuse(socket: Socket): void {
    socket.on('error', () => undefined);
    socket.resume();
    socket.end(rawProblemResponse(overLimitProblem()));
    setTimeout(() => socket.destroy(), 1000).unref();
  }

  /**
   * Enters `closing` and drops the connections that never sent a byte; the pipeline answers
   * a request that arrives from now on with a 503 (src/http/problems.ts).
   */
  close(): void {
    if (this.phase === 'closing') return;
    this.beginClosing();
    this.dropUnused();
  }

  /** Closes the connections that never sent a byte: nothing is lost, the client opens another, elsewhere. */
  dropUnused(): void {
    for (const socket of this.#connections) if (socket.bytesRead === 0) socket.destroy();
  }

  /**
   * A connection that became a WebSocket: its session keeps it, and it is never shed, but it
   * still counts against the limit until it closes: the limit is one of descriptors, and the
   * sockets' own cap (`maxSockets`) was set apart from it.
   */
  upgraded(connection: Duplex): void {
    this.#connections.delete(connection as Socket);
    this.#upgraded.add(connection);
    connection.once('close', () => {
      this.#upgraded.delete(connection);
      this.#eased();
    });
  }

  /** A file is being sent: it counts against the limit until `release` (docs/deployment.md, "Connection limits"). */
  fileOpened(): () => void {
    this.#filesOpen++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#filesOpen--;
      this.#eased();
    };
  }
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Turns readiness to 503 and keeps serving for `delay` ms. A no-op when draining or closing
 * already.
 */
export async function drain(
  log: { info(message: string): void },
  lifecycle: Lifecycle,
  delay: number,
): Promise<void> {
  if (lifecycle.phase !== 'serving') return;
  lifecycle.phase = 'draining';
  if (delay > 0) {
    log.info(`Draining: readiness answers 503; serving ${delay} ms more before closing`);
    await wait(delay);
  }
}

/**
 * Stops accepting connections and waits for in-flight requests; after `timeout` ms it closes
 * the connections still open. Fastify's `onClose` hooks run last.
 */
export async function closeGracefully(
  server: FastifyInstance,
  lifecycle: Lifecycle,
  timeout: number,
): Promise<void> {
  lifecycle.close();
  const timer = setTimeout(() => {
    server.log.warn(`Requests still running after ${timeout} ms; closing their connections`);
    server.server.closeAllConnections();
  }, timeout);
  timer.unref();
  // A connection whose answer ends now (an event stream told to close, a request that was
  // running) would otherwise stay open, idle, until its keep-alive timeout holds up the close.
  const sweep = setInterval(() => server.server.closeIdleConnections(), 100);
  sweep.unref();
  try {
    await server.close();
  } finally {
    clearTimeout(timer);
    clearInterval(sweep);
  }
}

/** On the first SIGTERM or SIGINT: `shutdown` (drain, then close), then exit 0 (1 when it fails). */
export function exitOnSignals(
  log: { info(message: string): void; error(object: object, message: string): void },
  shutdown: () => Promise<void>,
): void {
  const stop = (signal: NodeJS.Signals) => {
    log.info(`${signal} received: shutting down`);
    shutdown().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'Shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
