/**
 * Cursor pagination (docs/pagination.md): feeds and infinite scroll. Items are ordered by a
 * unique, ever-growing key, newest first (key descending); a cursor is the key of an item and is
 * always exclusive.
 *
 * Exact rule, the same in both directions, so a client can walk either way without duplicates
 * or gaps:
 * - `nextCursor` is the key of the last returned item when at least one item (matching the
 *   filters) is older than it, else `null`. Send it with `direction=forward` for the next page.
 * - `prevCursor` is the key of the first returned item, `null` only when `data` is empty. Send it
 *   with `direction=backward` for the page before (it may be empty when nothing is newer).
 * - `forward` returns the `limit` items just after the cursor (older), `backward` the `limit`
 *   items just before it (newer); both newest first, never the cursor item itself.
 */
import { z } from 'zod';
import { checkFilterKeys, limitSchema, pageItems, resolveLimits } from './offset.js';

export type CursorDirection = 'forward' | 'backward';

/** What a cursor listing receives once its input is validated. */
export interface CursorParams {
  cursor?: string | undefined;
  limit: number;
  direction?: CursorDirection | undefined;
}

/** One page of a cursor listing, as it goes on the wire. */
export interface CursorPage<T> {
  data: T[];
  nextCursor: string | null;
  prevCursor: string | null;
}

/** The fixed part of every cursor input schema. */
export interface CursorShape<K extends z.ZodType = z.ZodString> {
  cursor: z.ZodOptional<K>;
  limit: z.ZodDefault<z.ZodNumber>;
  direction: z.ZodDefault<z.ZodEnum<{ forward: 'forward'; backward: 'backward' }>>;
}

export interface CursorInputOptions<K extends z.ZodType<string>, F extends z.ZodRawShape> {
  /** Largest `limit` accepted (default 100). */
  maxLimit?: number;
  /** `limit` when the client sends none (default 20). */
  defaultLimit?: number;
  /**
   * The schema of a cursor, e.g. `z.uuid()` when cursors are UUID keys: a malformed cursor is
   * then a 400 instead of reaching the database. Default: a non-empty string.
   */
  cursor?: K;
  /** Extra optional query parameters, applied before the cursor. */
  filters?: F;
}

const reservedCursorKeys = new Set(['cursor', 'limit', 'direction']);

/**
 * Builds the input schema of a cursor listing: `cursor`, `limit`, `direction` and the filters.
 *
 * @example
 * const listPostsInput = cursorInput({
 *   cursor: z.uuid(),
 *   filters: { authorId: z.uuid().optional(), status: z.enum(['draft', 'published']).optional() },
 * });
 * // GET /api/posts?limit=10&cursor=0190…&direction=backward
 */
export function cursorInput<
  K extends z.ZodType<string> = z.ZodString,
  F extends z.ZodRawShape = Record<never, never>,
>(options: CursorInputOptions<K, F> = {}): z.ZodObject<CursorShape<K> & F> {
  const { maxLimit, defaultLimit } = resolveLimits(options);
  checkFilterKeys(options.filters, reservedCursorKeys);
  const cursor = options.cursor ?? z.string().min(1).max(512);
  const shape: Record<string, z.ZodType> = {
    cursor: cursor
      .optional()
      .describe('Key of the item to start after (exclusive); absent: start at the newest'),
    limit: limitSchema(maxLimit, defaultLimit),
    direction: z
      .enum(['forward', 'backward'])
      .default('forward')
      .describe('forward: older items after the cursor; backward: newer items before it'),
  };
  return z.object({ ...shape, ...options.filters }) as unknown as z.ZodObject<CursorShape<K> & F>;
}

/** What a cursor page's output schema says of its bounds: the same numbers as its input's. */
export interface CursorPageOptions<K extends z.ZodType<string>> {
  /** The input's `maxLimit`: `data` holds that many items at most (`maxItems` in OpenAPI). */
  maxLimit?: number;
  /** The input's cursor schema (`z.uuid()`, say): `nextCursor` and `prevCursor` are such cursors. */
  cursor?: K;
}

