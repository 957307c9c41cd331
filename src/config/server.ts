/**
 * The server settings an app reads from the environment when its options leave them out
 * (docs/deployment.md, "Timeouts" and "Shutdown"). Light: no Fastify, so an entry can check them
 * before the app loads.
 */
import { ProceedConfigError } from '../core/errors.js';

/** How long a client may take, in ms. */
export interface ServerTimeouts {
  /** From the connection's first byte to the end of the request headers. Default 10,000. */
  headers: number;
  /** From the first byte to the end of the body. Default 30,000. */
  request: number;
  /** How long an idle keep-alive connection stays open. Default 72,000 (above common load balancers' 60 s). */
  keepAlive: number;
}

export interface ServerSettings {
  timeouts: ServerTimeouts;
  /**
   * After SIGTERM/SIGINT, how long readiness answers 503 while the server still serves, so that
   * load balancers stop sending before it stops accepting. Default 5,000 with
   * `NODE_ENV=production`, else 0.
   */
  drainDelay: number;
}

export const defaultTimeouts: Readonly<ServerTimeouts> = Object.freeze({
  headers: 10_000,
  request: 30_000,
  keepAlive: 72_000,
});

/** The longest delay a Node timer keeps (about 24.8 days); a longer one fires at once. */
const longestTimer = 2 ** 31 - 1;

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
  return settings;
}

/**
 * The settings from the environment, each falling back to its default: `HEADERS_TIMEOUT_MS`,
 * `REQUEST_TIMEOUT_MS`, `KEEP_ALIVE_TIMEOUT_MS`, `SHUTDOWN_DRAIN_MS`. Options an app passes
 * (`createApp({ timeouts, drainDelay })`) win over these.
 *
 * @example
 * serverSettingsFromEnv({ NODE_ENV: 'production' }).drainDelay; // 5000
 */
export function serverSettingsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  options: { timeouts?: Partial<ServerTimeouts>; drainDelay?: number } = {},
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
    },
    drainDelay:
      options.drainDelay ??
      milliseconds('SHUTDOWN_DRAIN_MS', env.SHUTDOWN_DRAIN_MS, 0) ??
      (env.NODE_ENV === 'production' ? 5000 : 0),
  });
}
