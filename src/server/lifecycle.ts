/** Listening, graceful closing and the SIGTERM/SIGINT handlers of an app's server. */
import type { FastifyInstance } from 'fastify';

export interface ListenOptions {
  /** Default 3030. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Close gracefully on SIGTERM and SIGINT, then exit 0. Default true. */
  handleSignals?: boolean;
  /** Log one line per route before listening. Default true (`--workers` logs them once, not per worker). */
  logRoutes?: boolean;
}

/**
 * Stops accepting connections and waits for in-flight requests; after `timeout` ms it closes
 * the connections still open. Fastify's `onClose` hooks run last.
 */
export async function closeGracefully(server: FastifyInstance, timeout: number): Promise<void> {
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

/** On the first SIGTERM or SIGINT: `close`, then exit 0 (1 when closing fails). */
export function exitOnSignals(server: FastifyInstance, close: () => Promise<void>): void {
  const stop = (signal: NodeJS.Signals) => {
    server.log.info(`${signal} received: shutting down`);
    close().then(
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
