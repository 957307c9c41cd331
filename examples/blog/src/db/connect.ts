/**
 * Opens the blog's database from `DATABASE_URL` (docs/blog.md) and migrates it:
 * - `postgres://…` or `postgresql://…`: a PostgreSQL server, through a node-postgres pool;
 * - `memory://`: an in-memory PGlite (gone when the process ends);
 * - anything else: a directory holding a persistent PGlite database (created if missing), open
 *   in one process at a time (directory-lock.ts).
 * PGlite is PostgreSQL compiled to WebAssembly, so the same SQL and migrations serve both.
 */
import { AsyncResource } from 'node:async_hooks';
import type { PGlite } from '@electric-sql/pglite';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { UnavailableError, unavailableWhenConnectFails } from 'proceedjs';
import { ProceedConfigError } from 'proceedjs/config';
import { lockDirectory } from './directory-lock.js';
import { type DatabaseLocation, databaseLocation } from './location.js';
import { type InTransaction, migrate, migrationsDirectory } from './migrate.js';
import { schema } from './schema.js';
import { writableDirectory } from './writable.js';

export type Schema = typeof schema;

/** The Drizzle database, whichever driver is underneath. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export interface Database {
  /** Drizzle over the open connection(s). */
  db: Db;
  kind: 'pglite' | 'postgres';
  /** Raw SQL with `$n` parameters. */
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: Row[] }>;
  /** PostgreSQL only: a statement prepared once per connection under `name` (the token store's check). */
  prepared?(name: string, sql: string, params: unknown[]): Promise<{ rows: unknown[] }>;
  /** Resolves when the database answers; rejects otherwise (health check). */
  ping(): Promise<void>;
  /**
   * Calls `onNotify` for every notification on `channel` (PostgreSQL's LISTEN/NOTIFY, from any
   * connection to this database); resolves once listening, with what stops it.
   */
  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  /** The connection pool's state (PostgreSQL; PGlite has no pool), for the metrics. */
  poolStats?: () => { total: number; idle: number; waiting: number };
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
  /**
   * PostgreSQL: milliseconds a request's statement may take, waiting on locks included (default
   * 10,000; the server's `statement_timeout`). Past them the server cancels it and its
   * transaction rolls back: 503 `UNAVAILABLE`, nothing changed. A server that does not even say
   * so is given up two seconds later, and that connection dropped. Migrations have no such bound.
   */
  queryTimeout?: number;
  /**
   * `memory://` only: start from a copy of the first migrated, empty database this process
   * opened with this option (under a second, instead of 3 to 5 s for initdb and the migrations).
   * The copy, about 40 MB, stays for the life of the process: for tests, which open dozens.
   */
  fromTemplate?: boolean;
  /**
   * Called with every statement a request runs, through Drizzle or {@link Database.query} (the
   * token store's): to watch what a request costs the database.
   */
  logQuery?: (sql: string, params: readonly unknown[]) => void;
  /**
   * PGlite only: PostgreSQL's `shared_buffers`, the page cache inside the process (default
   * `'32MB'`, PGlite's own is `'128MB'`). docs/performance.md, "The embedded database", has the
   * trade: 180 MB less memory for the blog, about 20 % slower random reads once the data
   * outgrows it.
   */
  sharedBuffers?: string;
}

type QueryLog = OpenDatabaseOptions['logQuery'];

/** Drizzle's options for a statement log, when one is wanted. */
const loggerOf = (logQuery: QueryLog) =>
  logQuery === undefined
    ? {}
    : { logger: { logQuery: (sql: string, params: unknown[]) => logQuery(sql, params) } };

/**
 * Opens and migrates the database.
 *
 * @example
 * const database = await openDatabase(process.env.DATABASE_URL);
 * const users = usersRepository(database.db);
 * await database.close();
 */
export async function openDatabase(
  url: string | DatabaseLocation | undefined = process.env.DATABASE_URL,
  options: OpenDatabaseOptions = {},
): Promise<Database> {
  const location = typeof url === 'object' ? url : databaseLocation(url);
  const migrations = options.migrations ?? migrationsDirectory;
  if (location.kind === 'memory' && options.fromTemplate === true) return openMemory(migrations, options);
  const database =
    location.kind === 'postgres'
      ? await openPostgres(location.url, options)
      : await openPglite(location, options);
  try {
    return await migrated(database, migrations);
  } catch (error) {
    throw location.kind === 'postgres' ? unreachable(location.url, error) : error;
  }
}

