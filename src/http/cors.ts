/**
 * Cross-origin requests from browsers (docs/cors.md), the same on every adapter. Off unless the
 * app names its origins. Every answer says `Vary: Origin`; an allowed origin gets
 * `Access-Control-Allow-Origin` (its own value), the exposed headers and, when asked for,
 * `Access-Control-Allow-Credentials`. A preflight is answered (204) only for a path that takes
 * the method it asks for, and names exactly the methods that path takes; any other OPTIONS
 * request gets the usual 404 or 405 problem.
 */
import { type CorsOptions, checkCorsOptions } from '../config/cors.js';

export type { CorsOptions } from '../config/cors.js';

/**
 * What a browser may send besides the simple headers: what Proceed reads (a download's `Range`,
 * `If-Range` and `If-Modified-Since` too: a page on another origin could not resume one; and
 * `Last-Event-ID`, which the typed client sends to resume an event stream: without it every
 * reconnect from another origin failed its preflight, and the stream never came back; and
 * `Mcp-Protocol-Version`, which MCP clients send on every message after `initialize`: without
 * it an agent in a page of an allowed origin connected, then failed its first `tools/list`).
 */
const allowedHeaders =
  'Authorization, Content-Type, Idempotency-Key, If-Match, If-Modified-Since, If-None-Match, If-Range, Last-Event-ID, Mcp-Protocol-Version, Range, X-Request-Id';

/** What a browser script may read of an answer, besides the simple headers (the OpenAPI document says it too). */
export const exposedHeaders = [
  'Accept-Ranges',
  'Content-Disposition',
  'Content-Range',
  'Location',
  'ETag',
  'Idempotency-Replayed',
  'Retry-After',
  'WWW-Authenticate',
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
].join(', ');

type Headers = Record<string, string>;

export class CorsPolicy {
  readonly #allowed: ReadonlySet<string> | undefined;
  readonly #answer: Headers;
  readonly #maxAge: string;

  constructor(options: CorsOptions) {
    this.#allowed = checkCorsOptions(options);
    this.#answer = {
      'access-control-expose-headers': exposedHeaders,
      ...(options.credentials === true ? { 'access-control-allow-credentials': 'true' } : {}),
    };
    this.#maxAge = String(options.maxAge ?? 600);
  }

  #allows(origin: string | null | undefined): origin is string {
    return typeof origin === 'string' && (this.#allowed === undefined || this.#allowed.has(origin));
  }

  /**
   * The headers CORS sets on any answer but a preflight's, to a request of `method` from `origin`
   * whose answer says `vary` so far: `Vary` with `Origin` first (every answer depends on it, so
   * caches keep them apart), and, for an allowed origin, its `Access-Control-*`. An `OPTIONS`
   * that is no preflight is a 404 or 405 problem, without them.
   */
  answerHeaders(method: string, origin: string | null | undefined, vary: string | null | undefined): Headers {
    const headers: Headers = {
      vary: vary === null || vary === undefined || vary === '' ? 'Origin' : `Origin, ${vary}`,
    };
    if (method === 'OPTIONS' || !this.#allows(origin)) return headers;
    return { ...headers, 'access-control-allow-origin': origin, ...this.#answer };
  }

  /**
   * The headers of the 204 to a preflight (an `OPTIONS` from an allowed origin asking for a
   * method `methodsOfPath` holds); undefined when it is none, for the 404 or 405 problem.
   */
  preflight(
    origin: string | null | undefined,
    askedMethod: string | null | undefined,
    methodsOfPath: readonly string[],
  ): Headers | undefined {
    if (!this.#allows(origin) || typeof askedMethod !== 'string' || !methodsOfPath.includes(askedMethod))
      return undefined;
    return {
      'access-control-allow-origin': origin,
      ...this.#answer,
      'access-control-allow-methods': methodsOfPath.join(', '),
      'access-control-allow-headers': allowedHeaders,
      'access-control-max-age': this.#maxAge,
      'content-length': '0',
    };
  }
}
