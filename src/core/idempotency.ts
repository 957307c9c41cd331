/**
 * Idempotent creates (docs/http-caching.md, "Idempotency-Key"): a POST sent again with the same
 * `Idempotency-Key` by the same caller replays the first answer instead of running the handler
 * again. Transport-neutral: the adapter hands over the header; keys live in a store shared by
 * the app's instances.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Call, Invoke, Reply } from './call.js';
import { ProceedError, ValidationError } from './errors.js';
import { durationOption } from './options.js';
import type { RouteEntry } from './routes.js';

/** What a replay sends again: the first answer as the adapter wrote it. */
export interface StoredAnswer {
  readonly status: number;
  readonly body: string;
  readonly location: string | undefined;
  readonly version: string | undefined;
}

/** What {@link IdempotencyStore.claim} found. */
export type ClaimResult =
  | { readonly claimed: true }
  | {
      readonly claimed: false;
      /** The fingerprint of the request that holds the key. */
      readonly fingerprint: string;
      /** Its answer; undefined while it is still running. */
      readonly answer: StoredAnswer | undefined;
    };

/**
 * Where keys live. Every method must be atomic across the app's instances: of two claims of one
 * free key, exactly one succeeds. Proceed ships a memory store (one process) and a PostgreSQL one
 * (`proceedjs/idempotency`).
 */
export interface IdempotencyStore {
  /**
   * Claims `key` for a request with this fingerprint, as `claim` (a token only this request
   * knows), until `lockedUntil`; the key and its answer are kept until `expiresAt` (ms since the
   * epoch). A key whose entry expired, or whose request stopped without an answer and whose lock
   * ran out, may be claimed again.
   */
  claim(
    key: string,
    entry: { fingerprint: string; claim: string; lockedUntil: number; expiresAt: number },
  ): Promise<ClaimResult>;
  /** Stores the answer of the request holding `claim`; nothing when another holds the key now. */
  complete(key: string, claim: string, answer: StoredAnswer): Promise<void>;
  /** Frees a key whose request failed (nothing was done): the same key may be sent again. */
  release(key: string, claim: string): Promise<void>;
  /** Deletes expired entries; stores also do it on their own, now and then. */
  prune(now?: number): Promise<void>;
}

/** How idempotent routes behave (`idempotencyPlugin` options). */
export interface IdempotencySettings {
  readonly store: IdempotencyStore;
  /** How long a key and its answer are kept, in ms. Default 24 hours. */
  readonly ttl: number;
  /**
   * How long a request may hold its key without an answer, in ms; after that (an instance died
   * mid-request), the key may be claimed again. Default 60 seconds.
   */
  readonly lockTimeout: number;
  /** Who is asking: keys of different callers never meet. Default: the user's id, else the IP. */
  readonly caller: (ctx: Call['ctx']) => string;
}

/** The header's value: 1–255 visible ASCII characters; a Structured Fields string's quotes are dropped. */
const keyPattern = /^[\x21-\x7e]{1,255}$/;

/**
 * The key a request sends, checked: the IETF draft makes it a quoted string (`"8e03…"`); a bare
 * token, what most clients send, is taken as it is.
 */
export function idempotencyKeyOf(header: string): string {
  const trimmed = header.trim();
  const key =
    trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"') ? trimmed.slice(1, -1) : trimmed;
  if (!keyPattern.test(key))
    throw new ValidationError([
      { path: 'Idempotency-Key', message: 'Must be 1–255 visible ASCII characters, e.g. a UUID' },
    ]);
  return key;
}

/**
 * Whether a route replays by `Idempotency-Key` on an app with a key store: every `.idempotent()`
 * procedure, and every `create*` one when the store was registered with `creates`. The one rule
 * both the run time and the OpenAPI document follow.
 */
export function replaysByKey(
  route: Pick<RouteEntry, 'definition' | 'convention' | 'upload'>,
  creates: boolean,
): boolean {
  // A file answer is not kept for a replay (docs/files.md); nor is an upload, whose files a
  // key alone cannot tell apart (docs/uploads.md).
  if (route.definition.output?.kind === 'download' || route.upload !== undefined) return false;
  return route.definition.idempotent || (creates && route.convention?.prefix === 'create');
}

/** Refuses a key on a POST that does not replay: the client would believe a retry is safe. */
export const keyNotTaken = () =>
  new ValidationError([
    {
      path: 'Idempotency-Key',
      message: 'This route does not take an Idempotency-Key: a retry would run it again',
    },
  ]);

