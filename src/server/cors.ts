/**
 * CORS on Fastify (docs/cors.md): one `onRequest` hook, for apps that turn CORS on, applying the
 * rules of src/http/cors.ts. A preflight is answered there; any other OPTIONS request goes on to
 * the 404 or 405 problem.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { CorsPolicy } from '../http/cors.js';
import type { MethodIndex } from './not-found.js';

export type { CorsOptions } from '../http/cors.js';

/** The `Vary` an earlier hook set, if any. */
function varyOf(reply: FastifyReply): string | undefined {
  const vary = reply.getHeader('vary');
  return vary === undefined ? undefined : String(vary);
}

export function registerCors(server: FastifyInstance, policy: CorsPolicy, methods: MethodIndex): void {
  server.addHook('onRequest', async (request, reply) => {
    const { origin } = request.headers;
    if (request.method === 'OPTIONS') {
      const path = request.url.split('?', 1)[0] ?? '/';
      const headers = policy.preflight(
        origin,
        request.headers['access-control-request-method'] as string | undefined,
        methods.methodsOf(path),
      );
      if (headers !== undefined) {
        const { vary } = policy.answerHeaders('OPTIONS', origin, varyOf(reply));
        await reply
          .code(204)
          .headers({ ...headers, vary })
          .send();
        return reply;
      }
    }
    reply.headers(policy.answerHeaders(request.method, origin, varyOf(reply)));
  });
}