/** Where a PostgreSQL URL points, without its password: for messages and logs. */
export function describePostgres(url: string): string {
  const parsed = new URL(url);
  const user = parsed.username === '' ? '' : `${decodeURIComponent(parsed.username)}@`;
  return `${user}${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
}

/** Errors that mean the server cannot be used as configured (not a bug): one line, not a stack. */
const connectionFailures = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  '28P01', // password authentication failed
  '28000', // no such role, or not allowed
  '3D000', // no such database
]);

function unreachable(url: string, failure: unknown): unknown {
  // The pool's own wrapper says where it failed; the driver's error says why.
  const error = failure instanceof UnavailableError ? failure.cause : failure;
  const code = (error as { code?: string }).code;
  if (code === undefined || !connectionFailures.has(code)) return failure;
  return new ProceedConfigError(
    `Cannot use the PostgreSQL database ${describePostgres(url)} (DATABASE_URL): ${(error as Error).message}`,
  );
}

async function migrated(database: OpenedDatabase, migrations: string): Promise<Database> {
  try {
    await migrate(database.inTransaction, migrations);
  } catch (error) {
    await database.close();
    throw error;
  }
  const { inTransaction: _, dumpDataDir: __, ...open } = database;
  return open;
}

/**
 * Every `memory://` database of a process starts out the same: migrated and empty. The first is
 * made the long way (initdb and the migrations: 3 to 5 s); its files are kept (about 40 MB) and
 * each later one starts from them in under a second. A test run opens dozens.
 */
const memoryTemplates = new Map<string, Promise<Blob>>();

async function openMemory(migrations: string, options: OpenDatabaseOptions): Promise<Database> {
  const template = memoryTemplates.get(migrations);
  if (template !== undefined) {
    const from = await template.catch(() => undefined);
    if (from !== undefined) return migrated(await openPglite({ kind: 'memory' }, options, from), migrations);
  }
  const database = await openPglite({ kind: 'memory' }, options);
  const open = await migrated(database, migrations);
  // Taken right after the migrations, before the caller writes anything.
  if (!memoryTemplates.has(migrations)) {
    const dump = database.dumpDataDir?.();
    if (dump !== undefined) memoryTemplates.set(migrations, dump);
    await dump?.catch(() => memoryTemplates.delete(migrations));
  }
  return open;
}

type OpenedDatabase = Database & {
  inTransaction: InTransaction;
  /** PGlite only: the database's files, to start another one from. */
  dumpDataDir?: () => Promise<Blob>;
};

function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= close();
    return closing;
  };
}

// Each engine's driver loads only when it is used: a server on PostgreSQL never loads PGlite.
async function openPostgres(url: string, options: OpenDatabaseOptions): Promise<OpenedDatabase> {
  const [{ default: pg }, { drizzle: drizzleNodePostgres }] = await Promise.all([
    import('pg'),
    import('drizzle-orm/node-postgres'),
  ]);
  // Every failure to hand out a connection is an outage, whatever refused it (a database closed
  // to connections, too many clients, a timeout): 503 UNAVAILABLE with Retry-After, never 500.
  // Errors of a query on a connection it did hand out (a constraint, a syntax error) stay as
  // they are.
  const queryTimeout = options.queryTimeout ?? 10_000;
  const pool = unavailableWhenConnectFails(
    new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      // A server that does not answer (not refusing, just silent) fails a request in 5 s as 503
      // UNAVAILABLE, instead of holding it until the client gives up; one that stops answering
      // on a connection already open, once the query's time is up.
      connectionTimeoutMillis: 5000,
      // The server ends a statement past its time itself (waiting on a lock included), so that
      // its transaction is rolled back and the request's 503 changed nothing; the driver gives up
      // two seconds later, on a server too far gone to say so. A statement the driver alone
      // abandoned would still run, and commit once its lock came.
      statement_timeout: queryTimeout,
      query_timeout: queryTimeout + 2000,
    }),
  );
  // Heard in the context the pool was opened in, not that of the request whose connection it
  // was: node-postgres reports an idle connection's loss from its socket, which carries that
  // request's trace, and the line would name a request long answered (docs/observability.md).
  pool.on(
    'error',
    AsyncResource.bind(
      options.onPoolError ??
        ((error: Error) => console.error(`PostgreSQL connection error: ${error.message}`)),
    ),
  );
  return {
    db: drizzleNodePostgres({ client: pool, schema, ...loggerOf(options.logQuery) }),
    kind: 'postgres',
    query: async <Row>(sql: string, params?: unknown[]) => {
      options.logQuery?.(sql, params ?? []);
      return { rows: (await pool.query(sql, params)).rows as Row[] };
    },
    // The token store's per-request check, prepared once per connection.
    // The driver's own result, which has the rows: no promise or object of ours per query.
    prepared: (name: string, sql: string, params: unknown[]) => {
      options.logQuery?.(sql, params);
      return pool.query({ name, text: sql, values: params });
    },
    ping: async () => {
      await pool.query('SELECT 1');
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    listen: (channel, onNotify) => listenOnPostgres(pg, url, channel, onNotify),
    close: once(() => pool.end()),
    // Migrations run on a connection of their own, outside the pool: a long one (an index on a
    // large table) is no request, and has no query timeout.
    inTransaction: async (work) => {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
      await client.connect();
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
        await client.end().catch(() => undefined);
      }
    },
  };
}

