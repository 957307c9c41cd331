/**
 * What every error becomes on the wire (docs/errors.md), the same on every adapter: anything
 * thrown leaves as RFC 9457 problem+json, an unreachable service as 503 `UNAVAILABLE` (logged as
 * a warning), anything unexpected as a 500 without its message unless `exposeErrors` (logged with
 * its stack). Adapters add the request id and send it.
 */
import { ProceedError, toProblem } from '../core/errors.js';
import { gaveUpDetail, outageDetail, UnavailableError, unavailableProblem } from '../core/unavailable.js';

export const problemType = 'application/problem+json; charset=utf-8';

export interface ProblemAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The problem's code, for the request log and the metrics. */
  code: string;
}

export interface ProblemOptions {
  exposeErrors: boolean;
  log: { warn(object: object, message: string): void; error(object: object, message: string): void };
  /** The adapter's own errors as Proceed's (Fastify's body and URL errors, say). */
  translate?: (error: unknown) => ProceedError | undefined;
}

/** What a problem logs, with the request's id (`reqId`) on every line, as a request's own logger writes it. */
export function logOfRequest(log: ProblemOptions['log'], reqId: string): ProblemOptions['log'] {
  return {
    warn: (object, message) => log.warn({ reqId, ...object }, message),
    error: (object, message) => log.error({ reqId, ...object }, message),
  };
}

export function problemAnswer(
  error: unknown,
  { exposeErrors, log, translate }: ProblemOptions,
): ProblemAnswer {
  let known: unknown = error;
  if (!(error instanceof ProceedError)) {
    known = translate?.(error) ?? unavailableProblem(error) ?? error;
    if (known !== error && (known as ProceedError).code === 'UNAVAILABLE')
      log.warn(
        { err: error },
        (known as ProceedError).message === gaveUpDetail
          ? 'The database gave up on a statement (a timeout, a deadlock or a serialization failure)'
          : 'A service this request needs is unreachable',
      );
  } else if (error instanceof UnavailableError && error.cause !== undefined) {
    // Thrown where a connection failed (a wrapped pool's `pool.query`, say) or the server's own
    // storage did (an upload's spool): the answer says nothing of the cause, so the log must.
    log.warn(
      { err: error },
      error.message === outageDetail ? 'A service this request needs is unreachable' : error.message,
    );
  }
  const problem = toProblem(known, exposeErrors);
  if (problem.unexpected) log.error({ err: error }, 'Unexpected error');
  return {
    status: problem.status,
    headers: { ...problem.headers, 'content-type': problemType, 'x-content-type-options': 'nosniff' },
    body: JSON.stringify(problem.body),
    code: problem.body.code,
  };
}

/**
 * A request that reaches a closing app, refused before anything of its route runs (its rate
 * limit, its body), on every adapter: try another instance (docs/deployment.md, "Shutdown").
 */
export const closingRefusal = (): ProceedError =>
  new ProceedError('UNAVAILABLE', 'The server is shutting down; retry the request', {
    headers: { 'retry-after': '1', connection: 'close' },
  });
