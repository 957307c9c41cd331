/**
 * Listening, draining, graceful closing and the SIGTERM/SIGINT handlers of an app's server
 * (docs/deployment.md, "Shutdown"). An app is `serving`, then `draining` (readiness answers 503
 * while every route still serves, so load balancers stop sending), then `closing` (no new
 * connections; requests in flight finish; a request that still arrives gets a 503 problem).
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

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

/** Where an app is in its life; read on every request, so a plain field. */
export class Lifecycle {
  phase: Phase = 'serving';
  readonly #arrivedWhileClosing = new WeakSet<IncomingMessage>();
  readonly #connections = new Set<Socket>();

  /**
   * Follows the server's connections, so that closing can end those that never sent a byte.
   * Node counts a new connection as busy (its headers timeout runs from the connect), so
   * `closeIdleConnections` leaves it open: a client's spare, pre-opened connection would hold
   * the close until `shutdownTimeout`.
   */
  watch(server: Server): void {
    server.on('connection', (socket: Socket) => {
      this.#connections.add(socket);
      socket.once('close', () => this.#connections.delete(socket));
    });
  }

  /**
   * Enters `closing`. From now on the server notes each request that arrives (a listener added
   * only now: serving costs nothing), so that one already under way (its body still coming in)
   * is told from one that came too late.
   */
  close(server: Server): void {
    if (this.phase === 'closing') return;
    this.phase = 'closing';
    server.prependListener('request', (request: IncomingMessage) => this.#arrivedWhileClosing.add(request));
    // Nothing was sent on these, so nothing is lost: the client opens another, elsewhere.
    for (const socket of this.#connections) if (socket.bytesRead === 0) socket.destroy();
  }

  /** Whether this request arrived after closing began. */
  arrivedWhileClosing(request: IncomingMessage): boolean {
    return this.#arrivedWhileClosing.has(request);
  }
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Turns readiness to 503 and keeps serving for `delay` ms. A no-op when draining or closing
 * already.
 */
export async function drain(server: FastifyInstance, lifecycle: Lifecycle, delay: number): Promise<void> {
  if (lifecycle.phase !== 'serving') return;
  lifecycle.phase = 'draining';
  if (delay > 0) {
    server.log.info(`Draining: readiness answers 503; serving ${delay} ms more before closing`);
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
  lifecycle.close(server.server);
  const timer = setTimeout(() => {
    server.log.warn(`Requests still running after ${timeout} ms; closing their connections`);
    server.server.closeAllConnections();
  }, timeout);
  timer.unref();
  try {
    await server.close();
  } finally {
    clearTimeout(timer);
  }
}

/** On the first SIGTERM or SIGINT: `shutdown` (drain, then close), then exit 0 (1 when it fails). */
export function exitOnSignals(server: FastifyInstance, shutdown: () => Promise<void>): void {
  const stop = (signal: NodeJS.Signals) => {
    server.log.info(`${signal} received: shutting down`);
    shutdown().then(
      () => process.exit(0),
      (error: unknown) => {
        server.log.error({ err: error }, 'Shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
