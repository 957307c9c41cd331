/**
 * Databases for tests: the same suites run on an in-memory PGlite and, when a server is
 * reachable, on a fresh PostgreSQL database made for the suite and dropped after it.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type Database, openDatabase } from './connect.js';

export interface TestEngine {
  name: 'PGlite' | 'PostgreSQL';
  /** No server to test against: the suite is skipped (and CI fails earlier, in the global setup). */
  skip: boolean;
  /** A new, migrated, empty database; `dispose` closes it and, on a server, drops it. */
  open(): Promise<TestDatabase>;
}

export interface TestDatabase {
  database: Database;
  /** The URL it was opened with, to open it again (a second instance). */
  url: string;
  dispose(): Promise<void>;
}

/** Creates an empty database on a PostgreSQL server; returns its URL and how to drop it. */
export async function createPostgresDatabase(
  adminUrl: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `proceed_test_${randomBytes(8).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const dropper = new pg.Client({ connectionString: adminUrl });
      await dropper.connect();
      try {
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  };
}

/** The engines to run a suite on. Pass `inject('postgresUrl')`. */
export function testEngines(postgresUrl: string | null): TestEngine[] {
  return [
    {
      name: 'PGlite',
      skip: false,
      async open() {
        const database = await openDatabase('memory://');
        return { database, url: 'memory://', dispose: () => database.close() };
      },
    },
    {
      name: 'PostgreSQL',
      skip: postgresUrl === null,
      async open() {
        const created = await createPostgresDatabase(postgresUrl as string);
        const database = await openDatabase(created.url, { poolSize: 25 });
        return {
          database,
          url: created.url,
          async dispose() {
            await database.close();
            await created.drop();
          },
        };
      },
    },
  ];
}

/** Empties every table between tests (migrations stay applied). */
export async function truncateAll(database: Database): Promise<void> {
  await database.query('TRUNCATE users, posts, password_resets CASCADE');
}
