/**
 * `rateLimit()` rules, counted the same way on every adapter (docs/procedures.md, "Rate
 * limits"): a fixed window per rule, route and client IP (IPv6 by /64), in this process's memory
 * or in Redis to share the counts between instances. A hit is a 429 `RATE_LIMITED` problem with
 * `Retry-After`; every limited answer carries `X-RateLimit-*`. Adapters only pass the client's
 * address in and write the headers out.
 */
import { Address6 } from 'ip-address';
import type { KeyedLimiter } from '../core/call.js';
import { ProceedConfigError, ProceedError } from '../core/errors.js';
import { optionKeys, refuseUnknownOptions } from '../core/options.js';
import type { MountedRoute } from '../core/route-table.js';
import { checkRateLimitRule, type RateLimitRule } from '../core/steps.js';
import { ipv4 } from './ip.js';
import {
  type Count,
  type Counter,
  MemoryCounter,
  type RateLimitRedis,
  RedisCounter,
} from './rate-limit-counters.js';

export type { RateLimitRedis } from './rate-limit-counters.js';

/** A rule's numbers changed by the app, say from an environment variable. */
export interface RateLimitChange {
  /** Requests per window per client IP and route. */
  max?: number;
  /** The window in ms. */
  window?: number;
}

export interface RateLimitOptions {
  /**
   * An ioredis client, to share counters between instances. Default: in memory, per instance.
   * It must be created with `enableOfflineQueue: false` (docs/deployment.md, "Shared rate
   * limits"): a client that queues commands while Redis is down would hold every limited request.
   */
  redis?: RateLimitRedis;
  /**
   * When the Redis store cannot be reached: `allow` (default) lets requests through unlimited and
   * logs once per outage; `refuse` answers the limited routes 503 `UNAVAILABLE`. Never a 500.
   */
  onStoreError?: 'allow' | 'refuse';
  /** Changes the numbers of `rateLimit()` rules by name; a name no route uses is a start-up error. */
  limits?: Readonly<Record<string, RateLimitChange>>;
}

const rateLimitChangeKeys = optionKeys<RateLimitChange>()('max', 'window');

/** Where the client's address is not an address (none known, or junk a trusted proxy passed on). */
const unknownClient = 'unknown';

/**
 * The key part of a client's address: IPv4 as it is, an IPv4-mapped IPv6 address as its IPv4,
 * other IPv6 addresses by their /64 (one host usually holds a whole /64). Anything else shares
 * one key, so that made-up addresses cannot grow the counters.
 */
export function clientKey(ip: string | undefined): string {
  if (ip === undefined || ip === '') return unknownClient;
  if (ipv4.test(ip)) return ip;
  if (!ip.includes(':') || ip.length > 64) return unknownClient;
  let address: Address6;
  try {
    address = new Address6(ip);
  } catch {
    return unknownClient;
  }
  if (address.isMapped4()) return address.to4().correctForm();
  return new Address6(`${address.correctForm()}/64`).startAddress().correctForm();
}

/** Headers for an answer the limits let through. */
export type RateLimitHeaders = Readonly<Record<string, string>>;

/** The limits of one route: the headers to add, or a thrown 429 (or 503). */
export interface RouteLimiter {
  check(ip: string | undefined): RateLimitHeaders | undefined | Promise<RateLimitHeaders | undefined>;
}

/** What the limits need of the app: its log and its lifecycle hooks. */
export interface RateLimitHost {
  log: { error(object: object, message: string): void; info(message: string): void };
  onClose(task: () => void): void;
  onReady(task: () => void): void;
}

export class RateLimits {
  readonly #options: RateLimitOptions;
  readonly #host: RateLimitHost;
  readonly #counter: Counter;
  readonly #used = new Set<string>();

  /** Whether the store failed last time it was used (one log line per outage). */
  #storeDown = false;

