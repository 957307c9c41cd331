/**
 * CORS on the routes added on `app.server` (docs/cors.md): their answers carry the same
 * `Access-Control-*` and `Vary` headers as the app's, from the rules of src/http/cors.ts. The
 * app's own routes and every preflight are the pipeline's.
 */
import type { FastifyInstance, FastifyReply, onRequestAsyncHookHandler } from 'fastify';
import type { CorsPolicy } from '../http/cors.js';
import { pipelineRoute } from './pipeline-route.js';

export type { CorsOptions } from '../http/cors.js';

/** The `Vary` an earlier hook set, if any. */
function varyOf(reply: FastifyReply): string | undefined {
  const vary = reply.getHeader('vary');
  return vary === undefined ? undefined : String(vary);
}

export function corsOnFastifyRoutes(server: FastifyInstance, policy: CorsPolicy): void {
  const answer: onRequestAsyncHookHandler = async (request, reply) => {
    reply.headers(policy.answerHeaders(request.method, request.headers.origin, varyOf(reply)));
  };
  server.addHook('onRoute', (route) => {
    if ((route.config as { [pipelineRoute]?: true } | undefined)?.[pipelineRoute] === true) return;
    route.onRequest = [answer, ...(route.onRequest === undefined ? [] : [route.onRequest].flat())];
  });
}
