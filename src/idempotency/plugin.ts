/**
 * The idempotency plugin (docs/http-caching.md, "Idempotency-Key"): gives the app its key store
 * and says which POSTs replay.
 */
import type { Call } from '../core/call.js';
import { defaultCaller, type IdempotencyStore } from '../core/idempotency.js';
import { optionKeys, refuseUnknownOptions } from '../core/options.js';
import type { App } from '../server/app.js';

export interface IdempotencyPluginOptions {
  /** Where keys live: `PostgresIdempotencyStore` for several instances, `MemoryIdempotencyStore` for one. */
  store: IdempotencyStore;
  /** Every `create*` procedure replays, not only those marked `.idempotent()`. Default false. */
  creates?: boolean;
  /** How long a key and its answer are kept, in ms. Default 24 hours. */
  ttl?: number;
  /**
   * How long a request may hold its key without answering, in ms, before the key may be claimed
   * again (its instance died mid-request, say). Default 60 seconds.
   */
  lockTimeout?: number;
  /** Who is asking: keys of different callers never meet. Default: `ctx.user.id`, else the client IP. */
  caller?: (ctx: Call['ctx']) => string;
}

const day = 24 * 60 * 60_000;
/** What a timer can wait for. */
const longest = 2 ** 31 - 1;

function duration(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > longest)
    throw new TypeError(
      `idempotencyPlugin: ${name} must be a whole number of ms from 1 to ${longest} (got ${value})`,
    );
  return value;
}

/**
 * Lets POSTs be retried safely: a request with an `Idempotency-Key` that was answered before (same
 * caller, same body, within `ttl`) gets that answer again, with `Idempotency-Replayed: true`.
 *
 * @example
 * await app.register(idempotencyPlugin, { store: new PostgresIdempotencyStore(pool), creates: true });
 */
export async function idempotencyPlugin(app: App, options: IdempotencyPluginOptions): Promise<void> {
  refuseUnknownOptions(
    'idempotencyPlugin',
    options,
    optionKeys<IdempotencyPluginOptions>()('store', 'creates', 'ttl', 'lockTimeout', 'caller'),
    { required: true },
  );
  const store = options.store as Partial<IdempotencyStore> | undefined;
  if (
    typeof store?.claim !== 'function' ||
    typeof store.complete !== 'function' ||
    typeof store.release !== 'function' ||
    typeof store.prune !== 'function'
  )
    throw new TypeError(
      'idempotencyPlugin: store must be an IdempotencyStore (claim, complete, release, prune)',
    );
  const ttl = duration('ttl', options.ttl, day);
  const lockTimeout = duration('lockTimeout', options.lockTimeout, 60_000);
  if (ttl <= lockTimeout)
    throw new TypeError(
      `idempotencyPlugin: ttl (${ttl} ms) must be longer than lockTimeout (${lockTimeout} ms), or a key could expire while its request runs`,
    );
  if (options.caller !== undefined && typeof options.caller !== 'function')
    throw new TypeError('idempotencyPlugin: caller must be a function of the context');
  const ensureSchema = (options.store as { ensureSchema?: () => Promise<void> }).ensureSchema;
  if (typeof ensureSchema === 'function') await ensureSchema.call(options.store);
  app.useIdempotency({
    settings: { store: options.store, ttl, lockTimeout, caller: options.caller ?? defaultCaller },
    creates: options.creates === true,
  });
}
