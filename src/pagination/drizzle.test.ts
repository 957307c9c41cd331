/**
 * The shared suite over real PostgreSQL engines: Drizzle over PGlite, plain SQL over PGlite
 * (`keysetSql`), and Drizzle over a PostgreSQL server when one is reachable.
 */
import { PGlite } from '@electric-sql/pglite';
import { and, asc, count, desc, eq, gt, lt, type SQL } from 'drizzle-orm';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { integer, type PgDatabase, type PgQueryResultHKT, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { createScratchDatabase } from '../../test/postgres.js';
import { keysetClauses, keysetSql, paginateKeyset } from './cursor.js';
import { offsetResult, offsetWindow } from './offset.js';
import {
  describePaginationSource,
  type Filters,
  type PaginationSource,
  type Row,
} from './pagination.cases.js';

const items = pgTable('items', {
  id: uuid('id').primaryKey(),
  tag: text('tag').$type<'a' | 'b'>().notNull(),
  name: text('name').notNull(),
  score: integer('score').notNull(),
});

const createTable =
  'CREATE TABLE items (id uuid PRIMARY KEY, tag text NOT NULL, name text NOT NULL, score integer NOT NULL)';
const operators = { lt, gt, asc, desc };
const sortColumns = { name: items.name, score: items.score } as const;

type Db = PgDatabase<PgQueryResultHKT>;
type Exec = (sql: string, params?: unknown[]) => Promise<{ rows: unknown[] }>;

function drizzleSource(db: Db, exec: Exec, close: () => Promise<void>): PaginationSource {
  const tagFilter = (filters: Filters): SQL | undefined =>
    filters.tag === undefined ? undefined : eq(items.tag, filters.tag);
  return {
    async reset(rows) {
      await exec('DELETE FROM items');
      if (rows.length > 0) await db.insert(items).values([...rows]);
    },
    async insert(rows) {
      await db.insert(items).values([...rows]);
    },
    async remove(id) {
      await db.delete(items).where(eq(items.id, id));
    },
    cursor(params) {
      return paginateKeyset(
        params,
        (query) => {
          const keyset = keysetClauses(operators, items.id, query);
          return db
            .select()
            .from(items)
            .where(and(tagFilter(params), keyset.where))
            .orderBy(keyset.orderBy)
            .limit(keyset.limit);
        },
        { key: 'id' },
      );
    },
    async offset(params) {
      const direction = params.sortOrder === 'desc' ? desc : asc;
      const column =
        params.sortBy === undefined ? undefined : sortColumns[params.sortBy as keyof typeof sortColumns];
      const order = column === undefined ? [direction(items.id)] : [direction(column), direction(items.id)];
      const { limit, offset } = offsetWindow(params);
      const [rows, [counted]] = await Promise.all([
        db
          .select()
          .from(items)
          .where(tagFilter(params))
          .orderBy(...order)
          .limit(limit)
          .offset(offset),
        db.select({ total: count() }).from(items).where(tagFilter(params)),
      ]);
      return offsetResult(rows, counted?.total ?? 0, params);
    },
    close,
  };
}

function plainSqlSource(exec: Exec, close: () => Promise<void>): PaginationSource {
  const insert = async (rows: readonly Row[]) => {
    for (const row of rows) {
      await exec('INSERT INTO items (id, tag, name, score) VALUES ($1, $2, $3, $4)', [
        row.id,
        row.tag,
        row.name,
        row.score,
      ]);
    }
  };
  return {
    async reset(rows) {
      await exec('DELETE FROM items');
      await insert(rows);
    },
    insert,
    async remove(id) {
      await exec('DELETE FROM items WHERE id = $1', [id]);
    },
    cursor(params) {
      return paginateKeyset(
        params,
        async (query) => {
          const values: unknown[] = [];
          const conditions: string[] = [];
          if (params.tag !== undefined) {
            values.push(params.tag);
            conditions.push(`tag = $${values.length}`);
          }
          const keyset = keysetSql(query, { column: 'items.id', params: values });
          if (keyset.where !== undefined) conditions.push(keyset.where);
          const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
          const sql = `SELECT id, tag, name, score FROM items ${where} ORDER BY ${keyset.orderBy} LIMIT ${keyset.limit}`;
          return (await exec(sql, values)).rows as Row[];
        },
        { key: 'id' },
      );
    },
    async offset(params) {
      const direction = params.sortOrder === 'desc' ? 'DESC' : 'ASC';
      const column =
        params.sortBy === 'name' || params.sortBy === 'score' ? `${params.sortBy} ${direction}, ` : '';
      const where = params.tag === undefined ? '' : 'WHERE tag = $1';
      const values = params.tag === undefined ? [] : [params.tag];
      const { limit, offset } = offsetWindow(params);
      const rows = await exec(
        `SELECT id, tag, name, score FROM items ${where} ORDER BY ${column}id ${direction} LIMIT ${limit} OFFSET ${offset}`,
        values,
      );
      const total = await exec(`SELECT count(*)::int AS total FROM items ${where}`, values);
      return offsetResult(rows.rows as Row[], (total.rows[0] as { total: number }).total, params);
    },
    close,
  };
}

async function openPglite() {
  const client = new PGlite();
  await client.exec(createTable);
  return { client, exec: (sql: string, params?: unknown[]) => client.query(sql, params) };
}

describePaginationSource('Drizzle on PGlite', async () => {
  const { client, exec } = await openPglite();
  return drizzleSource(drizzlePglite(client), exec, () => client.close());
});

describePaginationSource('plain SQL on PGlite (keysetSql)', async () => {
  const { client, exec } = await openPglite();
  return plainSqlSource(exec, () => client.close());
});

const postgresUrl = inject('postgresUrl');

describe.skipIf(postgresUrl === null)('PostgreSQL server', () => {
  describePaginationSource('Drizzle on PostgreSQL', async () => {
    const scratch = await createScratchDatabase(postgresUrl as string, 'proceed_pagination');
    const pool = new pg.Pool({ connectionString: scratch.url, max: 4 });
    await pool.query(createTable);
    const exec: Exec = (sql, params) => pool.query(sql, params);
    return drizzleSource(drizzleNodePg(pool), exec, async () => {
      await pool.end();
      await scratch.drop();
    });
  });
});

describe('keysetSql', () => {
  it('numbers the cursor after the parameters already there and quotes the column', () => {
    const params: unknown[] = ['published'];
    expect(keysetSql({ cursor: 'c', towards: 'older', limit: 21 }, { column: 'posts.id', params })).toEqual({
      where: '"posts"."id" < $2',
      orderBy: '"posts"."id" DESC',
      limit: 21,
    });
    expect(params).toEqual(['published', 'c']);
    expect(
      keysetSql({ cursor: undefined, towards: 'newer', limit: 5 }, { column: 'id', params: [] }),
    ).toEqual({
      where: undefined,
      orderBy: '"id" ASC',
      limit: 5,
    });
  });

  it('refuses a column that is not a plain identifier', () => {
    expect(() =>
      keysetSql({ cursor: 'c', towards: 'older', limit: 1 }, { column: 'id; DROP TABLE x', params: [] }),
    ).toThrow('Not a plain SQL column name');
  });
});
