/**
 * Pagination (docs/pagination.md): input and output schemas for offset and cursor listings,
 * and helpers that build pages from any data source: arrays, Drizzle, plain SQL.
 *
 * @module proceed/pagination
 */
export { type PaginateArrayOptions, paginateArray } from './array.js';
export {
  type CursorDirection,
  type CursorInputOptions,
  type CursorPage,
  type CursorPageOptions,
  type CursorParams,
  type CursorShape,
  cursorInput,
  cursorOf,
  cursorPage,
  cursorSteps,
  type KeyOf,
  type KeySelector,
  type KeysetClauses,
  type KeysetFetch,
  type KeysetOperators,
  type KeysetQuery,
  type KeysetSql,
  keysetClauses,
  keysetSql,
  paginateKeyset,
} from './cursor.js';
export {
  DEFAULT_LIMIT,
  MAX_LIMIT,
  type OffsetInputOptions,
  type OffsetMeta,
  type OffsetPage,
  type OffsetParams,
  type OffsetShape,
  offsetInput,
  offsetMetaSchema,
  offsetPage,
  offsetResult,
  offsetWindow,
  type SortByShape,
  type SortOrder,
} from './offset.js';
