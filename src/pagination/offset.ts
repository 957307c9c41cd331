/**
 * Offset pagination (docs/pagination.md): page-numbered tables. The input schema carries `page`, `limit`,
 * `sortBy`, `sortOrder` and the app's filters; the output envelope is `{ data, meta }`.
 */
import { z } from 'zod';

/** How many items a page holds when the client does not say (docs/pagination.md). */
export const DEFAULT_LIMIT = 20;
/** The largest page a client may ask for unless the app sets its own cap (docs/pagination.md). */
export const MAX_LIMIT = 100;

export type SortOrder = 'asc' | 'desc';

/** What an offset listing receives once its input is validated. */
export interface OffsetParams {
  page: number;
  limit: number;
  sortBy?: string | undefined;
  sortOrder: SortOrder;
}

/** The `meta` block of an offset page. */
export interface OffsetMeta {
  page: number;
  limit: number;
  total: number;
  totalPages: number;
}

/** One page of an offset listing, as it goes on the wire. */
export interface OffsetPage<T> {
  data: T[];
  meta: OffsetMeta;
}

type Columns = readonly [string, ...string[]];
type EnumOf<C extends Columns> = z.ZodEnum<{ [K in C[number]]: K }>;

/** The fixed part of every offset input schema. */
export interface OffsetShape {
  page: z.ZodDefault<z.ZodNumber>;
  limit: z.ZodDefault<z.ZodNumber>;
  sortOrder: z.ZodDefault<z.ZodEnum<{ asc: 'asc'; desc: 'desc' }>>;
}

/** `sortBy` is present only when the app names its sortable columns. */
export type SortByShape<C extends Columns | undefined> = C extends Columns
  ? { sortBy: z.ZodOptional<EnumOf<C>> }
  : Record<never, never>;

export interface OffsetInputOptions<C extends Columns | undefined, F extends z.ZodRawShape> {
  /**
   * The columns a client may sort by. Without it there is no `sortBy` parameter: a free string
   * would end up in an `ORDER BY`, so Proceed only accepts a closed list.
   */
  sortBy?: C;
  /** Largest `limit` accepted (default 100). */
  maxLimit?: number;
  /** `limit` when the client sends none (default 20, never above `maxLimit`). */
  defaultLimit?: number;
  /** Extra optional query parameters; `meta.total` counts only the items that match them. */
  filters?: F;
}

const reservedOffsetKeys = new Set(['page', 'limit', 'sortBy', 'sortOrder']);

/** Checks an app's limit settings once, when the schema is built, not on every request. */
export function resolveLimits(options: { maxLimit?: number; defaultLimit?: number }): {
  maxLimit: number;
  defaultLimit: number;
} {
  const maxLimit = options.maxLimit ?? MAX_LIMIT;
  const defaultLimit = options.defaultLimit ?? Math.min(DEFAULT_LIMIT, maxLimit);
  if (!Number.isInteger(maxLimit) || maxLimit < 1) {
    throw new TypeError(`maxLimit must be an integer ≥ 1, got ${maxLimit}`);
  }
  if (!Number.isInteger(defaultLimit) || defaultLimit < 1 || defaultLimit > maxLimit) {
    throw new TypeError(
      `defaultLimit must be an integer between 1 and maxLimit (${maxLimit}), got ${defaultLimit}`,
    );
  }
  return { maxLimit, defaultLimit };
}

/** Filters may not shadow the pagination parameters: the client could not tell them apart. */
export function checkFilterKeys(filters: z.ZodRawShape | undefined, reserved: ReadonlySet<string>): void {
  for (const key of Object.keys(filters ?? {})) {
    if (reserved.has(key)) throw new TypeError(`Filter "${key}" collides with a pagination parameter`);
  }
}

/** The `limit` parameter shared by both patterns. */
export function limitSchema(maxLimit: number, defaultLimit: number): z.ZodDefault<z.ZodNumber> {
  return z
    .number()
    .int()
    .min(1)
    .max(maxLimit)
    .default(defaultLimit)
    .describe(`Items per page, 1 to ${maxLimit} (default ${defaultLimit})`);
}

