import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { ProceedConfigError, unavailableProblem } from 'proceedjs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPostgresDatabase, testEngines } from '../../test/databases.js';
import { openDatabase } from './connect.js';
import { migrationsDirectory, readMigrations } from './migrate.js';
import { attachments, passwordResets, posts, users } from './schema.js';
import { usersRepository } from './users.js';

/** The versions of the blog's own migrations, as `schema_migrations` lists them. */
const shippedVersions = async () => (await readMigrations()).map(({ version }) => ({ version }));

const temporaryDirectories: string[] = [];
async function temporaryDirectory(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'proceed-blog-'));
  temporaryDirectories.push(directory);
  return directory;
}
afterAll(async () => {
  await Promise.all(temporaryDirectories.map((directory) => rm(directory, { recursive: true, force: true })));
});

describe('openDatabase with PGlite', () => {
  it('opens an in-memory database, migrated and answering', async () => {
    const database = await openDatabase('memory://');
    try {
      expect(database.kind).toBe('pglite');
      await expect(database.ping()).resolves.toBeUndefined();
      const { rows } = await database.query<{ version: string; name: string }>(
        'SELECT version, name FROM schema_migrations ORDER BY version',
      );
      expect(rows).toEqual((await readMigrations()).map(({ version, name }) => ({ version, name })));
    } finally {
      await database.close();
    }
    await expect(database.close()).resolves.toBeUndefined();
  });

  it('sizes its page cache for a small database: 32MB unless told', async () => {
    const sharedBuffers = async (database: Awaited<ReturnType<typeof openDatabase>>) =>
      (await database.query<{ shared_buffers: string }>('SHOW shared_buffers')).rows[0]?.shared_buffers;
    const directory = await temporaryDirectory();
    const opened = [
      await openDatabase('memory://'),
      await openDatabase('memory://', { fromTemplate: true, sharedBuffers: '16MB' }),
      await openDatabase(`file://${directory}`, { sharedBuffers: '48MB' }),
    ];
    try {
      expect(await Promise.all(opened.map(sharedBuffers))).toEqual(['32MB', '16MB', '48MB']);
    } finally {
      await Promise.all(opened.map((database) => database.close()));
    }
    for (const size of ['lots', '16kB', '32mb']) {
      await expect(openDatabase('memory://', { sharedBuffers: size })).rejects.toThrow(
        `sharedBuffers must be a size of 128kB or more, such as '32MB' (kB, MB or GB), not "${size}"`,
      );
    }
  });

  it('starts in-memory databases from a migrated template when asked, each one its own', async () => {
    const [first, second] = await Promise.all([
      openDatabase('memory://', { fromTemplate: true }),
      openDatabase('memory://', { fromTemplate: true }),
    ]);
    const third = await openDatabase('memory://', { fromTemplate: true });
    try {
      await usersRepository(first.db).create({ email: 'ada@example.com', name: 'Ada', passwordHash: 'h' });
      for (const database of [second, third]) {
        expect((await database.query('SELECT count(*)::int AS users FROM users')).rows).toEqual([
          { users: 0 },
        ]);
        expect((await database.query('SELECT version FROM schema_migrations')).rows).toEqual(
          await shippedVersions(),
        );
      }
    } finally {
      await Promise.all([first.close(), second.close(), third.close()]);
    }
  });

  it('refuses a directory it cannot write at start-up, naming DATABASE_URL and the way out', async () => {
    const file = join(await temporaryDirectory(), 'a-file');
    await writeFile(file, '');
    const refused = openDatabase(join(file, 'db'));
    await expect(refused).rejects.toBeInstanceOf(ProceedConfigError);
    await expect(refused).rejects.toThrow(
      /^Cannot write to the directory .*a-file\/db \(DATABASE_URL\): ENOTDIR.*or set DATABASE_URL to a directory it can write\.$/,
    );
  });

  it('keeps data in a directory across close and reopen, and migrates only once', async () => {
    const directory = join(await temporaryDirectory(), 'nested', 'db');
    const first = await openDatabase(directory);
    const ada = await usersRepository(first.db).create({
      email: 'ada@example.com',
      name: 'Ada',
      passwordHash: 'h',
    });
    await first.close();

    const second = await openDatabase(directory);
    try {
      expect(await usersRepository(second.db).findById(ada.id)).toEqual(ada);
      const { rows } = await second.query('SELECT count(*)::int AS applied FROM schema_migrations');
      expect(rows).toEqual([{ applied: (await shippedVersions()).length }]);
    } finally {
      await second.close();
    }
  });

  it('applies pending migrations in one transaction: a failing one leaves nothing behind', async () => {
    const directory = await temporaryDirectory();
    const migrations = await temporaryDirectory();
    const init = (await readMigrations())[0];
    await writeFile(join(migrations, '0001_init.sql'), init?.sql ?? '');
    await (await openDatabase(directory, { migrations })).close();

    await writeFile(join(migrations, '0002_good.sql'), 'CREATE TABLE tags (name text PRIMARY KEY);');
    await writeFile(join(migrations, '0003_bad.sql'), 'ALTER TABLE nowhere ADD COLUMN x int;');
    await expect(openDatabase(directory, { migrations })).rejects.toThrow(/nowhere/);

    const reopened = await openDatabase(directory);
    try {
      const { rows } = await reopened.query("SELECT to_regclass('tags') AS tags");
      expect(rows).toEqual([{ tags: null }]);
      // Reopened with the shipped migrations: theirs are applied, none of the failed run's.
      expect((await reopened.query('SELECT version, name FROM schema_migrations')).rows).toEqual(
        (await readMigrations()).map(({ version, name }) => ({ version, name })),
      );
    } finally {
      await reopened.close();
    }
  });

  it('refuses a migration file with a name it cannot order', async () => {
    const migrations = await temporaryDirectory();
    await writeFile(join(migrations, 'init.sql'), 'SELECT 1;');
    await expect(readMigrations(migrations)).rejects.toThrow(
      'Migration file "init.sql" must be named NNNN_name.sql',
    );
  });

  it('reads the blog migrations in version order', async () => {
    const migrations = await readMigrations(migrationsDirectory);
    expect(migrations.map((migration) => migration.version)).toEqual(
      [...migrations.map((migration) => migration.version)].sort(),
    );
  });
});

