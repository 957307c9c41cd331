/**
 * The idempotency plugin (docs/http-caching.md, "Idempotency-Key"): gives the app its key store
 * and says which POSTs replay.
 */
import type { Call } from '../core/call.js';
import { ProceedConfigError } from '../core/errors.js';
import { defaultCaller, type IdempotencyStore } from '../core/idempotency.js';
import { optionKeys, refuseUnknownOptions } from '../core/options.js';
import type { App } from '../server/app.js';

export interface IdempotencyPluginOptions {
  /**
   * Where keys live: `PostgresIdempotencyStore` for several instances, `MemoryIdempotencyStore`
   * for one. A function is asked for the store once the app gets ready to serve, never when it
   * is only inspected (as `authPlugin`'s options: docs/auth.md, "Inspecting without services").
   */
  store: IdempotencyStore | (() => MaybePromise<IdempotencyStore>);
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

type MaybePromise<T> = T | Promise<T>;

const day = 24 * 60 * 60_000;
/** What a timer can wait for. */
const longest = 2 ** 31 - 1;

function duration(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > longest)
    throw new ProceedConfigError(
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
  const ttl = duration('ttl', options.ttl, day);
  const lockTimeout = duration('lockTimeout', options.lockTimeout, 60_000);
  if (ttl <= lockTimeout)
    throw new ProceedConfigError(
      `idempotencyPlugin: ttl (${ttl} ms) must be longer than lockTimeout (${lockTimeout} ms), or a key could expire while its request runs`,
    );
  // `'yes'` or `1` meant off, and every POST with a key was refused.
  if (options.creates !== undefined && typeof options.creates !== 'boolean')
    throw new ProceedConfigError(
      `idempotencyPlugin: creates is true or false (got ${JSON.stringify(options.creates)})`,
    );
  if (options.caller !== undefined && typeof options.caller !== 'function')
    throw new ProceedConfigError('idempotencyPlugin: caller must be a function of the context');
  const settings = { store: notYetServing, ttl, lockTimeout, caller: options.caller ?? defaultCaller };
  const given = options.store;
  if (typeof given === 'function') {
    if (!app.inspected)
      app.onReady(async () => {
        settings.store = await readied(await given());
      });
  } else {
    settings.store = await readied(given);
  }
  app.useIdempotency({ settings, creates: options.creates === true });
}

/** Checks the store and creates its tables. */
async function readied(given: IdempotencyStore): Promise<IdempotencyStore> {
  const store = given as Partial<IdempotencyStore> | undefined;
  if (
    typeof store?.claim !== 'function' ||
    typeof store.complete !== 'function' ||
    typeof store.release !== 'function' ||
    typeof store.prune !== 'function'
  )
    throw new ProceedConfigError(
      'idempotencyPlugin: store must be an IdempotencyStore (claim, complete, release, prune)',
    );
  const ensureSchema = (given as { ensureSchema?: () => Promise<void> }).ensureSchema;
  if (typeof ensureSchema === 'function') await ensureSchema.call(given);
  return given;
}

/** The store of an app that was only inspected: it never serves, so this is never reached. */
const notYetServing: IdempotencyStore = {
  claim: refuse,
  complete: refuse,
  release: refuse,
  prune: refuse,
};

function refuse(): never {
  throw new ProceedConfigError('idempotencyPlugin: this app was built to be inspected');
}
