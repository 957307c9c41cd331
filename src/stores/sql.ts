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
  /**
   * Optional: runs a statement the driver prepares once per connection under `name` (pg's named
   * statements: `pool.query({ name, text, values })`), for the queries a store runs on every
   * request. Without it, `query` runs them.
   */
  prepared?(name: string, sql: string, params: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * Whether the database refused a value as data: SQLSTATE class 22 (a text that is not a uuid,
 * a number out of range, a NUL in text, a string too long), looking through wrapped errors
 * (`cause`, as ORMs wrap driver errors). Such an error says the input was unreadable, not that
 * the database failed.
 *
 * @example
 * isDataException(Object.assign(new Error('invalid input syntax for type uuid'), { code: '22P02' })); // true
 */
export function isDataException(error: unknown): boolean {
  let current = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
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

/**
 * A store's own table with an index on its `expires_at` (ms since the epoch), created on first
 * use: safe to ensure often and from many instances at once.
 */
export class ExpiringTable {
  /** The quoted, possibly schema-qualified name, for SQL. */
  readonly name: string;
  readonly #client: SqlClient;
  readonly #statements: readonly string[];
  #ready: Promise<void> | undefined;
  /** Once the table is known to exist: a request's query need not wait on anything first. */
  #created = false;

  /** `columns`: the column definitions, `expires_at bigint NOT NULL` among them. */
  constructor(client: SqlClient, table: string, columns: string) {
    const { qualified, bare } = quoteTable(table);
    this.name = qualified;
    this.#client = client;
    this.#statements = [
      `CREATE TABLE IF NOT EXISTS ${qualified} (${columns})`,
      `CREATE INDEX IF NOT EXISTS "${bare.slice(0, 50)}_expires_at" ON ${qualified} (expires_at)`,
    ];
  }

  ensure(): Promise<void> {
    this.#ready ??= this.#create().then(
      () => {
        this.#created = true;
      },
      (error: unknown) => {
        this.#ready = undefined;
        throw error;
      },
    );
    return this.#ready;
  }

  /** Whether {@link ensure} has succeeded: then calling it again only waits a turn for nothing. */
  get created(): boolean {
    return this.#created;
  }

  async #create(): Promise<void> {
    for (const statement of this.#statements) {
      try {
        await this.#client.query(statement);
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (typeof code !== 'string' || !alreadyExists.has(code)) throw error;
      }
    }
  }
}
