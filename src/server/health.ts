/** `GET {prefix}/health`: 200 `{"status":"ok"}` while the app's check passes, 503 otherwise. */
import type { FastifyInstance } from 'fastify';
import { ProceedError } from '../core/errors.js';
import { jsonHeaders } from './procedure-route.js';

type MaybePromise<T> = T | Promise<T>;

export interface HealthOptions {
  /** Throws or returns false when the app cannot serve (say, the database is unreachable). */
  check?: () => MaybePromise<boolean | undefined>;
}

export function registerHealth(server: FastifyInstance, prefix: string, options: HealthOptions = {}): void {
  const { check } = options;
  server.get(`${prefix}/health`, async (_request, reply) => {
    let healthy = true;
    try {
      healthy = check === undefined || (await check()) !== false;
    } catch (error) {
      server.log.warn({ err: error }, 'Health check failed');
      healthy = false;
    }
    if (!healthy) throw new ProceedError('UNAVAILABLE', 'The service is not ready');
    reply.headers(jsonHeaders);
    return '{"status":"ok"}';
  });
}
