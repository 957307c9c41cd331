/**
 * The health answers of a prefix, the same on every adapter (docs/deployment.md, "Health
 * probes"):
 * - readiness, `GET {prefix}/health`: 200 `{"status":"ok"}` while the app's check passes and the
 *   app is not shutting down, else 503 `UNAVAILABLE` with `Retry-After` (1 s while shutting
 *   down, as a request to a closing server gets; 5 s when a check fails or does not answer within
 *   its timeout, as for an outage).
 *   With a shared rate-limit store it also reports the store (`checks.rateLimitStore`):
 *   unreachable, the app is `degraded` (still 200) unless it refuses limited routes without it
 *   (then 503, `Retry-After: 5`);
 * - liveness, `GET {prefix}/health/live`: 200 while the process can answer at all.
 */
import { ProceedError } from '../core/errors.js';
import type { RequestLog } from '../core/request-context.js';
import { UnavailableError } from '../core/unavailable.js';
import type { AppRoute } from './app-routes.js';
import { jsonHeaders } from './json.js';
import type { RateLimits } from './rate-limit.js';

type MaybePromise<T> = T | Promise<T>;

export interface HealthOptions {
  /** Throws or returns false when the app cannot serve (say, the database is unreachable). */
  check?: () => MaybePromise<boolean | undefined>;
  /**
   * Milliseconds the check has to answer; past them readiness is 503, as for a failed check (a
   * database that stopped answering holds a query, not the probe). Default 5000.
   */
  timeout?: number;
}

/** What readiness waits for the app's check by default, in ms. */
export const defaultHealthTimeout = 5000;

/** The body of a healthy answer. */
export const healthyBody = '{"status":"ok"}';

export interface Readiness {
  serving: () => boolean;
  rateLimits: RateLimits;
  check: HealthOptions['check'];
  /** ms the check has to answer. */
  timeout: number;
}

const checkTimedOut = Symbol('timed out');

/** The check's answer, or `checkTimedOut` once `timeout` ms have passed without one. */
async function withinTime(check: NonNullable<HealthOptions['check']>, timeout: number) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<typeof checkTimedOut>((resolve) => {
    timer = setTimeout(() => resolve(checkTimedOut), timeout);
  });
  try {
    return await Promise.race([Promise.resolve().then(check), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The readiness body, or a thrown 503 problem. */
export async function readinessBody(
  { serving, rateLimits, check, timeout }: Readiness,
  log: Pick<RequestLog, 'warn'>,
): Promise<string> {
  if (!serving())
    throw new ProceedError('UNAVAILABLE', 'The service is shutting down', {
      headers: { 'retry-after': '1' },
    });
  let healthy = true;
  try {
    const answer = check === undefined ? true : await withinTime(check, timeout);
    if (answer === checkTimedOut) log.warn({ timeout }, 'Health check did not answer in time');
    healthy = answer !== false && answer !== checkTimedOut;
  } catch (error) {
    log.warn({ err: error }, 'Health check failed');
    healthy = false;
  }
  if (!healthy) throw new UnavailableError(undefined, 'The service is not ready');
  if (!rateLimits.shared) return healthyBody;
  // With `allow` an instance without its store still serves everything: ready, but degraded.
  // With `refuse` it does not (docs/deployment.md, "Shared rate limits").
  const store = await rateLimits.storeState();
  if (store !== 'ok' && rateLimits.refusesWithoutStore)
    throw new UnavailableError(undefined, 'The rate-limit store (Redis) is unreachable');
  return JSON.stringify({ status: store === 'ok' ? 'ok' : 'degraded', checks: { rateLimitStore: store } });
}

/** The readiness and liveness routes of a mount prefix, served like any route of the app. */
export function healthRoutes(prefix: string, readiness: Readiness): AppRoute[] {
  return [
    {
      method: 'GET',
      path: `${prefix}/health`,
      // A failed check is logged on the probe's own line, with its request id.
      handler: async (request) => ({
        headers: jsonHeaders,
        body: await readinessBody(readiness, request.log),
      }),
      bodyLimit: undefined,
    },
    {
      method: 'GET',
      path: `${prefix}/health/live`,
      handler: () => ({ headers: jsonHeaders, body: healthyBody }),
      bodyLimit: undefined,
    },
  ];
}