  constructor(host: RateLimitHost, options: RateLimitOptions = {}) {
    this.#host = host;
    this.#options = options;
    const { redis } = options;
    if (options.onStoreError !== undefined && !['allow', 'refuse'].includes(options.onStoreError))
      throw new ProceedConfigError(
        `rateLimit.onStoreError must be "allow" or "refuse" (got "${options.onStoreError}")`,
      );
    if (redis !== undefined) {
      if (redis.options?.enableOfflineQueue !== false) {
        throw new ProceedConfigError(
          'rateLimit.redis: create the client with enableOfflineQueue: false (and maxRetriesPerRequest: 1); ' +
            'a client that queues commands while Redis is down holds every rate-limited request until it is back',
        );
      }
      // ioredis reports every failed reconnection; the store's state is logged once per outage instead.
      const failed = (error?: Error) => this.#storeFailed(error);
      const recovered = () => this.#storeRecovered();
      redis.on('error', failed);
      redis.on('ready', recovered);
      // The client is the caller's and may outlive this app: it must not keep the app alive.
      host.onClose(() => {
        redis.off('error', failed);
        redis.off('ready', recovered);
      });
      this.#counter = new RedisCounter(redis);
    } else {
      if (options.onStoreError !== undefined) {
        throw new ProceedConfigError(
          'rateLimit.onStoreError applies to a shared store only: set rateLimit.redis too, or remove it (limits are counted in this process, which cannot fail)',
        );
      }
      this.#counter = new MemoryCounter();
    }
    const names = Object.keys(options.limits ?? {});
    // `{ auth: 5 }` or `{ auth: { maxx: 5 } }` changed nothing, silently.
    for (const name of names)
      refuseUnknownOptions(`rateLimit.limits.${name}`, options.limits?.[name], rateLimitChangeKeys, {
        required: true,
      });
    if (names.length > 0) {
      host.onReady(() => {
        const unused = names.filter((name) => !this.#used.has(name));
        if (unused.length > 0) {
          const known = [...this.#used].map((name) => `"${name}"`).join(', ') || 'none';
          throw new ProceedConfigError(
            `rateLimit.limits: no route uses ${unused.map((name) => `"${name}"`).join(', ')} (rules in use: ${known})`,
          );
        }
      });
    }
  }

  /** Whether a shared store is configured. */
  get shared(): boolean {
    return this.#options.redis !== undefined;
  }

  /**
   * The store's state for readiness: `ok`, or `unreachable` (a ping within 1 s failed). Always
   * `ok` in memory.
   */
  async storeState(): Promise<'ok' | 'unreachable'> {
    const { redis } = this.#options;
    if (redis === undefined) return 'ok';
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        redis.ping(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('Redis did not answer PING within 1 s')), 1000);
        }),
      ]);
      this.#storeRecovered();
      return 'ok';
    } catch (error) {
      this.#storeFailed(error as Error);
      return 'unreachable';
    } finally {
      clearTimeout(timer);
    }
  }

  /** Whether the app refuses limited routes while the store is down. */
  get refusesWithoutStore(): boolean {
    return this.#options.onStoreError === 'refuse';
  }

  #storeFailed(error: Error | undefined): void {
    if (this.#storeDown) return;
    this.#storeDown = true;
    const effect =
      this.#options.onStoreError === 'refuse'
        ? 'rate-limited routes answer 503 until it is back'
        : 'rate limits are not applied until it is back';
    this.#host.log.error({ err: error }, `Rate-limit store (Redis) unreachable: ${effect}`);
  }

  #storeRecovered(): void {
    if (!this.#storeDown) return;
    this.#storeDown = false;
    this.#host.log.info('Rate-limit store (Redis) reachable again: rate limits apply');
  }

  /**
   * The limits of a route, checked in the order of its rules; undefined when it has none. Throws
   * a ProceedConfigError for a changed rule whose numbers cannot work.
   */
  limiterFor(route: MountedRoute): RouteLimiter | undefined {
    // Every rule is resolved here, the keyed ones too: the app's changes are checked at start-up.
    const rules = route.definition.rateLimits
      .map((rule) => this.#resolve(rule))
      .filter((rule) => rule.key === undefined);
    if (rules.length === 0) return undefined;
    // HEAD requests reach GET routes and count with them: the key names the route, not the request.
    const prefixes = rules.map((rule) => `${rule.name}|${route.method} ${route.path}|`);
    const checkOne = (index: number, ip: string | undefined) => {
      const rule = rules[index] as RateLimitRule;
      const key = (prefixes[index] as string) + clientKey(ip);
      let counted: Count | Promise<Count>;
      try {
        counted = this.#counter.hit(key, rule.window);
      } catch (error) {
        return this.#failed(error);
      }
      return counted instanceof Promise
        ? counted.then(
            (count) => this.#verdict(rule, count),
            (error: unknown) => this.#failed(error),
          )
        : this.#verdict(rule, counted);
    };
    if (rules.length === 1) return { check: (ip) => checkOne(0, ip) };
    return {
      async check(ip) {
        let headers: RateLimitHeaders | undefined;
        for (let index = 0; index < rules.length; index += 1) headers = await checkOne(index, ip);
        return headers;
      },
    };
  }

  /**
   * The route's rules counted per key, once the guards and the input have passed (the core calls
   * it: src/core/execute.ts); undefined when it has none. A refused call gives back the counts of
   * the rules that count failures only, the refusing one's included: it did not fail, it did not
   * run.
   */
  keyedLimiterFor(route: MountedRoute): KeyedLimiter | undefined {
    const rules = route.definition.rateLimits
      .filter((rule) => rule.key !== undefined)
      .map((rule) => this.#resolve(rule));
    if (rules.length === 0) return undefined;
    const prefixes = rules.map((rule) => `${rule.name}|${route.method} ${route.path}|key|`);
    const giveBack = (keys: readonly string[]) => {
      for (const key of keys)
        Promise.resolve()
          .then(() => this.#counter.refund(key))
          .catch((error: unknown) => this.#storeFailed(error as Error));
    };
    return {
      count: async (ctx, input) => {
        const failuresOnly: string[] = [];
        try {
          for (let index = 0; index < rules.length; index += 1) {
            const rule = rules[index] as RateLimitRule;
            const value = (rule.key as (call: { ctx: unknown; input: unknown }) => string | undefined)({
              ctx,
              input,
            });
            if (value === undefined) continue;
            const key = (prefixes[index] as string) + String(value);
            let count: Count;
            try {
              count = await this.#counter.hit(key, rule.window);
            } catch (error) {
              this.#failed(error);
              continue;
            }
            // Given back if this very rule refuses the call: a call that did not run did not fail.
            if (rule.counts === 'failures') failuresOnly.push(key);
            this.#verdict(rule, count);
          }
        } catch (error) {
          giveBack(failuresOnly);
          throw error;
        }
        return failuresOnly.length === 0 ? undefined : () => giveBack(failuresOnly);
      },
    };
  }

  /** The store cannot count: never a 500 (docs/deployment.md, "Shared rate limits"). */
  #failed(error: unknown): undefined {
    this.#storeFailed(error as Error);
    if (this.#options.onStoreError !== 'refuse') return undefined;
    throw new ProceedError('UNAVAILABLE', 'Rate limits cannot be checked right now; try again shortly', {
      headers: { 'retry-after': '5' },
    });
  }

  #verdict(rule: RateLimitRule, { count, resetIn }: Count): RateLimitHeaders {
    if (this.#storeDown) this.#storeRecovered();
    const seconds = Math.max(0, Math.ceil(resetIn / 1000));
    const headers = {
      'x-ratelimit-limit': String(rule.max),
      'x-ratelimit-remaining': String(Math.max(0, rule.max - count)),
      'x-ratelimit-reset': String(seconds),
    };
    if (count <= rule.max) return headers;
    const wait = Math.max(1, seconds);
    throw new ProceedError('RATE_LIMITED', `Too many requests; try again in ${wait} s`, {
      headers: { ...headers, 'retry-after': String(wait) },
    });
  }

  #resolve(rule: RateLimitRule): RateLimitRule {
    this.#used.add(rule.name);
    const change = this.#options.limits?.[rule.name];
    if (change === undefined) return rule;
    try {
      return checkRateLimitRule({
        ...rule,
        max: change.max ?? rule.max,
        window: change.window ?? rule.window,
      });
    } catch (error) {
      throw new ProceedConfigError(`rateLimit.limits: ${(error as Error).message}`);
    }
  }
}
