/**
 * The headers many responses share, declared once in `components.headers`: the `X-RateLimit-*`
 * headers of a route limited by `rateLimit()` (src/http/rate-limit.ts) and the CORS headers of an
 * app with a CORS policy (src/http/cors.ts). Each is declared, as optional, only where the server
 * sends it: on the route's own answers, never on the HTTP server's own refusals (408 and 431 come
 * before any route runs).
 */
import type { ErrorDefinition } from '../core/errors.js';
import type { CorsFacts } from '../core/route-table.js';
import type { RouteEntry } from '../core/routes.js';
import { exposedHeaders } from '../http/cors.js';
import { problemResponse, problemResponseName } from './problems.js';
import type { OpenApiHeader, OpenApiResponse, Reference } from './types.js';

/** The largest count or limit a rule may hold (`rateLimit()` refuses larger ones). */
const largestCount = Number.MAX_SAFE_INTEGER;
/** The longest wait in seconds: a window of the largest number of ms a rule may hold. */
const longestWait = Math.ceil(Number.MAX_SAFE_INTEGER / 1000);

const rateLimitHeaders: Readonly<Record<string, OpenApiHeader>> = {
  'X-RateLimit-Limit': {
    description: "Requests per window the route's limit lets one client make",
    schema: { type: 'integer', format: 'int64', minimum: 1, maximum: largestCount },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests this client may still make in the current window',
    schema: { type: 'integer', format: 'int64', minimum: 0, maximum: largestCount },
  },
  'X-RateLimit-Reset': {
    description: 'Seconds until the current window ends and the count starts again',
    schema: { type: 'integer', format: 'int64', minimum: 0, maximum: longestWait },
  },
};

/** The `Retry-After` of a 429 from a limit: the window's remaining seconds, at least 1. */
const limitRetryAfter: OpenApiHeader = {
  description: 'Seconds to wait before the window ends and a retry can pass',
  schema: { type: 'integer', format: 'int64', minimum: 1, maximum: longestWait },
};

/**
 * Whether a `rateLimit()` rule counts this route's requests per client IP, so that every answer
 * carries `X-RateLimit-*`. A rule per key writes them on its 429 alone.
 */
export function isRateLimited(route: RouteEntry): boolean {
  return route.definition.rateLimits.some((rule) => rule.key === undefined);
}

/**
 * Whether a problem status can come from the route itself, after its limits and CORS ran: not
 * the HTTP server's 408 and 431, which come before any route. (A 503 may: a database outage.
 * The headers are optional, as a closing server's 503 has none.)
 */
export function answeredByRoute(status: number): boolean {
  return status !== 408 && status !== 431;
}

function corsHeaders(cors: CorsFacts): Record<string, OpenApiHeader> {
  const headers: Record<string, OpenApiHeader> = {
    'Access-Control-Allow-Origin': {
      description:
        cors.origins === '*'
          ? 'The `Origin` of a cross-origin request, sent back: any origin may call the API'
          : 'The `Origin` of a cross-origin request from an allowed origin, sent back; absent for other origins',
      // Any origin is sent back as it came: its length is the client's.
      schema: cors.origins === '*' ? { type: 'string' } : { type: 'string', enum: [...cors.origins] },
    },
    'Access-Control-Expose-Headers': {
      description: 'The headers a browser script may read, with `Access-Control-Allow-Origin`',
      schema: { type: 'string', const: exposedHeaders },
    },
  };
  if (cors.credentials) {
    headers['Access-Control-Allow-Credentials'] = {
      description: 'Browsers may send cookies with cross-origin requests; with `Access-Control-Allow-Origin`',
      schema: { type: 'string', const: 'true' },
    };
  }
  return headers;
}

/** The shared headers of one document: `components.headers` holds the ones some response uses. */
export class SharedHeaders {
  readonly #cors: Record<string, OpenApiHeader>;
  readonly #used: Record<string, OpenApiHeader> = {};

  constructor(cors: CorsFacts | undefined) {
    this.#cors = cors === undefined ? {} : corsHeaders(cors);
  }

  /** The headers used so far, for `components.headers`; undefined when none is. */
  get components(): Record<string, OpenApiHeader> | undefined {
    return Object.keys(this.#used).length === 0 ? undefined : this.#used;
  }

  /**
   * Adds the shared headers of an answer the route gives (`limited`: its limits were counted) to
   * a response, as references, and returns it. Refusals of the HTTP server itself carry none.
   */
  addTo(response: OpenApiResponse, status: number, limited: boolean): OpenApiResponse {
    if (status >= 400 && !answeredByRoute(status)) return response;
    const shared = { ...(limited ? rateLimitHeaders : {}), ...this.#cors };
    if (Object.keys(shared).length === 0) return response;
    const references: Record<string, Reference> = {};
    for (const [name, header] of Object.entries(shared)) {
      this.#used[name] = header;
      references[name] = { $ref: `#/components/headers/${name}` };
    }
    response.headers = { ...response.headers, ...references };
    return response;
  }
}

/**
 * The shared problem responses (`components.responses`) of the statuses routes answer: the plain
 * one for routes without limits, a copy named `…OnLimitedRoute` with the limits' headers (and a
 * 429's `Retry-After`) for rate-limited ones; each with the app's CORS headers.
 */
export function problemComponents(
  statuses: { readonly plain: ReadonlySet<number>; readonly limited: ReadonlySet<number> },
  appCodes: readonly ErrorDefinition[],
  headers: SharedHeaders,
): Record<string, OpenApiResponse> {
  const responses: Record<string, OpenApiResponse> = {};
  for (const status of [...new Set([...statuses.plain, ...statuses.limited])].sort((a, b) => a - b)) {
    const { name, response } = problemResponse(status, appCodes);
    const copy: OpenApiResponse = { ...response };
    if (statuses.plain.has(status)) {
      // A 429 of a rule per key: its Retry-After, without the limits' headers on every answer.
      if (status === 429) response.headers = { ...response.headers, 'Retry-After': limitRetryAfter };
      headers.addTo(response, status, false);
      responses[name] = response;
    }
    if (statuses.limited.has(status)) {
      if (status === 429) copy.headers = { ...copy.headers, 'Retry-After': limitRetryAfter };
      headers.addTo(copy, status, true);
      responses[problemResponseName(status, true)] = copy;
    }
  }
  return responses;
}
