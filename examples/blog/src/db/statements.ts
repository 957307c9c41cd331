/**
 * The blog's most frequent statements (the reads of a post and of the feed, the create), written
 * by Drizzle and run by the driver (docs/performance.md, "The blog by hand").
 */
import { is, Param, Placeholder, type SQLWrapper } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { Database } from './connect.js';

const rowsOf = (result: { rows: unknown[] }) => result.rows;

/** Columns the drivers already read as their TypeScript values: nothing left to map. */
const readAsIs = new Set(['PgUUID', 'PgText', 'PgVarchar', 'PgInteger', 'PgBoolean']);

/**
 * A statement that Drizzle writes from the schema (a select, or an insert with its `RETURNING`),
 * run as a named prepared statement on the driver itself (PGlite: a plain query), its rows handed
 * on as the driver reads them. Drizzle's own prepared statements map every field of every row and
 * wrap each run in three tracing spans: on the feed, a third of the blog's time beyond the
 * hand-written server's.
 *
 * Only for `columns` (what it selects or returns) the driver reads as their values (uuid, text,
 * integer, boolean) under their own names: anything else (a timestamp Drizzle turns into a Date,
 * a renamed column) is refused here, when the repository is built, not found wrong in an answer.
 *
 * @example
 * const feed = directStatement(database, 'posts_feed', summaryColumns,
 *   db.select(summaryColumns).from(posts).orderBy(desc(posts.id)).limit(sql.placeholder('limit')));
 * const rows = await feed({ limit: 21 });
 */
export function directStatement<Row>(
  database: Pick<Database, 'query' | 'prepared'>,
  name: string,
  columns: { [K in keyof Row]: PgColumn },
  query: SQLWrapper & { toSQL(): { sql: string; params: unknown[] } },
): (values: Record<string, unknown>) => Promise<Row[]> {
  for (const [key, column] of Object.entries<PgColumn>(columns)) {
    if (!readAsIs.has(column.columnType))
      throw new Error(`${name}: column "${column.name}" (${column.columnType}) needs Drizzle's mapping`);
    if (column.name !== key) throw new Error(`${name}: "${key}" would come back as "${column.name}"`);
  }
  const { sql, params } = query.toSQL();
  // Each parameter is a placeholder filled per run (in an insert's values, wrapped with the column
  // that encodes it), or a value fixed in the query.
  const fill = params.map((param) => {
    const placeholder = is(param, Param) && is(param.value, Placeholder) ? param.value : param;
    if (!is(placeholder, Placeholder)) return () => param;
    const encode = is(param, Param) ? (value: unknown) => param.encoder.mapToDriverValue(value) : undefined;
    return (values: Record<string, unknown>) => {
      if (!(placeholder.name in values)) throw new Error(`${name}: no value for "${placeholder.name}"`);
      const value = values[placeholder.name];
      return encode === undefined ? value : encode(value);
    };
  });
  const run =
    database.prepared ?? ((_name: string, text: string, values: unknown[]) => database.query(text, values));
  // Not an async function: no promise and resumption of its own per run (a missing value still
  // rejects, as it did).
  return (values) => {
    let params: unknown[];
    try {
      params = fill.map((value) => value(values));
    } catch (error) {
      return Promise.reject(error);
    }
    return run(name, sql, params).then(rowsOf) as Promise<Row[]>;
  };
}
