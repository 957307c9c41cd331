/**
 * Both pagination patterns over an in-memory array: for fixtures, caches, small lists and tests.
 * The cursor rules are the same steps that drive database sources ({@link cursorSteps}).
 */
import {
  type CursorPage,
  type CursorParams,
  cursorOf,
  cursorSteps,
  type KeySelector,
  type KeysetQuery,
} from './cursor.js';
import { type OffsetPage, type OffsetParams, offsetResult, offsetWindow } from './offset.js';

type Key = string | number | bigint;

function keyValueOf<T>(key: KeySelector<T>): (item: T) => Key {
  if (typeof key === 'function') return key;
  return (item) => item[key] as Key;
}

/** A cursor arrives as a string; numeric keys are compared as numbers, as a database would. */
function compareToCursor(value: Key, cursor: string): number {
  if (typeof value === 'string') return value < cursor ? -1 : value > cursor ? 1 : 0;
  const bound = typeof value === 'bigint' ? safeBigInt(cursor) : Number(cursor);
  if (bound === undefined || Number.isNaN(bound)) return Number.NaN;
  return value < bound ? -1 : value > bound ? 1 : 0;
}

function safeBigInt(text: string): bigint | undefined {
  try {
    return BigInt(text);
  } catch {
    return undefined;
  }
}

function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  // Absent values sort last in ascending order, as NULLS LAST does in PostgreSQL.
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  const left = a instanceof Date ? a.getTime() : a;
  const right = b instanceof Date ? b.getTime() : b;
  if (typeof left === 'string' && typeof right === 'string') return left < right ? -1 : left > right ? 1 : 0;
  return (left as number) < (right as number) ? -1 : (left as number) > (right as number) ? 1 : 0;
}

export interface PaginateArrayOptions<T> {
  /**
   * The unique key of an item: a property name or a function. Cursor pages order by it,
   * descending (newest first for UUIDv7 or increasing ids); offset pages use it to break ties.
   */
  key: KeySelector<T>;
}

function offsetOfArray<T>(
  items: readonly T[],
  params: OffsetParams,
  options: PaginateArrayOptions<T>,
): OffsetPage<T> {
  const keyValue = keyValueOf(options.key);
  const sign = params.sortOrder === 'desc' ? -1 : 1;
  let ordered: readonly T[] = items;
  if (params.sortBy !== undefined) {
    const column = params.sortBy as keyof T;
    ordered = [...items].sort(
      (a, b) => sign * (compareValues(a[column], b[column]) || compareValues(keyValue(a), keyValue(b))),
    );
  } else if (sign === -1) {
    ordered = [...items].reverse();
  }
  const { offset, limit } = offsetWindow(params);
  return offsetResult(ordered.slice(offset, offset + limit), items.length, params);
}

/**
 * The index of the first item older than the cursor (key < cursor) in a descending array, by
 * binary search; -1 when there is none. Keys that cannot be compared with the cursor (NaN) fall
 * back to a scan.
 */
function firstOlder<T>(descending: readonly T[], keyValue: (item: T) => Key, cursor: string): number {
  let low = 0;
  let high = descending.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const order = compareToCursor(keyValue(descending[middle] as T), cursor);
    if (Number.isNaN(order))
      return descending.findIndex((item) => compareToCursor(keyValue(item), cursor) < 0);
    if (order < 0) high = middle;
    else low = middle + 1;
  }
  return low < descending.length ? low : -1;
}

function readArray<T>(descending: readonly T[], keyValue: (item: T) => Key, query: KeysetQuery): T[] {
  const { cursor, limit } = query;
  if (query.towards === 'older') {
    const start = cursor === undefined ? 0 : firstOlder(descending, keyValue, cursor);
    return start === -1 ? [] : descending.slice(start, start + limit);
  }
  const newer: T[] = [];
  for (let index = descending.length - 1; index >= 0 && newer.length < limit; index--) {
    const item = descending[index] as T;
    if (cursor === undefined || compareToCursor(keyValue(item), cursor) > 0) newer.push(item);
  }
  return newer;
}

/** Arrays found in descending order of a key, as they were then: their length and end items. */
const knownDescending = new WeakMap<
  readonly unknown[],
  Map<unknown, { length: number; first: unknown; last: unknown }>
>();

/**
 * The items by key, descending. An array kept newest first (the usual case: a cache, a fixture)
 * is used as it is: checked in one pass, then trusted while its length and end items stay the
 * same (docs/pagination.md, "In memory"); any other is sorted into a copy.
 */
function inDescendingOrder<T>(
  items: readonly T[],
  key: KeySelector<T>,
  keyValue: (item: T) => Key,
): readonly T[] {
  // Per key: an array in descending order of `id` is not in descending order of `score`.
  const known = knownDescending.get(items)?.get(key);
  if (
    known !== undefined &&
    known.length === items.length &&
    known.first === items[0] &&
    known.last === items.at(-1)
  )
    return items;
  for (let index = 1; index < items.length; index++) {
    if (compareValues(keyValue(items[index - 1] as T), keyValue(items[index] as T)) < 0)
      return [...items].sort((a, b) => compareValues(keyValue(b), keyValue(a)));
  }
  const byKey = knownDescending.get(items) ?? new Map();
  byKey.set(key, { length: items.length, first: items[0], last: items.at(-1) });
  knownDescending.set(items, byKey);
  return items;
}

function cursorOfArray<T>(
  items: readonly T[],
  params: CursorParams,
  options: PaginateArrayOptions<T>,
): CursorPage<T> {
  const keyValue = keyValueOf(options.key);
  const descending = inDescendingOrder(items, options.key, keyValue);
  const steps = cursorSteps(params, cursorOf(options.key));
  let step = steps.next();
  while (step.done !== true) step = steps.next(readArray(descending, keyValue, step.value));
  return step.value;
}

/**
 * Paginates an in-memory array. With offset parameters (`page`) it returns an offset page: sorted
 * by `sortBy` when given (the key breaks ties), else in the array's own order (reversed for
 * `sortOrder: 'desc'`). With cursor parameters it returns a cursor page ordered by the key,
 * descending, with exactly the cursor rules of database sources. Filter the array first:
 * `meta.total` is the length of what you pass.
 *
 * @example
 * paginateArray(users, { page: 2, limit: 10, sortBy: 'name', sortOrder: 'asc' }, { key: 'id' });
 * paginateArray(posts, { cursor: lastSeenId, limit: 20, direction: 'forward' }, { key: 'id' });
 */
export function paginateArray<T>(
  items: readonly T[],
  params: OffsetParams,
  options: PaginateArrayOptions<T>,
): OffsetPage<T>;
export function paginateArray<T>(
  items: readonly T[],
  params: CursorParams,
  options: PaginateArrayOptions<T>,
): CursorPage<T>;
export function paginateArray<T>(
  items: readonly T[],
  params: OffsetParams | CursorParams,
  options: PaginateArrayOptions<T>,
): OffsetPage<T> | CursorPage<T> {
  return 'page' in params ? offsetOfArray(items, params, options) : cursorOfArray(items, params, options);
}
