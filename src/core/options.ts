/**
 * Options objects checked when they are given (docs/procedures.md, "Mistakes caught early"): a
 * misspelt key is a start-up error naming the key and the nearest valid one, in JavaScript as in
 * TypeScript, instead of an option silently ignored.
 */
import { ProceedConfigError } from './errors.js';

/**
 * The keys of an options type, listed once at run time. The list must name every key of `T`: a
 * key added to the interface and forgotten here is a compile error.
 *
 * @example
 * const mountKeys = optionKeys<MountOptions>()('prefix');
 */
export function optionKeys<T>() {
  return <const K extends readonly (keyof T & string)[]>(
    ...keys: K &
      ([Exclude<keyof T, K[number]>] extends [never] ? unknown : { missing: Exclude<keyof T, K[number]> })
  ): readonly string[] => keys;
}

/** Edit distance between two short strings (insertions, deletions, substitutions). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1]?.toLowerCase() === b[j - 1]?.toLowerCase() ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? Math.max(a.length, b.length);
}

/** The known name closest to `name`, when it is close enough to be what was meant. */
export function closestName(name: string, known: readonly string[]): string | undefined {
  // A name from a request may be long: its distance to each known one costs their lengths'
  // product, so only names of about a known name's length are compared.
  if (name.length > longestSuggested) return undefined;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    if (Math.abs(candidate.length - name.length) > closeEnough(candidate)) continue;
    const d = distance(name, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance <= closeEnough(best) ? best : undefined;
}

/** The most edits a name may be from a known one to be taken for it. */
const closeEnough = (known: string) => Math.max(2, Math.floor(known.length / 3));

/** Names longer than this get no suggestion. */
const longestSuggested = 100;

/**
 * Throws a {@link ProceedConfigError} for an options value that is not an object or has a key
 * `known` does not list. `undefined` passes unless `required`.
 *
 * @example
 * refuseUnknownOptions('docsPlugin', { routePrefx: '/docs' }, ['routePrefix', 'collections', 'openapi']);
 * // ProceedConfigError: docsPlugin: unknown option "routePrefx" (did you mean "routePrefix"?). Known options: …
 */
export function refuseUnknownOptions(
  where: string,
  options: unknown,
  known: readonly string[],
  { required = false }: { required?: boolean } = {},
): void {
  if (options === undefined && !required) return;
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new ProceedConfigError(`${where}: options must be an object, got ${describe(options)}`);
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const near = closestName(key, known);
    throw new ProceedConfigError(
      `${where}: unknown option "${key}"${near === undefined ? '' : ` (did you mean "${near}"?)`}. Known options: ${known.join(', ')}`,
    );
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? `the string "${value}"` : String(typeof value);
}

/** The longest delay a timer keeps (ms, about 24.8 days): past it, Node fires it after 1 ms. */
export const longestTimer = 2 ** 31 - 1;

/**
 * A duration option in ms, or its default: an integer from `minimum` to the longest a timer
 * keeps. `NaN` made a prune interval that never comes (an idempotency store that grew without
 * bound) or one that comes on every write.
 *
 * @example
 * durationOption('MemoryIdempotencyStore', 'pruneInterval', options.pruneInterval, 600_000);
 */
export function durationOption(
  where: string,
  name: string,
  value: unknown,
  fallback: number,
  minimum = 1,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum || value > longestTimer)
    throw new ProceedConfigError(
      `${where}: ${name} must be an integer number of ms from ${minimum} to ${longestTimer} (got ${JSON.stringify(value)})`,
    );
  return value;
}

/**
 * A port, as a number or as its digits in text (`process.env.PORT`): the number from 0 to 65535,
 * or undefined when it is none.
 *
 * @example
 * portOf('8080'); // 8080
 */
export function portOf(value: unknown): number | undefined {
  const port = typeof value === 'string' && /^\d{1,5}$/.test(value.trim()) ? Number(value.trim()) : value;
  return typeof port === 'number' && Number.isInteger(port) && port >= 0 && port <= 65_535 ? port : undefined;
}
