/**
 * The databases the tests run on: PGlite in memory, always, and PostgreSQL when
 * TEST_DATABASE_URL names a server where they may create databases (each suite gets one of its
 * own, dropped after it). A TEST_DATABASE_URL that cannot be reached fails those tests; only an
 * unset one skips them.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { App } from 'proceedjs';
import { afterAll, beforeAll } from 'vitest';
import { buildApp } from '../src/app.js';
import type { AppContext } from '../src/context.js';
import { type Database, openDatabase } from '../src/db.js';

export const postgresUrl = process.env.TEST_DATABASE_URL || undefined;

export interface Engine {
  name: 'PGlite' | 'PostgreSQL';
  /** True when there is no server to run on (TEST_DATABASE_URL unset). */
  skip: boolean;
  /** A new, empty database: its URL, and how to drop it. */
  create(): Promise<TestDatabase>;
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export const engines: Engine[] = [
  { name: 'PGlite', skip: false, create: async () => ({ url: 'memory://', drop: async () => {} }) },
  {
    name: 'PostgreSQL',
    skip: postgresUrl === undefined,
    create: () => createPostgresDatabase(postgresUrl ?? ''),
  },
];

async function asAdmin(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Creates `test_<random>` on the server `adminUrl` names. */
export async function createPostgresDatabase(adminUrl: string): Promise<TestDatabase> {
  const name = `test_${randomBytes(6).toString('hex')}`;
  await asAdmin(adminUrl, `CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.href, drop: () => asAdmin(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

export interface Served {
  /** Where the app listens, e.g. `http://127.0.0.1:41234`. */
  origin: string;
  /** Its database, to arrange what the API cannot (an admin). */
  database: Database;
}

/**
 * For the suite: the app on a new database of the engine, listening on a free port. Read the
 * result's fields inside tests: they are set once the suite starts.
 */
export function useApp(engine: Engine): Served {
  const served = {} as Served;
  let created: TestDatabase | undefined;
  let app: App<AppContext> | undefined;
  beforeAll(async () => {
    created = await engine.create();
    served.database = await openDatabase(created.url);
    // Sign-ups at a cheap hash: the default's quarter of a second each adds up over a suite.
    app = await buildApp({ database: served.database, passwordCost: { N: 1024, r: 8, p: 1 } });
    served.origin = await app.listen({ port: 0, handleSignals: false, logRoutes: false });
  });
  afterAll(async () => {
    await app?.close();
    await served.database?.close();
    await created?.drop();
  });
  return served;
}
