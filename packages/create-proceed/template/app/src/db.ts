/**
 * The database. `DATABASE_URL` says which:
 * - `postgres://…`: a PostgreSQL server;
 * - `memory://`: PGlite in memory, gone when the process ends (the tests use it);
 * - anything else: a directory where PGlite keeps its files (default `.data/db`).
 * PGlite is PostgreSQL compiled to WebAssembly, running inside this process: the same SQL and
 * the same migrations serve both. Opening the database applies the migrations of `drizzle/`.
 */
import { AsyncResource } from 'node:async_hooks';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { unavailableWhenConnectFails } from 'proceedjs';
import type { SqlClient } from 'proceedjs/auth';
import { ProceedConfigError } from 'proceedjs/config';
import * as schema from './schema.js';

/** Drizzle, whichever driver is underneath. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface Database {
  db: Db;
  /** The same connections for plain SQL, as the token store (`PostgresRevocationStore`) takes them. */
  sql: SqlClient;
  close(): Promise<void>;
}

export const defaultDatabaseUrl = './.data/db';

const migrationsFolder = fileURLToPath(new URL('../drizzle', import.meta.url));

/** The PostgreSQL advisory lock taken to migrate: any number that nothing else in the app locks. */
export const migrationLock = 720_461_113;

/**
 * Opens the database and brings its tables up to date. `onPoolError` hears the errors of idle
 * PostgreSQL connections (a server restarted under the pool, which makes new ones): the app logs
 * them; without it they go to stderr.
 *
 * @example
 * const { db, close } = await openDatabase('memory://');
 */
export async function openDatabase(
  url: string = process.env.DATABASE_URL || defaultDatabaseUrl,
  { onPoolError = (error: Error) => console.error(`PostgreSQL: ${error.message}`) } = {},
): Promise<Database> {
  if (isPostgres(url)) return openPostgres(url, onPoolError);
  // A typo such as postgre://… is refused, not taken for a directory (and printed, password and all).
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) && !/^memory:\/\//i.test(url))
    throw new ProceedConfigError('DATABASE_URL must be postgres://…, memory:// or a directory');
  return openPglite(/^memory:\/\//i.test(url) ? undefined : resolve(url));
}

/** Whether a `DATABASE_URL` names a PostgreSQL server (else PGlite). */
export const isPostgres = (url: string | undefined) => /^postgres(ql)?:\/\//i.test(url ?? '');

// Each driver is loaded only when it is used: on PostgreSQL, PGlite is never loaded.
async function openPostgres(url: string, onPoolError: (error: Error) => void): Promise<Database> {
  const [{ default: pg }, { drizzle }, { migrate }] = await Promise.all([
    import('pg'),
    import('drizzle-orm/node-postgres'),
    import('drizzle-orm/node-postgres/migrator'),
  ]);
  // Migrations run first, on a connection of their own: waiting for another instance's, or a
  // long one, is no request and has no query timeout.
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect().catch((error: unknown) => {
    // A server that is down or refuses us: one line saying so, not a stack.
    throw new ProceedConfigError(
      `Cannot use the PostgreSQL database of DATABASE_URL: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
  try {
    // Instances that start together migrate one at a time: the first applies the migrations,
    // the others wait here, then find nothing left to do.
    await client.query('SELECT pg_advisory_lock($1)', [migrationLock]);
    await migrate(drizzle({ client, schema }), { migrationsFolder });
  } finally {
    // Closing the connection releases the lock.
    await client.end().catch(() => undefined);
  }
  // Every failure to hand out a connection is an outage, whatever refused it (a server that is
  // down, a database closed to connections during maintenance, too many clients, a changed
  // password, no answer within 5 s): 503 UNAVAILABLE with Retry-After, never 500. So is a
  // statement past 10 s, waiting on a lock included: the server cancels it and rolls its
  // transaction back, so the 503 changed nothing; a server too far gone to say so is given up
  // 2 s later (the pool drops that connection). Errors of a query that got its answer (a
  // constraint, a syntax error) stay as they are.
  const pool = unavailableWhenConnectFails(
    new pg.Pool({
      connectionString: url,
      connectionTimeoutMillis: 5000,
      statement_timeout: 10_000,
      query_timeout: 12_000,
    }),
  );
  // Heard in the context the pool was opened in: an idle connection's loss comes from its socket,
  // which carries the trace of the request that opened it.
  pool.on('error', AsyncResource.bind(onPoolError));
  return { db: drizzle({ client: pool, schema }), sql: pool, close: once(() => pool.end()) };
}

async function openPglite(directory: string | undefined): Promise<Database> {
  const [{ PGlite }, { drizzle }, { migrate }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('drizzle-orm/pglite'),
    import('drizzle-orm/pglite/migrator'),
  ]);
  const unlock = directory === undefined ? async () => {} : await lockDirectory(directory);
  const client = new PGlite(directory ?? 'memory://');
  const close = once(async () => {
    await client.close();
    await unlock();
  });
  try {
    // PGlite is one process, with one connection: nothing to lock for the migrations.
    await migrate(drizzle({ client, schema }), { migrationsFolder });
  } catch (error) {
    await close();
    throw error;
  }
  return { db: drizzle({ client, schema }), sql: client, close };
}

/**
 * PGlite holds the database in the memory of the process that opened it: a second process on the
 * same directory (`npm run seed` while the server runs) would lose its writes, or overwrite the
 * first's. So the directory holds a lock file naming its process; one left by a process that is
 * gone is taken over. To share a database between processes, use PostgreSQL.
 */
async function lockDirectory(directory: string): Promise<() => Promise<void>> {
  const inUse = (pid?: number) =>
    new ProceedConfigError(
      `The database in ${directory} is open in another process${pid === undefined ? '' : ` (pid ${pid})`}: stop it first, or use PostgreSQL (DATABASE_URL=postgres://…)`,
    );
  if (openHere.has(directory)) throw inUse();
  await mkdir(directory, { recursive: true });
  const file = join(directory, 'app.lock');
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(file, String(process.pid), { flag: 'wx' });
      openHere.add(directory);
      return async () => {
        openHere.delete(directory);
        await rm(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(await readFile(file, 'utf8').catch(() => ''));
      if (attempt > 0 || isRunning(holder)) throw inUse(holder);
      await rm(file, { force: true });
    }
  }
}

/** The directories this process has open. */
const openHere = new Set<string>();

function isRunning(pid: number): boolean {
  // Our own pid, in a directory this process has not opened: a container's earlier life (pid 1).
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= close();
    return closing;
  };
}
