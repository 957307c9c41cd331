/**
 * Objects made per request. V8 (as in Node.js 20) takes a slow path, about a microsecond, for an
 * object spread that adds keys to what it copies (`{ ...a, b }`, `{ ...a, ...b }`), and leaves an
 * object to which every key added later is as slow: a request's context paid it once per key.
 * Copying key by key costs tens of nanoseconds (docs/performance.md, "Objects made per request").
 */

/**
 * Copies the own enumerable string-keyed properties of `source` onto `target`, as
 * `{ ...target, ...source }` would, and returns `target`. A key `__proto__` is copied as data,
 * as a spread copies it, never as the object's prototype.
 */
export function assignOwn<T extends object>(target: T, source: object | null | undefined): T {
  const into = target as Record<string, unknown>;
  for (const key in source) {
    if (!Object.hasOwn(source, key)) continue;
    const value = (source as Record<string, unknown>)[key];
    if (key === '__proto__')
      Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true });
    else into[key] = value;
  }
  return target;
}
