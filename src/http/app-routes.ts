/**
 * Routes that are not procedures (docs/routes.md): health, the docs UI, a user's own. One
 * handler per route, given a neutral request and giving a neutral answer, served the same way by
 * every adapter: a Fastify route on Node, the router of `app.fetch` elsewhere. What an answer's
 * headers default to is decided here, once.
 */
import { ProceedConfigError } from '../core/errors.js';
import { httpMethods } from '../core/naming.js';
import type { RequestLog } from '../core/request-context.js';

/** The methods `app.route()` takes, those of procedures; GET routes answer HEAD too. */
export type AppRouteMethod = (typeof httpMethods)[number];

/** A request as a route's handler reads it. */
export interface RouteRequest {
  readonly method: string;
  /** The path, without the query string. */
  readonly path: string;
  /** The query string's parameters. */
  readonly query: URLSearchParams;
  /** The path's parameters (`:id`), decoded. */
  readonly params: Readonly<Record<string, string>>;
  /** Request headers by lower-case name; a repeated one joined with ", ". */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The request id (`X-Request-Id`). */
  readonly id: string;
  /** The app's logger for this request: each line carries its `reqId`, as `ctx.request.log`. */
  readonly log: RequestLog;
  /** The client's address, as `trustProxy` resolves it. */
  readonly ip: string;
  /**
   * The origin the client named (`http://` and its `Host`), or where the peer is a trusted proxy
   * (`trustProxy`), the scheme and host of its `X-Forwarded-Proto` and `X-Forwarded-Host`.
   */
  readonly origin: string;
  /**
   * The body's bytes, read up to the route's `bodyLimit` (413 past it); empty for GET and HEAD.
   * Read once.
   */
  body(): Promise<Uint8Array>;
}

/** What a route answers: a status (200 unless said), headers, and a body. */
export interface RouteAnswer {
  readonly status?: number;
  /** By name; `Content-Type` defaults to text for a string, bytes for anything else. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array | ReadableStream<Uint8Array> | null;
}

export type RouteHandler = (request: RouteRequest) => RouteAnswer | Promise<RouteAnswer>;

export interface AppRouteOptions {
  /** The most a body may hold, in bytes (the app's `bodyLimit` unless said). */
  readonly bodyLimit?: number;
}

/** A route of the app beside its procedures. */
export interface AppRoute {
  readonly method: AppRouteMethod;
  readonly path: string;
  readonly handler: RouteHandler;
  readonly bodyLimit: number | undefined;
}

/** Checks a route as `app.route()` is called: a mistake is thrown where it is made. */
export function appRoute(
  method: string,
  path: string,
  handler: RouteHandler,
  options: AppRouteOptions = {},
): AppRoute {
  const upper = method.toUpperCase();
  if (!(httpMethods as readonly string[]).includes(upper))
    throw new ProceedConfigError(
      `app.route(): ${JSON.stringify(method)} is not a method a route takes (${httpMethods.join(', ')}; GET routes answer HEAD too)`,
    );
  if (typeof path !== 'string' || !path.startsWith('/'))
    throw new ProceedConfigError(`app.route(): the path ${JSON.stringify(path)} must start with "/"`);
  if (typeof handler !== 'function')
    throw new ProceedConfigError(`app.route(${upper} ${path}): the handler must be a function`);
  const { bodyLimit } = options;
  if (bodyLimit !== undefined && (!Number.isSafeInteger(bodyLimit) || bodyLimit < 0))
    throw new ProceedConfigError(`app.route(${upper} ${path}): bodyLimit must be a whole number of bytes`);
  return { method: upper as AppRouteMethod, path, handler, bodyLimit };
}

/** Statuses whose answer has no body (RFC 9110): what a handler gives with one is dropped. */
const bodiless = new Set([101, 103, 204, 205, 304]);

/** An answer as every adapter sends it. */
export interface SentRouteAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  /** Null for no body. */
  readonly body: string | Uint8Array | ReadableStream<Uint8Array> | null;
}

/**
 * The answer as it is sent: the status (200 unless said); the handler's headers by lower-case
 * name, with a `Content-Type` for a body that has none (text for a string, bytes otherwise) and
 * `nosniff` unless it said otherwise, so that a browser never guesses a type; no body for a
 * status that has none (a stream given there is cancelled). A 200 whose `ETag` the client holds
 * (`held`, its `If-None-Match` on a GET) is a 304 with the 200's headers but its type (RFC 9110,
 * 15.4.5), as a procedure's read answers one (docs/routes.md).
 */
export function sentRouteAnswer(answer: RouteAnswer, held?: (tag: string) => boolean): SentRouteAnswer {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(answer.headers ?? {})) headers[name.toLowerCase()] = value;
  const { etag } = headers;
  const unchanged = (answer.status ?? 200) === 200 && etag !== undefined && held?.(etag) === true;
  const status = unchanged ? 304 : (answer.status ?? 200);
  if (unchanged) delete headers['content-type'];
  const given = answer.body ?? null;
  const body = bodiless.has(status) ? null : given;
  if (given instanceof ReadableStream && body === null) void given.cancel().catch(() => undefined);
  if (body !== null && headers['content-type'] === undefined)
    headers['content-type'] =
      typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/octet-stream';
  headers['x-content-type-options'] ??= 'nosniff';
  return { status, headers, body };
}
