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

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whether a string can be compared with a `uuid` column. Ids from clients are checked first, so
 * a malformed one is "no such record" instead of a database error (a 500).
 */
export function isUuid(value: string): boolean {
  return uuidPattern.test(value);
}
