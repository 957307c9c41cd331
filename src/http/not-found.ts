/**
 * 404 and 405 (docs/errors.md), the same on every adapter: a path that exists with other methods
 * is a 405 `METHOD_NOT_ALLOWED` with `Allow` naming them; any other unmatched request is a 404
 * `ROUTE_NOT_FOUND`. Each adapter says which methods a path takes; this decides the answer.
 */
import { ProceedError } from '../core/errors.js';

/** The methods a route may take, in the order `Allow` names them. */
export const routeMethods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * The answer to CONNECT, whatever its target: this server is no proxy. Node's server hands such a
 * request to its own listener (src/server/node-http.ts), Fetch runtimes to the pipeline; both
 * answer this.
 */
export function proxyRefusal(): ProceedError {
  return new ProceedError('METHOD_NOT_ALLOWED', 'CONNECT is not served: this server is no proxy', {
    headers: { allow: routeMethods.join(', ') },
  });
}

/** The problem for `method` on `path`, which no route took; `takes` says what a path takes. */
export function unmatchedProblem(
  method: string,
  path: string,
  takes: (method: string, path: string) => boolean,
): ProceedError {
  if (method === 'CONNECT') return proxyRefusal();
  const allowed = routeMethods.filter((each) => each !== method && takes(each, path));
  if (allowed.length > 0)
    return new ProceedError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}`, {
      headers: { allow: allowed.join(', ') },
    });
  return new ProceedError('ROUTE_NOT_FOUND', `No route matches ${method} ${path}`);
}
