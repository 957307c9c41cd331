/**
 * Opens the blog's database from `DATABASE_URL` (CONTRACT §1) and migrates it:
 * - `postgres://…` or `postgresql://…`: a PostgreSQL server, through a node-postgres pool;
 * - `memory://`: an in-memory PGlite (gone when the process ends);
 * - anything else: a directory holding a persistent PGlite database (created if missing).
 * PGlite is PostgreSQL compiled to WebAssembly, so the same SQL and migrations serve both.
 */
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzleNodePostgres } from 'drizzle-orm/node-postgres';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import pg from 'pg';
import { type InTransaction, migrate, migrationsDirectory } from './migrate.js';
import { schema } from './schema.js';

export type Schema = typeof schema;

/** The Drizzle database, whichever driver is underneath. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export interface Database {
  /** Drizzle over the open connection(s). */
  db: Db;
  kind: 'pglite' | 'postgres';
  /** Raw SQL with `$n` parameters. */
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: Row[] }>;
  /** Resolves when the database answers; rejects otherwise (health check). */
  ping(): Promise<void>;
  /** Closes the pool or the PGlite instance. Safe to call twice. */
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** Folder of `NNNN_name.sql` files (default: the blog's `migrations/`). */
  migrations?: string;
  /** Largest number of PostgreSQL connections (default 10). */
  poolSize?: number;
  /** Errors of idle PostgreSQL connections (a server restart…); default: written to stderr. */
  onPoolError?: (error: Error) => void;
}

/** The default `DATABASE_URL`: a persistent PGlite database beside the working directory. */
export const defaultDatabaseUrl = './.data/db';

/**
 * Opens and migrates the database.
 *
 * @example
 * const database = await openDatabase(process.env.DATABASE_URL);
 * const users = usersRepository(database.db);
 * await database.close();
 */
export async function openDatabase(
  url: string = process.env.DATABASE_URL ?? defaultDatabaseUrl,
  options: OpenDatabaseOptions = {},
): Promise<Database> {
  const database = /^postgres(?:ql)?:\/\//i.test(url) ? openPostgres(url, options) : await openPglite(url);
  try {
    await migrate(database.inTransaction, options.migrations ?? migrationsDirectory);
  } catch (error) {
    await database.close();
    throw error;
  }
  const { inTransaction: _, ...open } = database;
  return open;
}

type OpenedDatabase = Database & { inTransaction: InTransaction };

function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= close();
    return closing;
  };
}

function openPostgres(url: string, options: OpenDatabaseOptions): OpenedDatabase {
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10 });
  pool.on(
    'error',
    options.onPoolError ?? ((error) => console.error(`PostgreSQL connection error: ${error.message}`)),
  );
  return {
    db: drizzleNodePostgres({ client: pool, schema }),
    kind: 'postgres',
    query: async <Row>(sql: string, params?: unknown[]) => ({
      rows: (await pool.query(sql, params)).rows as Row[],
    }),
    ping: async () => {
      await pool.query('SELECT 1');
    },
    close: once(() => pool.end()),
    inTransaction: async (work) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work({
          query: (sql, params) => client.query(sql, params),
          exec: async (sql) => {
            await client.query(sql);
          },
        });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
  };
}

async function openPglite(url: string): Promise<OpenedDatabase> {
  let client: PGlite;
  if (/^memory:\/\//i.test(url)) {
    client = new PGlite();
  } else {
    const directory = resolve(url.replace(/^file:\/\//i, ''));
    await mkdir(directory, { recursive: true });
    client = new PGlite(directory);
  }
  await client.waitReady;
  return {
    db: drizzlePglite({ client, schema }),
    kind: 'pglite',
    query: async <Row>(sql: string, params?: unknown[]) => ({
      rows: (await client.query<Row>(sql, params)).rows,
    }),
    ping: async () => {
      await client.query('SELECT 1');
    },
    close: once(async () => {
      if (!client.closed) await client.close();
    }),
    inTransaction: (work) =>
      client.transaction((tx) =>
        work({
          query: (sql, params) => tx.query(sql, params),
          exec: async (sql) => {
            await tx.exec(sql);
          },
        }),
      ),
  };
}