/**
 * LISTEN on a connection of its own (a pooled one would be handed to queries), opened again a
 * second after it drops; a reconnect counts as a notification, since one may have been missed.
 */
async function listenOnPostgres(
  pg: typeof import('pg').default,
  url: string,
  channel: string,
  onNotify: () => void,
): Promise<() => Promise<void>> {
  let stopped = false;
  let client: InstanceType<typeof pg.Client> | undefined;
  let retry: ReturnType<typeof setTimeout> | undefined;
  const open = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    next.on('notification', (message) => {
      if (message.channel === channel) onNotify();
    });
    const reopen = () => {
      if (stopped || client !== next) return;
      client = undefined;
      retry = setTimeout(() => {
        open().then(onNotify, reopen);
      }, 1000);
      retry.unref();
    };
    next.on('error', reopen);
    next.on('end', reopen);
    client = next;
    await next.connect();
    await next.query(`LISTEN ${JSON.stringify(channel)}`);
  };
  await open();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end().catch(() => undefined);
  };
}

async function openPglite(
  location: { kind: 'memory' } | { kind: 'directory'; path: string },
  { logQuery, sharedBuffers = '32MB' }: OpenDatabaseOptions,
  from?: Blob,
): Promise<OpenedDatabase> {
  const [{ PGlite }, { drizzle: drizzlePglite }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('drizzle-orm/pglite'),
  ]);
  // PGlite's own answer to a bad size is only "failed to initialize properly".
  const size = /^([1-9]\d*)(kB|MB|GB)$/.exec(sharedBuffers);
  const kilobytes =
    size === null ? 0 : Number(size[1]) * { kB: 1, MB: 1024, GB: 1024 * 1024 }[size[2] as 'kB'];
  if (kilobytes < 128) {
    throw new TypeError(
      `sharedBuffers must be a size of 128kB or more, such as '32MB' (kB, MB or GB), not ${JSON.stringify(sharedBuffers)}`,
    );
  }
  // PGlite's own start parameters, and a page cache sized for a small database.
  const settings = { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffers}`] };
  let client: PGlite;
  let release: () => Promise<void> = () => Promise.resolve();
  if (location.kind === 'memory') {
    client = new PGlite(from === undefined ? settings : { ...settings, loadDataDir: from });
  } else {
    await writableDirectory(location.path, 'DATABASE_URL');
    const lock = await lockDirectory(location.path);
    release = () => lock.release();
    try {
      client = new PGlite(location.path, settings);
    } catch (error) {
      await release();
      throw error;
    }
  }
  try {
    await client.waitReady;
  } catch (error) {
    await release();
    throw error;
  }
  return {
    db: drizzlePglite({ client, schema, ...loggerOf(logQuery) }),
    kind: 'pglite',
    query: async <Row>(sql: string, params?: unknown[]) => {
      logQuery?.(sql, params ?? []);
      return { rows: (await client.query<Row>(sql, params)).rows };
    },
    ping: async () => {
      await client.query('SELECT 1');
    },
    listen: async (channel, onNotify) => {
      const stop = await client.listen(channel, onNotify);
      return async () => {
        if (!client.closed) await stop();
      };
    },
    close: once(async () => {
      try {
        if (!client.closed) await client.close();
      } finally {
        await release();
      }
    }),
    dumpDataDir: () => client.dumpDataDir('none'),
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
