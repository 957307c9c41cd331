/**
 * The checks of a `TokenService`'s options, made once when it is built: each refuses a value that
 * would make tokens no verification takes, or take tokens it should not (docs/auth.md).
 */
import { ProceedConfigError } from '../core/errors.js';
import type { StandardSchemaV1 } from '../core/schema.js';
import { isKeyClaim } from './jwt.js';

const anyUserId = () => true;

/** The issuer or audience option: a name a token can carry, as its other key claims are. */
export function claimOption(name: 'issuer' | 'audience', value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (!isKeyClaim(value))
    throw new ProceedConfigError(
      `TokenService: ${name} is text of 1 to 255 characters without control characters (got ${JSON.stringify(value)})`,
    );
  return value;
}

/** The `userId` option as a predicate; it must answer at once (it runs on every request). */
export function userIdCheck(schema: StandardSchemaV1<string> | undefined): (sub: string) => boolean {
  if (schema === undefined) return anyUserId;
  if (typeof schema?.['~standard']?.validate !== 'function') {
    throw new ProceedConfigError('TokenService: userId must be a Standard Schema, such as z.uuid()');
  }
  const asynchronous = new ProceedConfigError(
    'TokenService: the userId schema validates asynchronously; use a synchronous one, such as z.uuid()',
  );
  // Found at start-up where the schema is always asynchronous, on first use otherwise.
  const probe = schema['~standard'].validate('');
  if (probe instanceof Promise) {
    probe.catch(() => undefined);
    throw asynchronous;
  }
  return (sub) => {
    const result = schema['~standard'].validate(sub);
    if (result instanceof Promise) throw asynchronous;
    return result.issues === undefined;
  };
}

/** The longest lifetime a token is given: 2³¹ − 1 seconds, about 68 years (1e300 made tokens that failed to verify). */
const longestTtl = 2 ** 31 - 1;

export function positiveSeconds(value: number, name: string): number {
  // 1e300 was taken, and every token it made failed verification as malformed.
  if (!Number.isInteger(value) || value <= 0 || value > longestTtl)
    throw new RangeError(`${name} must be a positive integer of seconds, at most ${longestTtl}`);
  return value;
}
