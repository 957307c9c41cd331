/**
 * Cross-origin requests from browsers, on `@fastify/cors` (docs/cors.md). Off unless the app
 * names its origins. A preflight is answered only for a route that exists with the method it
 * asks for; any other OPTIONS request gets the usual 404 or 405 problem.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type CorsOptions, checkCorsOptions } from '../config/cors.js';
import type { MethodIndex } from './not-found.js';

export type { CorsOptions } from '../config/cors.js';

/** What a browser may send besides the simple headers: what Proceed reads. */
const allowedHeaders = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'If-Match',
  'If-None-Match',
  'X-Request-Id',
];

/** What a browser script may read of an answer, besides the simple headers. */
const exposedHeaders = [
  'Location',
  'ETag',
  'Idempotency-Replayed',
  'Retry-After',
  'WWW-Authenticate',
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
];

/**
 * Registers `@fastify/cors` on the server. Whether a request gets CORS headers is decided per
 * request: an allowed `Origin`, and for a preflight a route that takes the method it asks for.
 */
export function registerCors(server: FastifyInstance, options: CorsOptions, methods: MethodIndex): void {
  const allowed = checkCorsOptions(options);
  const originOf = (request: FastifyRequest): string | false => {
    const origin = request.headers.origin;
    if (origin === undefined || (allowed !== undefined && !allowed.has(origin))) return false;
    if (request.method !== 'OPTIONS') return origin;
    // A preflight names the method it is for; a plain OPTIONS, or one for a route that does not
    // take that method, falls through to the 404/405 problem.
    const asked = request.headers['access-control-request-method'];
    const path = request.url.split('?', 1)[0] ?? '/';
    return typeof asked === 'string' && methods.allows(asked, path) ? origin : false;
  };
  const fixed = {
    allowedHeaders,
    exposedHeaders,
    credentials: options.credentials ?? false,
    maxAge: options.maxAge ?? 600,
    // Only requests that pass `originOf` reach the preflight answer; the rest get a problem.
    strictPreflight: false,
  };
  // Loaded only by apps that turn CORS on.
  server.register(import('@fastify/cors'), {
    hideOptionsRoute: true,
    delegator: (request, callback) => callback(null, { ...fixed, origin: originOf(request) }),
  });
}
