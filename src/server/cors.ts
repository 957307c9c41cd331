/**
 * CORS on what Fastify answers itself, the routes added on `app.server` and a hook's own answer
 * (docs/cors.md): the same `Access-Control-*` and `Vary` headers as the app's, from the rules of
 * src/http/cors.ts. The app's own routes and every preflight are the pipeline's.
 */
import type { FastifyReply, onRequestAsyncHookHandler } from 'fastify';
import type { CorsPolicy } from '../http/cors.js';

export type { CorsOptions } from '../http/cors.js';

/** The `Vary` an earlier hook set, if any. */
function varyOf(reply: FastifyReply): string | undefined {
  const vary = reply.getHeader('vary');
  return vary === undefined ? undefined : String(vary);
}

/** The `onRequest` hook that gives Fastify's answers the app's CORS headers. */
export function corsOfFastify(policy: CorsPolicy): onRequestAsyncHookHandler {
  return async (request, reply) => {
    reply.headers(policy.answerHeaders(request.method, request.headers.origin, varyOf(reply)));
  };
}
