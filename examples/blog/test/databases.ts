/**
 * Databases for tests: the same suites run on an in-memory PGlite and, when a server is
 * reachable, on a fresh PostgreSQL database made for the suite and dropped after it.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type Database, openDatabase } from '../src/db/index.js';

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

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Where a blog on the PostgreSQL database at `url` keeps its attachments' bytes in the tests: one
 * directory per database, which every instance on it shares, removed when the database is.
 */
export function attachmentsDirectoryOf(url: string): string {
  return join(tmpdir(), 'proceed-blog-attachments', new URL(url).pathname.slice(1));
}

/**
 * Creates an empty database with a random name on a PostgreSQL server; returns its URL and how to
 * drop it (its attachments directory with it). `drop()` waits for the suite's own connections to finish closing (a pool's `end()`
 * resolves before the server has seen every goodbye), then forces the matter.
 */
export async function createPostgresDatabase(
  adminUrl: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `blog_test_${randomBytes(6).toString('hex')}`;
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const dropDatabase = () =>
    withClient(adminUrl, async (client) => {
      // Bounded in time, not in tries: PostgreSQL itself waits up to 5 s for the other sessions
      // before each refusal, so a session that lingers made 100 tries take minutes.
      const forceAfter = Date.now() + 10_000;
      while (Date.now() < forceAfter) {
        try {
          await client.query(`DROP DATABASE IF EXISTS ${name}`);
          return;
        } catch (error) {
          // 55006: the database is still in use by a closing connection.
          if ((error as { code?: string }).code !== '55006') throw error;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    });
  const drop = async () => {
    await dropDatabase();
    await rm(attachmentsDirectoryOf(url.toString()), { recursive: true, force: true });
  };
  return { url: url.toString(), drop };
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
