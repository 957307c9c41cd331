/**
 * What Proceed's PostgreSQL stores (revocations, idempotency keys) share: the one method they
 * call, and table names checked before they reach SQL.
 */

/**
 * The one method the stores need. A `pg` Pool or Client and a PGlite instance all fit.
 *
 * @example
 * const client: SqlClient = new pg.Pool({ connectionString });
 */
export interface SqlClient {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

const identifier = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A table name, optionally schema-qualified, quoted for SQL; a TypeError for anything else. */
export function quoteTable(name: string): { qualified: string; bare: string } {
  const parts = name.split('.');
  if (parts.length > 2 || !parts.every((part) => identifier.test(part))) {
    throw new TypeError(`Invalid table name "${name}" (letters, digits and _, optionally schema.table)`);
  }
  return { qualified: parts.map((part) => `"${part}"`).join('.'), bare: parts.at(-1) as string };
}

/** SQLSTATEs of a concurrent `CREATE … IF NOT EXISTS` losing the race: the object exists. */
const alreadyExists = new Set(['23505', '42P07', '42710']);

/** Runs `CREATE … IF NOT EXISTS` statements; another instance creating them at the same moment is fine. */
export async function createSchema(client: SqlClient, statements: readonly string[]): Promise<void> {
  for (const statement of statements) {
    try {
      await client.query(statement);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code !== 'string' || !alreadyExists.has(code)) throw error;
    }
  }
}