const postgresUrl = inject('postgresUrl');

describe.skipIf(postgresUrl === null)('openDatabase with PostgreSQL', () => {
  let created: Awaited<ReturnType<typeof createPostgresDatabase>>;
  beforeAll(async () => {
    created = await createPostgresDatabase(postgresUrl as string);
  });
  afterAll(async () => {
    await created?.drop();
  });

  it('lets several instances start at once: each migration is applied exactly once', async () => {
    const instances = await Promise.all(
      Array.from({ length: 5 }, () => openDatabase(created.url, { poolSize: 2 })),
    );
    try {
      expect(instances.every((instance) => instance.kind === 'postgres')).toBe(true);
      const { rows } = await (instances[0] as (typeof instances)[0]).query(
        'SELECT version FROM schema_migrations',
      );
      expect(rows).toEqual(await shippedVersions());
    } finally {
      await Promise.all(instances.map((instance) => instance.close()));
    }
  });

  it('makes every failure to obtain a connection an outage, and leaves query errors alone', async () => {
    const own = await createPostgresDatabase(postgresUrl as string);
    const name = new URL(own.url).pathname.slice(1);
    const admin = new pg.Client({ connectionString: postgresUrl as string });
    await admin.connect();
    const database = await openDatabase(own.url, { onPoolError: () => undefined });
    try {
      await expect(database.query('SELEC 1')).rejects.toMatchObject({ code: '42601' });
      const divided = await database.query('SELECT 1 / 0').catch((error: unknown) => error);
      expect(divided).toMatchObject({ code: '22012' });
      expect(unavailableProblem(divided)).toBeUndefined();

      // Closed to connections (SQLSTATE 55000 at connect, in no list of codes), its sessions ended.
      await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
      const failures = await Promise.all([
        database.query('SELECT 1').catch((error: unknown) => error),
        database.db.execute('SELECT 1').catch((error: unknown) => error),
        database.ping().catch((error: unknown) => error),
      ]);
      for (const failure of failures) {
        expect(failure, String(failure)).toBeInstanceOf(Error);
        expect(unavailableProblem(failure)?.status, String(failure)).toBe(503);
      }
      await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`);
      expect((await database.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`).catch(() => undefined);
      await admin.end();
      await database.close();
      await own.drop();
    }
  });

  it("hears an idle connection's loss outside the request that last used it", async () => {
    // As a traced request's context travels: what it starts (a connection's socket) carries it.
    const requestContext = new AsyncLocalStorage<string>();
    const heard: (string | undefined)[] = [];
    const database = await openDatabase(created.url, {
      onPoolError: () => heard.push(requestContext.getStore()),
    });
    const admin = new pg.Client({ connectionString: postgresUrl as string });
    await admin.connect();
    try {
      const pid = await requestContext.run('a request', async () => {
        const { rows } = await database.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        return rows[0]?.pid;
      });
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      await expect.poll(() => heard.length, { timeout: 5000 }).toBe(1);
      expect(heard).toEqual([undefined]);
    } finally {
      await admin.end();
      await database.close();
    }
  });

  it('accepts postgresql:// as well, and names a server it cannot use in one line, without the password', async () => {
    const database = await openDatabase(created.url.replace(/^postgres:/, 'postgresql:'));
    await database.close();
    const unreachable = new URL(created.url);
    unreachable.port = '1';
    unreachable.password = 'hunter2-secret';
    const refused = openDatabase(unreachable.toString());
    await expect(refused).rejects.toThrow(ProceedConfigError);
    await expect(refused).rejects.toThrow(
      new RegExp(
        `^Cannot use the PostgreSQL database .*@127\\.0\\.0\\.1:1${unreachable.pathname} \\(DATABASE_URL\\): .*ECONNREFUSED`,
      ),
    );
    await expect(refused).rejects.not.toThrow(/hunter2/);
    const missing = new URL(created.url);
    missing.pathname = '/no_such_database_here';
    await expect(openDatabase(missing.toString())).rejects.toThrow(
      /Cannot use the PostgreSQL database .*\/no_such_database_here \(DATABASE_URL\): database "no_such_database_here" does not exist/,
    );
  });
});

