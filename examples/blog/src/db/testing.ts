/**
 * Databases for tests: the same suites run on an in-memory PGlite and, when a server is
 * reachable, on a fresh PostgreSQL database made for the suite and dropped after it.
 */
import { createScratchDatabase } from '../../../../test/postgres.js';
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
export function createPostgresDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  return createScratchDatabase(adminUrl, 'proceed_test');
}

/** The engines to run a suite on. Pass `inject('postgresUrl')`. */
export function testEngines(postgresUrl: string | null): TestEngine[] {
  return [
    {
      name: 'PGlite',
      skip: false,
      async open() {
        const database = await openDatabase('memory://', { fromTemplate: true });
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