/** The default caller: the signed-in user's id, else the client's IP. */
export function defaultCaller(ctx: Call['ctx']): string {
  const user = ctx.user as { id?: unknown } | undefined | null;
  const id = user?.id;
  if (typeof id === 'string' || typeof id === 'number') return `user:${id}`;
  return `ip:${ctx.request.ip}`;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

/**
 * What makes two requests "the same": method, path with query, and body. A body nested so deeply
 * (thousands of levels) that writing it again overflows the stack is the client's to fix: a 400.
 */
function fingerprintOf(call: Call): string {
  const { method, url } = call.ctx.request;
  let body: string;
  try {
    body = call.body === undefined ? '' : JSON.stringify(call.body);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new ValidationError([{ path: '', message: 'The body is nested too deeply' }]);
  }
  return sha256(`${method} ${url}\n${body}`);
}

const reused = () =>
  new ProceedError(
    'IDEMPOTENCY_KEY_REUSED',
    'This Idempotency-Key was sent before with a different request; use a new key for a new request',
  );

export const stillRunning = () =>
  new ProceedError('CONFLICT', 'A request with this Idempotency-Key is still running; retry it shortly', {
    headers: { 'retry-after': '1' },
  });

/** An answer worth keeping: the request did what it asked. Errors free the key for a retry. */
const succeeded = (reply: Reply) => reply.status >= 200 && reply.status < 300;

/**
 * Runs `invoke` once per key: the first request claims the key and runs; a later one with the
 * same fingerprint gets the stored answer (`replayed: true`) once `mayReplay` (the route's
 * guards) lets its caller through, or 409 while the first still runs; another fingerprint gets
 * 422. A failed request frees its key.
 */
export async function runIdempotent(
  settings: IdempotencySettings,
  call: Call,
  key: string,
  invoke: Invoke,
  mayReplay: (call: Call) => void | Promise<void>,
): Promise<Reply & { replayed?: true }> {
  // The key is stored hashed with its caller: one caller cannot reach another's answers, and
  // no raw key or user id sits in the table.
  const storeKey = sha256(`${settings.caller(call.ctx)}\n${key}`);
  const fingerprint = fingerprintOf(call);
  const claim = randomUUID();
  const now = Date.now();
  const found = await settings.store.claim(storeKey, {
    fingerprint,
    claim,
    lockedUntil: now + settings.lockTimeout,
    expiresAt: now + settings.ttl,
  });
  if (!found.claimed) {
    if (found.fingerprint !== fingerprint) throw reused();
    if (found.answer === undefined) throw stillRunning();
    // A caller who lost the right to the route since (an admin made a user) is refused, not
    // handed what the route answered when it had it.
    await mayReplay(call);
    return { ...found.answer, replayed: true };
  }
  let reply: Reply;
  try {
    reply = await invoke(call);
  } catch (error) {
    // A 4xx changed nothing: the corrected request may use the key. After anything else the
    // write may have committed (the connection dropped before the answer, say): the key stays
    // held until its lock runs out, so a quick retry gets 409 rather than a second record.
    if (error instanceof ProceedError && error.status < 500) await settings.store.release(storeKey, claim);
    throw error;
  }
  if (!succeeded(reply)) {
    await settings.store.release(storeKey, claim);
    return reply;
  }
  await settings.store.complete(storeKey, claim, {
    status: reply.status,
    body: reply.body,
    location: reply.location,
    version: reply.version,
  });
  return reply;
}

interface MemoryEntry {
  fingerprint: string;
  claim: string | undefined;
  answer: StoredAnswer | undefined;
  lockedUntil: number;
  expiresAt: number;
}

/**
 * Keys in this process's memory: for one instance, and for tests. Several instances need a shared
 * store (`PostgresIdempotencyStore`).
 *
 * @example
 * await app.register(idempotencyPlugin, { store: new MemoryIdempotencyStore() });
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #entries = new Map<string, MemoryEntry>();
  readonly #pruneInterval: number;
  #lastPrune = 0;

  /** `pruneInterval`: expired entries are dropped at most this often (ms), on a claim. Default 10 minutes. */
  constructor(options: { pruneInterval?: number } = {}) {
    this.#pruneInterval = durationOption(
      'MemoryIdempotencyStore',
      'pruneInterval',
      options.pruneInterval,
      10 * 60_000,
    );
  }

  /** How many keys are held (tests). */
  get size(): number {
    return this.#entries.size;
  }

  async claim(
    key: string,
    entry: { fingerprint: string; claim: string; lockedUntil: number; expiresAt: number },
  ): Promise<ClaimResult> {
    const now = Date.now();
    if (now - this.#lastPrune >= this.#pruneInterval) await this.prune(now);
    const held = this.#entries.get(key);
    const free =
      held === undefined || held.expiresAt <= now || (held.answer === undefined && held.lockedUntil <= now);
    if (free) {
      this.#entries.set(key, { ...entry, answer: undefined });
      return { claimed: true };
    }
    return { claimed: false, fingerprint: held.fingerprint, answer: held.answer };
  }

  async complete(key: string, claim: string, answer: StoredAnswer): Promise<void> {
    const held = this.#entries.get(key);
    if (held?.claim !== claim) return;
    held.answer = answer;
    held.claim = undefined;
  }

  async release(key: string, claim: string): Promise<void> {
    if (this.#entries.get(key)?.claim === claim) this.#entries.delete(key);
  }

  async prune(now = Date.now()): Promise<void> {
    this.#lastPrune = now;
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(key);
  }
}