/**
 * The output schema of a cursor listing: `{ data: item[], nextCursor, prevCursor }`. Give it the
 * input's `maxLimit` and `cursor` so that the document bounds the page and its cursors too.
 *
 * @example
 * procedure().input(listPostsInput).output(cursorPage(Post.public, { maxLimit: 100, cursor: z.uuid() })).query(listPosts);
 */
export function cursorPage<I extends z.ZodType, K extends z.ZodType<string> = z.ZodString>(
  item: I,
  options: CursorPageOptions<K> = {},
): z.ZodObject<{
  data: z.ZodArray<I>;
  nextCursor: z.ZodNullable<K>;
  prevCursor: z.ZodNullable<K>;
}> {
  const cursor = (options.cursor ?? z.string()) as K;
  return z.object({
    data: pageItems(item, options.maxLimit),
    nextCursor: cursor.nullable().describe('Send with direction=forward for older items; null at the end'),
    prevCursor: cursor
      .nullable()
      .describe('Send with direction=backward for newer items; null when data is empty'),
  });
}

/**
 * One read of a keyset source. The engine-specific part of cursor pagination is only this:
 * - `towards: 'older'`: items with key < `cursor` (all when `cursor` is undefined), key descending;
 * - `towards: 'newer'`: items with key > `cursor` (all when undefined), key ascending;
 * at most `limit` of them, after the listing's filters.
 */
export interface KeysetQuery {
  cursor: string | undefined;
  towards: 'older' | 'newer';
  limit: number;
}

/** Reads one {@link KeysetQuery} from a data source. */
export type KeysetFetch<T> = (query: KeysetQuery) => Promise<readonly T[]>;

/** How to read an item's key: a property name or a function. */
export type KeyOf<T> = { [P in keyof T]: T[P] extends string | number | bigint ? P : never }[keyof T];
export type KeySelector<T> = KeyOf<T> | ((item: T) => string | number | bigint);

/** Turns a key selector into a function that returns the key as a cursor string. */
export function cursorOf<T>(key: KeySelector<T>): (item: T) => string {
  const read = typeof key === 'function' ? key : (item: T) => item[key];
  return (item) => {
    const value = read(item);
    // "undefined" as a cursor led back to the first page, and an infinite scroll round and round.
    if (value === undefined || value === null)
      throw new TypeError(
        `The cursor key ${typeof key === 'function' ? 'function' : `"${String(key)}"`} gave ${String(value)} for an item of the page: every item needs the key its cursor is made of (docs/pagination.md)`,
      );
    return String(value);
  };
}

/**
 * The cursor rules, written once as a sequence of reads: it yields each {@link KeysetQuery} and
 * receives its rows, so the same steps drive a synchronous source (arrays) and an asynchronous
 * one (databases).
 */
export function* cursorSteps<T>(
  params: CursorParams,
  cursorOfItem: (item: T) => string,
): Generator<KeysetQuery, CursorPage<T>, readonly T[]> {
  const { cursor, limit } = params;
  let data: T[];
  let hasOlder: boolean;
  if (params.direction !== 'backward') {
    // One extra row tells whether anything follows the page: no count, no second query.
    const rows = yield { cursor, towards: 'older', limit: limit + 1 };
    data = rows.slice(0, limit);
    hasOlder = rows.length > limit;
  } else {
    const newer = yield { cursor, towards: 'newer', limit };
    const oldest = newer[0];
    // Without a cursor the page is the oldest one. With one, the cursor item may have been
    // deleted, so whether anything is older than the page is asked, not assumed.
    hasOlder =
      cursor !== undefined &&
      oldest !== undefined &&
      (yield { cursor: cursorOfItem(oldest), towards: 'older', limit: 1 }).length > 0;
    data = [...newer].reverse();
  }
  const first = data[0];
  const last = data.at(-1);
  return {
    data,
    nextCursor: hasOlder && last !== undefined ? cursorOfItem(last) : null,
    prevCursor: first === undefined ? null : cursorOfItem(first),
  };
}

