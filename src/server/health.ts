/**
 * The health routes of a prefix (docs/deployment.md, "Health probes"):
 * - `GET {prefix}/health`, readiness: 200 `{"status":"ok"}` while the app's check passes and the
 *   app is not shutting down, else 503 `UNAVAILABLE`. With a shared rate-limit store it also
 *   reports the store (`checks.rateLimitStore`): unreachable, the app is `degraded` (still 200)
 *   unless it refuses limited routes without it (then 503);
 * - `GET {prefix}/health/live`, liveness: 200 while the process can answer at all.
 */
import type { FastifyInstance } from 'fastify';
import { ProceedError } from '../core/errors.js';
import type { Lifecycle } from './lifecycle.js';
import { jsonHeaders } from './procedure-route.js';
import type { RateLimits } from './rate-limit.js';

type MaybePromise<T> = T | Promise<T>;

export interface HealthOptions {
  /** Throws or returns false when the app cannot serve (say, the database is unreachable). */
  check?: () => MaybePromise<boolean | undefined>;
}

const ok = '{"status":"ok"}';

export function registerHealth(
  server: FastifyInstance,
  prefix: string,
  lifecycle: Lifecycle,
  rateLimits: RateLimits,
  options: HealthOptions = {},
): void {
  const { check } = options;
  server.get(`${prefix}/health`, async (_request, reply) => {
    if (lifecycle.phase !== 'serving') throw new ProceedError('UNAVAILABLE', 'The service is shutting down');
    let healthy = true;
    try {
      healthy = check === undefined || (await check()) !== false;
    } catch (error) {
      server.log.warn({ err: error }, 'Health check failed');
      healthy = false;
    }
    if (!healthy) throw new ProceedError('UNAVAILABLE', 'The service is not ready');
    reply.headers(jsonHeaders);
    if (!rateLimits.shared) return ok;
    // With `allow` an instance without its store still serves everything: ready, but degraded.
    // With `refuse` it does not (docs/deployment.md, "Shared rate limits").
    const store = await rateLimits.storeState();
    if (store !== 'ok' && rateLimits.refusesWithoutStore)
      throw new ProceedError('UNAVAILABLE', 'The rate-limit store (Redis) is unreachable');
    return JSON.stringify({ status: store === 'ok' ? 'ok' : 'degraded', checks: { rateLimitStore: store } });
  });
  server.get(`${prefix}/health/live`, async (_request, reply) => {
    reply.headers(jsonHeaders);
    return ok;
  });
}
