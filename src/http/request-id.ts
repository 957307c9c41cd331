/**
 * A client's `X-Request-Id` is kept when it is well formed (tracing across services); otherwise
 * the server makes one (docs/deployment.md, "Logs"). One rule for every adapter.
 */
const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id: the client's own when well formed, else a new one from `make`. */
export function requestIdFrom(incoming: unknown, make: () => string): string {
  return typeof incoming === 'string' && requestIdPattern.test(incoming) ? incoming : make();
}
