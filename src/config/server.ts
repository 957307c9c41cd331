/**
 * The server settings an app reads from the environment when its options leave them out
 * (docs/deployment.md, "Timeouts" and "Shutdown"). Light: no Fastify, so an entry can check them
 * before the app loads.
 */
import { readFileSync } from 'node:fs';
import { ProceedConfigError } from '../core/errors.js';
import { longestTimer } from '../core/options.js';

export { longestTimer };

/** How long a client may take, in ms. */
export interface ServerTimeouts {
  /** From the connection's first byte to the end of the request headers. Default 10,000. */
  headers: number;
  /** From the first byte to the end of the body. Default 30,000. */
  request: number;
  /** How long an idle keep-alive connection stays open. Default 72,000 (above common load balancers' 60 s). */
  keepAlive: number;
  /**
   * How long an answer being sent (a download, an event stream) waits for its client to read on
   * once the connection's buffers are full; then the connection is closed and the file or stream
   * let go. Default 60,000 (nginx's `send_timeout`). On Node.
   */
  send: number;
}

export interface ServerSettings {
  timeouts: ServerTimeouts;
  /**
   * After SIGTERM/SIGINT, how long readiness answers 503 while the server still serves, so that
   * load balancers stop sending before it stops accepting. Default 5,000 with
   * `NODE_ENV=production`, else 0.
   */
  drainDelay: number;
  /**
   * Connections one process holds at most (docs/deployment.md, "Connection limits"). At the
   * limit a new connection sheds the one that has waited longest on its client (headers or body
   * still to come, or idle); when none has, it is answered 503 at once. Default: the process's
   * open-file limit less a reserve for the database, files and logs.
   */
  maxConnections: number;
}

export const defaultTimeouts: Readonly<ServerTimeouts> = Object.freeze({
  headers: 10_000,
  request: 30_000,
  keepAlive: 72_000,
  send: 60_000,
});

/**
 * The process's open-file limit, which Node raises to the hard limit at start-up: read from
 * Linux's `/proc/self/limits`; undefined where there is none (macOS).
 */
export function openFileLimit(
  limits: () => string = () => readFileSync('/proc/self/limits', 'utf8'),
): number | undefined {
  let text: string;
  try {
    text = limits();
  } catch {
    return undefined;
  }
  const soft = /^Max open files\s+(\d+|unlimited)/m.exec(text)?.[1];
  if (soft === undefined) return undefined;
  return soft === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(soft);
}

/**
 * The default connection limit: the open-file limit less a reserve of a tenth (64 to 1,024
 * descriptors) for the database pool, files and logs, so that a flood of connections never
 * leaves the process unable to open anything (accept itself then fails, and Node drops new
 * clients unanswered). 10,000 where the limit cannot be read.
 */
export function defaultMaxConnections(files: number | undefined): number {
  if (files === undefined) return 10_000;
  const reserve = Math.min(1024, Math.max(64, Math.floor(files / 10)));
  return Math.max(1, files - reserve);
}

function count(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = Number(raw);
  if (!/^\s*\d+\s*$/.test(raw) || !Number.isSafeInteger(value) || value < 1) {
    throw new ProceedConfigError(`${name} must be a positive integer (got "${raw}")`);
  }
  return value;
}

function milliseconds(name: string, raw: string | undefined, minimum: number): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < minimum || value > longestTimer) {
    throw new ProceedConfigError(
      `${name} must be an integer number of milliseconds from ${minimum} to ${longestTimer} (got "${raw}")`,
    );
  }
  return value;
}

/**
 * Checks a whole set of settings: positive timeouts, the headers' within the request's.
 * Throws a {@link ProceedConfigError} naming the first bad one.
 */
export function checkServerSettings(settings: ServerSettings): ServerSettings {
  const { timeouts, drainDelay } = settings;
  for (const [name, value] of Object.entries(timeouts)) {
    if (!Number.isInteger(value) || value < 1 || value > longestTimer)
      throw new ProceedConfigError(
        `timeouts.${name} must be an integer number of ms from 1 to ${longestTimer} (got ${value})`,
      );
  }
  if (timeouts.headers > timeouts.request) {
    throw new ProceedConfigError(
      `timeouts.headers (${timeouts.headers} ms) must not be longer than timeouts.request (${timeouts.request} ms)`,
    );
  }
  if (!Number.isInteger(drainDelay) || drainDelay < 0 || drainDelay > longestTimer)
    throw new ProceedConfigError(
      `drainDelay must be an integer number of ms from 0 to ${longestTimer} (got ${drainDelay})`,
    );
  const { maxConnections } = settings;
  if (!Number.isSafeInteger(maxConnections) || maxConnections < 1)
    throw new ProceedConfigError(`maxConnections must be a positive integer (got ${maxConnections})`);
  return settings;
}

/**
 * The settings from the environment, each falling back to its default: `HEADERS_TIMEOUT_MS`,
 * `REQUEST_TIMEOUT_MS`, `KEEP_ALIVE_TIMEOUT_MS`, `SEND_TIMEOUT_MS`, `SHUTDOWN_DRAIN_MS`,
 * `MAX_CONNECTIONS`. Options
 * an app passes (`createApp({ timeouts, drainDelay, maxConnections })`) win over these.
 *
 * @example
 * serverSettingsFromEnv({ NODE_ENV: 'production' }).drainDelay; // 5000
 */
export function serverSettingsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  options: { timeouts?: Partial<ServerTimeouts>; drainDelay?: number; maxConnections?: number } = {},
): ServerSettings {
  return checkServerSettings({
    timeouts: {
      headers:
        options.timeouts?.headers ??
        milliseconds('HEADERS_TIMEOUT_MS', env.HEADERS_TIMEOUT_MS, 1) ??
        defaultTimeouts.headers,
      request:
        options.timeouts?.request ??
        milliseconds('REQUEST_TIMEOUT_MS', env.REQUEST_TIMEOUT_MS, 1) ??
        defaultTimeouts.request,
      keepAlive:
        options.timeouts?.keepAlive ??
        milliseconds('KEEP_ALIVE_TIMEOUT_MS', env.KEEP_ALIVE_TIMEOUT_MS, 1) ??
        defaultTimeouts.keepAlive,
      send:
        options.timeouts?.send ??
        milliseconds('SEND_TIMEOUT_MS', env.SEND_TIMEOUT_MS, 1) ??
        defaultTimeouts.send,
    },
    drainDelay:
      options.drainDelay ??
      milliseconds('SHUTDOWN_DRAIN_MS', env.SHUTDOWN_DRAIN_MS, 0) ??
      (env.NODE_ENV === 'production' ? 5000 : 0),
    maxConnections:
      options.maxConnections ??
      count('MAX_CONNECTIONS', env.MAX_CONNECTIONS) ??
      defaultMaxConnections(openFileLimit()),
  });
}
