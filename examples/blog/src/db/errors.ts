/** PostgreSQL error codes the repositories translate, found the same way on both drivers. */

/** `unique_violation`. */
export const UNIQUE_VIOLATION = '23505';
/** `foreign_key_violation`. */
export const FOREIGN_KEY_VIOLATION = '23503';

/**
 * The SQLSTATE of a database error, looking through wrappers: Drizzle wraps driver errors in a
 * `DrizzleQueryError` whose `cause` is the node-postgres or PGlite error carrying `code`.
 */
export function sqlState(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
    current = current.cause;
  }
  return undefined;
}

/** Whether an error is a unique violation, optionally of one constraint or index. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (sqlState(error) !== UNIQUE_VIOLATION) return false;
  if (constraint === undefined) return true;
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    if ((current as { constraint?: unknown }).constraint === constraint) return true;
    current = current.cause;
  }
  return false;
}
