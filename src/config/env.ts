/** Settings the framework reads from the environment. */
import { ProceedConfigError } from '../core/errors.js';

/**
 * The limit from `AUTH_RATE_LIMIT` (requests per minute), 10 when unset. Throws on a value that
 * is not a positive integer.
 *
 * @example
 * rateLimitFromEnv(); // 10, or Number(process.env.AUTH_RATE_LIMIT)
 */
export function rateLimitFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.AUTH_RATE_LIMIT;
  if (raw === undefined || raw.trim() === '') return 10;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) {
    throw new ProceedConfigError(`AUTH_RATE_LIMIT must be a positive integer (got "${raw}")`);
  }
  return value;
}
