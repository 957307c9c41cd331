/** The health routes of a prefix on Fastify; what they answer is decided in src/http/health.ts. */
import type { FastifyInstance } from 'fastify';
import { type HealthOptions, healthyBody, readinessBody } from '../http/health.js';
import { jsonHeaders } from '../http/procedure-answer.js';
import type { RateLimits } from '../http/rate-limit.js';
import type { Lifecycle } from './lifecycle.js';

export type { HealthOptions } from '../http/health.js';

export function registerHealth(
  server: FastifyInstance,
  prefix: string,
  lifecycle: Lifecycle,
  rateLimits: RateLimits,
  options: HealthOptions = {},
): void {
  const readiness = {
    serving: () => lifecycle.phase === 'serving',
    rateLimits,
    check: options.check,
    log: server.log,
  };
  server.get(`${prefix}/health`, async (_request, reply) => {
    const body = await readinessBody(readiness);
    reply.headers(jsonHeaders);
    return body;
  });
  server.get(`${prefix}/health/live`, async (_request, reply) => {
    reply.headers(jsonHeaders);
    return healthyBody;
  });
}
