/**
 * Where `rateLimit()` rules are counted (src/http/rate-limit.ts): fixed windows per key, in this
 * process's memory or in Redis, shared by every instance.
 */

/** What the part of an ioredis client Proceed uses looks like. */
export interface RateLimitRedis {
  options?: { enableOfflineQueue?: boolean | undefined };
  ping(): Promise<unknown>;
  eval(script: string, keys: number, ...args: (string | number)[]): Promise<unknown>;
  evalsha(sha: string, keys: number, ...args: (string | number)[]): Promise<unknown>;
  on(event: 'error' | 'ready', listener: (error?: Error) => void): unknown;
  off(event: 'error' | 'ready', listener: (error?: Error) => void): unknown;
}

/** One window's count for a key, and the ms until the window ends. */
export interface Count {
  count: number;
  resetIn: number;
}

/** Counts hits per key in fixed windows. */
export interface Counter {
  hit(key: string, window: number): Count | Promise<Count>;
  /**
   * Takes one hit back from the key's current window (a call that a rule counting failures
   * only saw succeed); nothing when the window has ended.
   */
  refund(key: string): void | Promise<void>;
}

/**
 * This process's counts. Synchronous, so a limited route costs no promise; ended windows are
 * dropped in one pass a minute (no timer: Workers allow none outside a request), and the number
 * of keys is capped so that a flood of addresses cannot grow the map without end.
 */
export class MemoryCounter implements Counter {
  static readonly maxKeys = 100_000;
  readonly #windows = new Map<string, { count: number; endsAt: number }>();
  #nextSweep = 0;

  hit(key: string, window: number): Count {
    const now = Date.now();
    if (now >= this.#nextSweep) this.#sweep(now);
    let entry = this.#windows.get(key);
    if (entry === undefined || entry.endsAt <= now) {
      if (entry !== undefined) this.#windows.delete(key);
      else if (this.#windows.size >= MemoryCounter.maxKeys) this.#dropOldest();
      entry = { count: 0, endsAt: now + window };
      this.#windows.set(key, entry);
    }
    entry.count += 1;
    return { count: entry.count, resetIn: entry.endsAt - now };
  }

  refund(key: string): void {
    const entry = this.#windows.get(key);
    if (entry !== undefined && entry.endsAt > Date.now() && entry.count > 0) entry.count -= 1;
  }

  #sweep(now: number): void {
    for (const [key, entry] of this.#windows) if (entry.endsAt <= now) this.#windows.delete(key);
    this.#nextSweep = now + 60_000;
  }

  /** Keys are in insertion order: the oldest window goes first. */
  #dropOldest(): void {
    for (const key of this.#windows.keys()) {
      this.#windows.delete(key);
      return;
    }
  }
}

/** One round trip per hit: the count and the window's remaining time, atomically. */
const hitScript = `local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}`;

/** Counts in Redis: every instance sees the same windows. */
export class RedisCounter implements Counter {
  readonly #redis: RateLimitRedis;
  #sha: string | undefined;

  constructor(redis: RateLimitRedis) {
    this.#redis = redis;
  }

  async hit(key: string, window: number): Promise<Count> {
    const redisKey = `proceed:rate-limit:${key}`;
    let reply: unknown;
    if (this.#sha === undefined) {
      this.#sha = await sha1Hex(hitScript);
      reply = await this.#redis.eval(hitScript, 1, redisKey, window);
    } else {
      try {
        reply = await this.#redis.evalsha(this.#sha, 1, redisKey, window);
      } catch (error) {
        // A restarted or flushed Redis forgot the script: send it once more.
        if (!String((error as Error).message).startsWith('NOSCRIPT')) throw error;
        reply = await this.#redis.eval(hitScript, 1, redisKey, window);
      }
    }
    const [count, resetIn] = reply as [number, number];
    return { count: Number(count), resetIn: Number(resetIn) };
  }

  async refund(key: string): Promise<void> {
    await this.#redis.eval(refundScript, 1, `proceed:rate-limit:${key}`);
  }
}

/** Only within a window that still runs: a refund must not start a window of its own. */
const refundScript = `if redis.call('PTTL', KEYS[1]) > 0 and tonumber(redis.call('GET', KEYS[1])) > 0 then
  redis.call('DECR', KEYS[1])
end
return 0`;

async function sha1Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-1', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}
