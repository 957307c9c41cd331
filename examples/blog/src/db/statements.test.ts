import { desc, eq, fillPlaceholders, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type TestDatabase, testEngines, truncateAll } from '../../test/databases.js';
import type { Database } from './connect.js';
import { posts } from './schema.js';
import { directStatement } from './statements.js';
import { usersRepository } from './users.js';

for (const engine of testEngines(inject('postgresUrl'))) {
  describe.skipIf(engine.skip)(`directStatement on ${engine.name}`, () => {
    let opened: TestDatabase;
    let database: Database;
    let authorId: string;

    beforeAll(async () => {
      opened = await engine.open();
      database = opened.database;
      await truncateAll(database);
      const author = await usersRepository(database.db).create({
        email: 'ada@example.com',
        name: 'Ada',
        passwordHash: 'x',
      });
      authorId = author.id;
      await database.db.insert(posts).values(
        ['draft', 'published', 'published'].map((status, index) => ({
          id: `01900000-0000-7000-8000-00000000000${index}`,
          authorId: author.id,
          title: `Post ${index}`,
          content: 'Body',
          excerpt: `Excerpt ${index}`,
          status: status as 'draft' | 'published',
        })),
      );
    });
    afterAll(async () => {
      await opened?.dispose();
    });

    const columns = { id: posts.id, title: posts.title, version: posts.version };

    it("answers what Drizzle's own statement answers, fixed values and placeholders filled", async () => {
      const query = database.db
        .select(columns)
        .from(posts)
        .where(eq(posts.status, 'published'))
        .orderBy(desc(posts.id))
        .limit(sql.placeholder('limit'));
      const direct = directStatement(database, 'test_published', columns, query);
      expect(await direct({ limit: 5 })).toEqual(
        await query.prepare('test_published_drizzle').execute({ limit: 5 }),
      );
      expect(await direct({ limit: 1 })).toEqual([
        { id: '01900000-0000-7000-8000-000000000002', title: 'Post 2', version: 1 },
      ]);
      // Run again: a statement prepared once per connection is reused.
      expect(await direct({ limit: 1 })).toHaveLength(1);
    });

    it("inserts through an insert's placeholders, each encoded by its column, and returns its columns", async () => {
      const returned = { id: posts.id, title: posts.title, status: posts.status, version: posts.version };
      const insert = directStatement(
        database,
        'test_insert',
        returned,
        database.db
          .insert(posts)
          .values({
            id: sql.placeholder('id'),
            authorId: sql.placeholder('authorId'),
            title: sql.placeholder('title'),
            content: 'Body',
            excerpt: '',
            status: sql.placeholder('status'),
          })
          .returning(returned),
      );
      const id = '01900000-0000-7000-8000-000000000009';
      expect(await insert({ id, authorId, title: 'Inserted', status: 'draft' })).toEqual([
        { id, title: 'Inserted', status: 'draft', version: 1 },
      ]);
      const [stored] = await database.db.select().from(posts).where(eq(posts.id, id));
      expect(stored).toMatchObject({ title: 'Inserted', content: 'Body', status: 'draft' });
      await expect(insert({ id: '01900000-0000-7000-8000-00000000000a', title: 'x' })).rejects.toThrow(
        'test_insert: no value for "authorId"',
      );
    });

    it('gives the driver what Drizzle would: each value through its column (a Date as a timestamp writes it)', async () => {
      const sent: unknown[][] = [];
      const recording: Pick<Database, 'query'> = {
        query: async <Row>(_sql: string, params?: unknown[]) => {
          sent.push(params ?? []);
          return { rows: [] as Row[] };
        },
      };
      const query = database.db
        .insert(posts)
        .values({
          id: sql.placeholder('id'),
          authorId: sql.placeholder('authorId'),
          title: 'T',
          content: 'C',
          excerpt: '',
          createdAt: sql.placeholder('at'),
        })
        .returning({ id: posts.id });
      const values = {
        id: '01900000-0000-7000-8000-00000000000b',
        authorId,
        at: new Date('2026-01-02T03:04:05Z'),
      };
      await directStatement(recording, 'test_encoded', { id: posts.id }, query)(values);
      const drizzle = fillPlaceholders(query.toSQL().params, values);
      expect(sent).toEqual([drizzle]);
      expect(drizzle).not.toContain(values.at);
    });

    it('refuses a run without a value for a placeholder', async () => {
      const direct = directStatement(
        database,
        'test_by_id',
        columns,
        database.db
          .select(columns)
          .from(posts)
          .where(eq(posts.id, sql.placeholder('id'))),
      );
      await expect(direct({})).rejects.toThrow('test_by_id: no value for "id"');
    });

    it('refuses, when built, a column Drizzle would map or rename', () => {
      const timestamped = { id: posts.id, createdAt: posts.createdAt };
      expect(() =>
        directStatement(database, 'test_dates', timestamped, database.db.select(timestamped).from(posts)),
      ).toThrow('test_dates: column "created_at" (PgTimestamp) needs Drizzle\'s mapping');
      const renamed = { id: posts.id, authorId: posts.authorId };
      expect(() =>
        directStatement(database, 'test_renamed', renamed, database.db.select(renamed).from(posts)),
      ).toThrow('test_renamed: "authorId" would come back as "author_id"');
    });
  });
}