/**
 * Builds the input schema of an offset listing. Query strings are coerced by the framework from
 * the schema, so the fields are plain numbers, booleans and dates.
 *
 * @example
 * const listUsersInput = offsetInput({
 *   sortBy: ['name', 'email', 'createdAt', 'updatedAt'] as const,
 *   filters: { search: z.string().optional(), isActive: z.boolean().optional() },
 * });
 * // GET /api/users?page=2&limit=10&sortBy=name&sortOrder=desc&isActive=true
 */
export function offsetInput<
  const C extends Columns | undefined = undefined,
  F extends z.ZodRawShape = Record<never, never>,
>(options: OffsetInputOptions<C, F> = {}): z.ZodObject<OffsetShape & SortByShape<C> & F> {
  const { maxLimit, defaultLimit } = resolveLimits(options);
  checkFilterKeys(options.filters, reservedOffsetKeys);
  const shape: Record<string, z.ZodType> = {
    page: z.number().int().min(1).default(1).describe('Page number, from 1 (default 1)'),
    limit: limitSchema(maxLimit, defaultLimit),
    sortOrder: z.enum(['asc', 'desc']).default('asc').describe('Sort direction (default asc)'),
  };
  if (options.sortBy !== undefined) {
    if (options.sortBy.length === 0) throw new TypeError('sortBy needs at least one column');
    shape.sortBy = z.enum(options.sortBy).optional().describe('Column to sort by');
  }
  return z.object({ ...shape, ...options.filters }) as unknown as z.ZodObject<
    OffsetShape & SortByShape<C> & F
  >;
}

/** The wire schema of `meta`. */
export const offsetMetaSchema = z.object({
  page: z.number().int(),
  limit: z.number().int(),
  total: z.number().int(),
  totalPages: z.number().int(),
});

/**
 * The items of a page: at most `maxLimit` of them when it is given (the input's `maxLimit`).
 * Throws a TypeError for a `maxLimit` that is not an integer ≥ 1.
 */
export function pageItems<I extends z.ZodType>(item: I, maxLimit: number | undefined): z.ZodArray<I> {
  const items = z.array(item);
  return maxLimit === undefined ? items : items.max(resolveLimits({ maxLimit, defaultLimit: 1 }).maxLimit);
}

/**
 * The output schema of an offset listing: `{ data: item[], meta: { page, limit, total, totalPages } }`.
 * Pass a view (e.g. `User.admin`) so each item keeps its named component in the OpenAPI document,
 * and the input's `maxLimit` so that the document bounds the page (`maxItems`).
 *
 * @example
 * procedure().input(listUsersInput).output(offsetPage(User.admin, { maxLimit: 100 })).query(listUsers);
 */
export function offsetPage<I extends z.ZodType>(
  item: I,
  options: { maxLimit?: number } = {},
): z.ZodObject<{ data: z.ZodArray<I>; meta: typeof offsetMetaSchema }> {
  return z.object({ data: pageItems(item, options.maxLimit), meta: offsetMetaSchema });
}

/**
 * Wraps one page of items with its `meta`. `totalPages = ceil(total / limit)`, 0 when nothing
 * matches; a page past the end simply has no items.
 *
 * @example
 * const { items, total } = await users.list(input);
 * return offsetResult(items, total, input);
 * // → { data: [...], meta: { page: 2, limit: 10, total: 42, totalPages: 5 } }
 */
export function offsetResult<T>(
  items: readonly T[],
  total: number,
  params: Pick<OffsetParams, 'page' | 'limit'>,
): OffsetPage<T> {
  const { page, limit } = params;
  return {
    data: [...items],
    meta: { page, limit, total, totalPages: total === 0 ? 0 : Math.ceil(total / limit) },
  };
}

/**
 * The `LIMIT`/`OFFSET` pair of a page: `(page - 1) * limit` items are skipped.
 *
 * @example
 * const { limit, offset } = offsetWindow(input);
 * await db.select().from(users).orderBy(asc(users.id)).limit(limit).offset(offset);
 */
export function offsetWindow(params: Pick<OffsetParams, 'page' | 'limit'>): {
  limit: number;
  offset: number;
} {
  return { limit: params.limit, offset: (params.page - 1) * params.limit };
}
