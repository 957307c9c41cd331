/**
 * A revocation store in Redis: one key per entry with a TTL (Redis expires them, nothing to
 * prune), one MGET per verified token, and `SET … NX` to mark a refresh token used atomically.
 */
import type { RevocationCheck, RevocationStore } from './revocation.js';

/**
 * The Redis commands the store uses. An ioredis client fits.
 *
 * @example
 * import { Redis } from 'ioredis';
 * const client: RedisClient = new Redis(process.env.REDIS_URL!);
 */
export interface RedisClient {
  mget(...keys: string[]): Promise<Array<string | null>>;
  get(key: string): Promise<string | null>;
  incr(key: string): Promise<number>;
  set(key: string, value: string, mode: 'PX', milliseconds: number): Promise<unknown>;
  set(key: string, value: string, mode: 'PX', milliseconds: number, condition: 'NX'): Promise<unknown>;
}

export interface RedisRevocationStoreOptions {
  /** Prefix of every key. Default `proceed:revoked:`. */
  prefix?: string;
}

/**
 * Revocations in Redis, shared by every instance that uses the same server and prefix.
 *
 * @example
 * const store = new RedisRevocationStore(new Redis(process.env.REDIS_URL!));
 * const tokens = new TokenService({ secret, store });
 */
export class RedisRevocationStore implements RevocationStore {
  readonly #client: RedisClient;
  readonly #prefix: string;

  constructor(client: RedisClient, options: RedisRevocationStoreOptions = {}) {
    this.#client = client;
    this.#prefix = options.prefix ?? 'proceed:revoked:';
  }

  async revokeToken(jti: string, expiresAt: number): Promise<void> {
    await this.#set(`token:${jti}`, '1', expiresAt);
  }

  async revokeFamily(family: string, expiresAt: number): Promise<void> {
    await this.#set(`family:${family}`, '1', expiresAt);
  }

  async revokeUser(userId: string): Promise<void> {
    // INCR is atomic and the key has no TTL: a generation is kept for good.
    await this.#client.incr(`${this.#prefix}generation:${userId}`);
  }

  async userGeneration(userId: string): Promise<number> {
    return Number((await this.#client.get(`${this.#prefix}generation:${userId}`)) ?? 0);
  }

  async isRevoked(check: RevocationCheck): Promise<boolean> {
    const keys = [
      `${this.#prefix}token:${check.jti}`,
      `${this.#prefix}family:${check.family}`,
      `${this.#prefix}generation:${check.userId}`,
    ];
    if (check.legacyIssuedAt !== undefined) keys.push(`${this.#prefix}user:${check.userId}`);
    const [token, family, generation, legacyCutoff] = await this.#client.mget(...keys);
    if (token != null || family != null) return true;
    if (
      legacyCutoff != null &&
      check.legacyIssuedAt !== undefined &&
      check.legacyIssuedAt <= Number(legacyCutoff)
    )
      return true;
    // Unequal either way: a generation above the store's means the key was lost (docs/auth.md).
    return check.generation !== Number(generation ?? 0);
  }

  async markUsed(jti: string, expiresAt: number): Promise<boolean> {
    const answer = await this.#client.set(`${this.#prefix}used:${jti}`, '1', 'PX', ttlOf(expiresAt), 'NX');
    return answer === 'OK';
  }

  /** Nothing to do: Redis expires the keys. */
  async prune(): Promise<void> {}

  async #set(key: string, value: string, expiresAt: number): Promise<void> {
    // An entry that has already expired would otherwise live for the 1 ms minimum TTL.
    if (expiresAt <= Date.now()) return;
    await this.#client.set(this.#prefix + key, value, 'PX', ttlOf(expiresAt));
  }
}

function ttlOf(expiresAt: number): number {
  return Math.max(1, Math.ceil(expiresAt - Date.now()));
}