/**
 * Cursor pagination over any keyset source: give it how to read one {@link KeysetQuery} and it
 * assembles the page with the exact cursor rules above. Never uses OFFSET, so the cost of a page
 * does not grow with its depth.
 *
 * @example
 * const operators = { lt, gt, asc, desc }; // from 'drizzle-orm'
 * const page = await paginateKeyset(input, (query) => {
 *   const k = keysetClauses(operators, posts.id, query);
 *   return db.select().from(posts).where(and(eq(posts.status, 'published'), k.where)).orderBy(k.orderBy).limit(k.limit);
 * }, { key: 'id' });
 */
export async function paginateKeyset<T>(
  params: CursorParams,
  fetch: KeysetFetch<T>,
  options: { key: KeySelector<T> },
): Promise<CursorPage<T>> {
  const steps = cursorSteps(params, cursorOf(options.key));
  let step = steps.next();
  while (step.done !== true) step = steps.next(await fetch(step.value));
  return step.value;
}

/** Query-builder operators as Drizzle exports them (`import { lt, gt, asc, desc } from 'drizzle-orm'`). */
export interface KeysetOperators<Column, Sql> {
  lt: (column: Column, value: string) => Sql;
  gt: (column: Column, value: string) => Sql;
  asc: (column: Column) => Sql;
  desc: (column: Column) => Sql;
}

/** The `WHERE`, `ORDER BY` and `LIMIT` of one keyset read. */
export interface KeysetClauses<Sql> {
  /** `undefined` when there is no cursor: Drizzle's `and()` skips it. */
  where: Sql | undefined;
  orderBy: Sql;
  limit: number;
}

/**
 * Drizzle clauses of one keyset read (`WHERE id < $cursor ORDER BY id DESC LIMIT n`). The
 * operators are passed in, so Proceed itself does not depend on Drizzle.
 *
 * @example
 * import { and, asc, desc, eq, gt, lt } from 'drizzle-orm';
 * const operators = { lt, gt, asc, desc };
 * paginateKeyset(input, (query) => {
 *   const k = keysetClauses(operators, posts.id, query);
 *   return db.select().from(posts).where(and(eq(posts.authorId, me), k.where)).orderBy(k.orderBy).limit(k.limit);
 * }, { key: 'id' });
 */
export function keysetClauses<Column, Sql>(
  operators: KeysetOperators<Column, Sql>,
  column: Column,
  query: KeysetQuery,
): KeysetClauses<Sql> {
  const older = query.towards === 'older';
  const where =
    query.cursor === undefined
      ? undefined
      : older
        ? operators.lt(column, query.cursor)
        : operators.gt(column, query.cursor);
  return { where, orderBy: older ? operators.desc(column) : operators.asc(column), limit: query.limit };
}

/** The parts of one keyset read in plain SQL, for `pg`, PGlite or any driver with `$n` placeholders. */
export interface KeysetSql {
  /** e.g. `"id" < $3`, or `undefined` when there is no cursor. */
  where: string | undefined;
  /** e.g. `"id" DESC`. */
  orderBy: string;
  limit: number;
}

const identifier = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?$/;

/**
 * Plain-SQL parts of one keyset read. The cursor is appended to `params` and referenced by its
 * placeholder; the column is a trusted identifier from the app (checked, never from the client).
 *
 * @example
 * const params: unknown[] = ['published'];
 * const k = keysetSql(query, { column: 'id', params });
 * const where = ['status = $1', k.where].filter(Boolean).join(' AND ');
 * await pool.query(`SELECT * FROM posts WHERE ${where} ORDER BY ${k.orderBy} LIMIT ${k.limit}`, params);
 */
export function keysetSql(query: KeysetQuery, options: { column: string; params: unknown[] }): KeysetSql {
  if (!identifier.test(options.column)) throw new TypeError(`Not a plain SQL column name: ${options.column}`);
  const column = options.column
    .split('.')
    .map((part) => `"${part}"`)
    .join('.');
  const older = query.towards === 'older';
  let where: string | undefined;
  if (query.cursor !== undefined) {
    options.params.push(query.cursor);
    where = `${column} ${older ? '<' : '>'} $${options.params.length}`;
  }
  return { where, orderBy: `${column} ${older ? 'DESC' : 'ASC'}`, limit: Math.trunc(query.limit) };
}
