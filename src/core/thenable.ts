/**
 * Whether a value is to be awaited: a native promise or any other thenable (a promise from
 * another realm, a library's own). Checking `instanceof Promise` alone would take a pending
 * check or validation for its result.
 */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
