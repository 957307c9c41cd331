/**
 * `proceedjs/idempotency`: POSTs that a client may retry safely with an `Idempotency-Key`
 * (docs/http-caching.md).
 *
 * @module proceedjs/idempotency
 */
export {
  type ClaimResult,
  type IdempotencySettings,
  type IdempotencyStore,
  MemoryIdempotencyStore,
  type StoredAnswer,
} from '../core/idempotency.js';
export type { SqlClient } from '../stores/sql.js';
export { type IdempotencyPluginOptions, idempotencyPlugin } from './plugin.js';
export { PostgresIdempotencyStore, type PostgresIdempotencyStoreOptions } from './postgres.js';
