/**
 * What a call can fail with: the server's answer (a problem) or anything that kept a usable
 * answer from arriving (network, a non-JSON reply, an unroutable procedure).
 */
import type { ErrorCode, FieldError, Problem } from '../core/errors.js';

/** An RFC 9457 problem as received: Proceed's fields, plus whatever else the server sent. */
export type ReceivedProblem = Partial<Problem> & { status: number } & Record<string, unknown>;

/**
 * The server answered with problem details (`application/problem+json`). Match on `code`, a
 * stable string (docs/errors.md); `errors` lists the fields a validation failure found.
 *
 * @example
 * try {
 *   await client.posts.getPost({ id });
 * } catch (error) {
 *   if (error instanceof ProblemError && error.code === 'NOT_FOUND') return undefined;
 *   throw error;
 * }
 */
export class ProblemError extends Error {
  override readonly name = 'ProblemError';
  /** HTTP status, e.g. 404. */
  readonly status: number;
  /** Machine-readable code, e.g. `NOT_FOUND`; `HTTP_<status>` when the problem carries none. */
  readonly code: ErrorCode | (string & {});
  readonly title: string;
  readonly detail: string;
  /** The problem's `type` URI. */
  readonly type: string;
  /** Field errors of a validation failure; empty otherwise. */
  readonly errors: readonly FieldError[];
  /** The problem body exactly as received. */
  readonly problem: ReceivedProblem;
  /** Response headers (`Retry-After`, `WWW-Authenticate`, `Allow`, …). */
  readonly headers: Headers;

  constructor(problem: ReceivedProblem, headers: Headers = new Headers()) {
    const title = typeof problem.title === 'string' ? problem.title : `HTTP ${problem.status}`;
    const detail = typeof problem.detail === 'string' ? problem.detail : title;
    super(detail);
    this.status = problem.status;
    this.code = typeof problem.code === 'string' ? problem.code : `HTTP_${problem.status}`;
    this.title = title;
    this.detail = detail;
    this.type = typeof problem.type === 'string' ? problem.type : 'about:blank';
    this.errors = Array.isArray(problem.errors) ? problem.errors : [];
    this.problem = problem;
    this.headers = headers;
  }
}

/** Why a call failed without a problem from the server. */
export type ClientErrorReason =
  /** The request never got an answer (connection refused, DNS, aborted). */
  | 'network'
  /** An answer arrived that is not the JSON Proceed sends (an HTML error page, a proxy). */
  | 'invalid-response'
  /** The client cannot tell where the procedure lives (a `.rest()` override without a manifest). */
  | 'unknown-route'
  /** The input cannot be put on the wire (a nested object in a query string). */
  | 'invalid-input'
  /** A WebSocket closed for good (docs/sockets.md, "The typed client"), without a problem to tell why. */
  | 'closed';

/**
 * A call that failed without problem details: see `reason`. `status` is set when a response
 * arrived.
 *
 * @example
 * catch (error) {
 *   if (error instanceof ClientError && error.reason === 'network') showOfflineBanner();
 * }
 */
export class ClientError extends Error {
  override readonly name = 'ClientError';
  readonly reason: ClientErrorReason;
  readonly status: number | undefined;

  constructor(
    reason: ClientErrorReason,
    message: string,
    options: { status?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.reason = reason;
    this.status = options.status;
  }
}

/**
 * Refusals that a later attempt may not meet (an instance full, a rate limit, a gateway, a store
 * down): a socket's handshake and an event stream's reconnect try again after them.
 */
export const retryStatuses: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/** A refusal's `Retry-After` in ms, when it gives one in seconds. */
export function retryAfterOf(error: ProblemError): number | undefined {
  const seconds = Number(error.headers.get('retry-after') ?? Number.NaN);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}
