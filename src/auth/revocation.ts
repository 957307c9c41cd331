/**
 * Where revocations live. Tokens are stateless until one is revoked; the store holds only the
 * exceptions (a logged-out token, a revoked login family, the refresh tokens already used), each
 * with an expiry after which the token it names is dead anyway, and a generation per user who was
 * ever revoked as a whole. No decision reads a clock: a user-wide revocation ends exactly the
 * tokens issued before it, whatever the instances' clocks say (docs/auth.md, "Revocation").
 */

/** What a store needs to decide whether a verified token was revoked. */
export interface RevocationCheck {
  /** The token's `jti`. */
  jti: string;
  /** The token's `fam`. */
  family: string;
  /** The token's `sub`. */
  userId: string;
  /** The token's `gen`: its user's revocation generation when its login began. */
  generation: number;
  /**
   * Only for a token without `gen` (issued by 0.1, which revoked users by time cut-offs): when it
   * was issued, in ms, checked against a 0.1 cut-off still in the store. Those entries expire with
   * the last 0.1 refresh token (7 days by default), so an upgrade brings no revoked token back.
   */
  legacyIssuedAt?: number;
}

/**
 * The user loaders that check the token's revocation themselves, in the statement that loads the
 * user (`PostgresRevocationStore.userLoader`), each with the store it checks. The auth plugin
 * leaves its own check out for exactly these functions: a wrapper (a cache, a logger) is another
 * function and gets the plugin's check, since its answer may not come from the statement. The
 * plugin refuses one that checks another store than its TokenService's. Not exported from the
 * package.
 */
export const loadersCheckingRevocation = new WeakMap<object, RevocationStore>();

/**
 * The revocation state behind a TokenService. All times are ms since the epoch; an entry past its
 * `expiresAt` counts as absent. Implementations: {@link MemoryRevocationStore},
 * `PostgresRevocationStore`, `RedisRevocationStore`.
 *
 * @example
 * const tokens = new TokenService({ secret, store: new MemoryRevocationStore() });
 */
export interface RevocationStore {
  /** Revokes one token by its `jti`. */
  revokeToken(jti: string, expiresAt: number): Promise<void>;
  /** Revokes every token of a login family. */
  revokeFamily(family: string, expiresAt: number): Promise<void>;
  /**
   * Revokes every token the user holds: moves the user's generation on by one, atomically (two
   * revocations at once move it by two). The generation is kept for good: one small entry per
   * user ever revoked.
   */
  revokeUser(userId: string): Promise<void>;
  /** The user's current generation: 0 until the first {@link RevocationStore.revokeUser}. */
  userGeneration(userId: string): Promise<number>;
  /**
   * True when the token is revoked by its jti, its family, or a generation unequal to its user's:
   * an older one was revoked user-wide, and a newer one means the store lost its count, which must
   * fail closed (docs/auth.md). One round trip.
   */
  isRevoked(check: RevocationCheck): Promise<boolean>;
  /**
   * Marks a refresh token used. Atomic: of any number of concurrent calls with one `jti`, exactly
   * one answers true; every later call answers false.
   */
  markUsed(jti: string, expiresAt: number): Promise<boolean>;
  /** Deletes expired entries. Stores also prune on their own from time to time. */
  prune(): Promise<void>;
}

/**
 * A store in this process's memory: right for one instance and for tests. Revocations do not
 * survive a restart and are not shared between instances.
 *
 * @example
 * const store = new MemoryRevocationStore();
 */
export class MemoryRevocationStore implements RevocationStore {
  readonly #tokens = new Map<string, number>();
  readonly #families = new Map<string, number>();
  readonly #generations = new Map<string, number>();
  readonly #used = new Map<string, number>();
  readonly #pruneEvery: number;
  #writes = 0;

  /** @param options.pruneEvery prune after this many writes (default 1000). */
  constructor(options: { pruneEvery?: number } = {}) {
    this.#pruneEvery = options.pruneEvery ?? 1000;
  }

  async revokeToken(jti: string, expiresAt: number): Promise<void> {
    this.#extend(this.#tokens, jti, expiresAt);
  }

  async revokeFamily(family: string, expiresAt: number): Promise<void> {
    this.#extend(this.#families, family, expiresAt);
  }

  async revokeUser(userId: string): Promise<void> {
    this.#generations.set(userId, (this.#generations.get(userId) ?? 0) + 1);
  }

  async userGeneration(userId: string): Promise<number> {
    return this.#generations.get(userId) ?? 0;
  }

  async isRevoked(check: RevocationCheck): Promise<boolean> {
    const now = Date.now();
    if ((this.#tokens.get(check.jti) ?? 0) > now) return true;
    if ((this.#families.get(check.family) ?? 0) > now) return true;
    // Unequal either way: a generation above the store's means the store lost its count (docs/auth.md).
    return check.generation !== (this.#generations.get(check.userId) ?? 0);
  }

  async markUsed(jti: string, expiresAt: number): Promise<boolean> {
    // Check and set happen without an await in between, so one event loop turn decides.
    if ((this.#used.get(jti) ?? 0) > Date.now()) return false;
    this.#used.set(jti, expiresAt);
    this.#wrote();
    return true;
  }

  async prune(): Promise<void> {
    const now = Date.now();
    for (const map of [this.#tokens, this.#families, this.#used]) {
      for (const [key, expiresAt] of map) if (expiresAt <= now) map.delete(key);
    }
  }

  /** How many entries are held (expired ones included until pruned). */
  get size(): number {
    return this.#tokens.size + this.#families.size + this.#generations.size + this.#used.size;
  }

  #extend(map: Map<string, number>, key: string, expiresAt: number): void {
    map.set(key, Math.max(expiresAt, map.get(key) ?? 0));
    this.#wrote();
  }

  #wrote(): void {
    this.#writes += 1;
    if (this.#writes % this.#pruneEvery === 0) void this.prune();
  }
}
