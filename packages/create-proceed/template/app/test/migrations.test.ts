/**
 * Instances that start together on one PostgreSQL apply each migration once: the first takes the
 * migration lock (src/db.ts), the others wait for it and then find nothing to do.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { migrationLock, openDatabase } from '../src/db.js';
import { createPostgresDatabase, postgresUrl } from './databases.js';

const journal = JSON.parse(
  readFileSync(new URL('../drizzle/meta/_journal.json', import.meta.url), 'utf8'),
) as {
  entries: unknown[];
};

const applied = async (url: string) => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query('SELECT id FROM drizzle.__drizzle_migrations')).rowCount;
  } finally {
    await client.end();
  }
};

describe('migrations on PostgreSQL', () => {
  if (postgresUrl === undefined) {
    it.skip('needs TEST_DATABASE_URL', () => {});
    return;
  }
  const adminUrl = postgresUrl;

  it('are applied once when two instances start at the same time', async () => {
    const created = await createPostgresDatabase(adminUrl);
    try {
      const instances = await Promise.all([openDatabase(created.url), openDatabase(created.url)]);
      expect(await applied(created.url)).toBe(journal.entries.length);
      for (const { sql } of instances)
        expect((await sql.query('SELECT count(*) FROM notes')).rows).toHaveLength(1);
      await Promise.all(instances.map((instance) => instance.close()));
      // A restart finds them applied.
      await (await openDatabase(created.url)).close();
      expect(await applied(created.url)).toBe(journal.entries.length);
    } finally {
      await created.drop();
    }
  });

  it('wait while another instance holds the migration lock', async () => {
    const created = await createPostgresDatabase(adminUrl);
    const holder = new pg.Client({ connectionString: created.url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [migrationLock]);
      let opened = false;
      let settled = false;
      const opening = openDatabase(created.url).then((database) => {
        opened = true;
        return database;
      });
      // A failed opening ends the wait below too; awaited further down, it fails with its error.
      opening.then(
        () => {
          settled = true;
        },
        () => {
          settled = true;
        },
      );
      // Until the opening instance is queued behind the lock: PostgreSQL lists its request as not granted.
      const waiting = async () =>
        (
          await holder.query(
            "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
          )
        ).rowCount;
      while (!settled && (await waiting()) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(opened).toBe(false);
      expect((await holder.query("SELECT to_regclass('notes') AS notes")).rows).toEqual([{ notes: null }]);
      await holder.query('SELECT pg_advisory_unlock($1)', [migrationLock]);
      await (await opening).close();
      expect(await applied(created.url)).toBe(journal.entries.length);
    } finally {
      await holder.end();
      await created.drop();
    }
  });
});
