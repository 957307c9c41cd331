/**
 * Versioned SQL migrations: `migrations/NNNN_name.sql`, applied in order, each recorded in
 * `schema_migrations`. Everything pending runs in one transaction that first takes a
 * transaction-scoped advisory lock, so instances starting at the same time apply each migration
 * exactly once: the others wait for the lock, then find nothing left to do.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the blog's migrations live. */
export const migrationsDirectory = fileURLToPath(new URL('../../migrations/', import.meta.url));

/** One key for the whole schema: any two migrators exclude each other. */
const lockKey = 'proceed-blog:schema_migrations';

export interface Migration {
  version: string;
  name: string;
  sql: string;
}

/** Runs SQL inside the migration's transaction. */
export interface MigrationSession {
  /** One statement, with parameters. */
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  /** A script of several statements, no parameters. */
  exec(sql: string): Promise<void>;
}

/** Opens a transaction, runs `work` in it, commits (or rolls back if it throws). */
export type InTransaction = <T>(work: (session: MigrationSession) => Promise<T>) => Promise<T>;

const fileName = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/** Reads the `.sql` files, ordered by version. A misnamed `.sql` file is an error, not silently skipped. */
export async function readMigrations(directory = migrationsDirectory): Promise<Migration[]> {
  const files = (await readdir(directory)).filter((file) => file.endsWith('.sql')).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const match = fileName.exec(file);
    if (match === null) throw new Error(`Migration file "${file}" must be named NNNN_name.sql`);
    const [, version, name] = match as unknown as [string, string, string];
    if (migrations.some((migration) => migration.version === version)) {
      throw new Error(`Two migrations share version ${version}`);
    }
    migrations.push({ version, name, sql: await readFile(join(directory, file), 'utf8') });
  }
  return migrations;
}

/**
 * Applies the pending migrations and returns the versions it applied (empty when up to date).
 *
 * @example
 * await migrate((work) => pglite.transaction((tx) => work({ query: (s, p) => tx.query(s, p), exec: async (s) => { await tx.exec(s); } })));
 */
export async function migrate(
  inTransaction: InTransaction,
  directory = migrationsDirectory,
): Promise<string[]> {
  const migrations = await readMigrations(directory);
  return inTransaction(async (session) => {
    await session.query('SELECT pg_advisory_xact_lock(hashtext($1))', [lockKey]);
    await session.exec(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version    text        PRIMARY KEY,
         name       text        NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const { rows } = await session.query('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((row) => (row as { version: string }).version));
    const done: string[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await session.exec(migration.sql);
      await session.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
      done.push(migration.version);
    }
    return done;
  });
}
