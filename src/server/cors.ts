/**
 * CORS on Fastify (docs/cors.md): one `onRequest` hook, for apps that turn CORS on, applying the
 * rules of src/http/cors.ts. A preflight is answered there; any other OPTIONS request goes on to
 * the 404 or 405 problem.
 */
import type { FastifyInstance } from 'fastify';
import type { CorsPolicy } from '../http/cors.js';
import type { MethodIndex } from './not-found.js';

export type { CorsOptions } from '../http/cors.js';

export function registerCors(server: FastifyInstance, policy: CorsPolicy, methods: MethodIndex): void {
  server.addHook('onRequest', async (request, reply) => {
    const { origin } = request.headers;
    // Every answer depends on Origin now: caches must keep them apart.
    const vary = reply.getHeader('vary');
    reply.header('vary', vary === undefined || vary === '' ? 'Origin' : `${String(vary)}, Origin`);
    if (request.method === 'OPTIONS') {
      const path = request.url.split('?', 1)[0] ?? '/';
      const headers = policy.preflight(
        origin,
        request.headers['access-control-request-method'] as string | undefined,
        methods.methodsOf(path),
      );
      if (headers === undefined) return;
      await reply.code(204).headers(headers).send();
      return reply;
    }
    const headers = policy.answerHeaders(origin);
    if (headers !== undefined) reply.headers(headers);
  });
}