/** The Drizzle tables must describe what the migrations create, or queries fail at run time. */
for (const engine of testEngines(postgresUrl)) {
  describe.skipIf(engine.skip)(`schema on ${engine.name}`, () => {
    let opened: Awaited<ReturnType<typeof engine.open>>;
    beforeAll(async () => {
      opened = await engine.open();
    });
    afterAll(async () => {
      await opened?.dispose();
    });

    it.each([
      ['users', users],
      ['posts', posts],
      ['password_resets', passwordResets],
      ['attachments', attachments],
    ] as [string, PgTable][])('matches the migrated table %s', async (_, table) => {
      const config = getTableConfig(table);
      const { rows } = await opened.database.query<{
        column_name: string;
        is_nullable: string;
        udt_name: string;
      }>(
        'SELECT column_name, is_nullable, udt_name FROM information_schema.columns WHERE table_name = $1 ORDER BY column_name',
        [config.name],
      );
      const expected = config.columns
        .map((column) => ({
          column_name: column.name,
          is_nullable: column.notNull ? 'NO' : 'YES',
          udt_name: column
            .getSQLType()
            .replace('timestamp with time zone', 'timestamptz')
            .replace('boolean', 'bool')
            .replace('integer', 'int4'),
        }))
        .sort((a, b) => a.column_name.localeCompare(b.column_name));
      expect(rows).toEqual(expected);
      const { rows: indexes } = await opened.database.query<{ indexname: string }>(
        'SELECT indexname FROM pg_indexes WHERE tablename = $1',
        [config.name],
      );
      for (const index of config.indexes) {
        expect(indexes.map((row) => row.indexname)).toContain(index.config.name);
      }
    });
  });
}
