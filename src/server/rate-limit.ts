/**
 * The Fastify side of `rateLimit()` steps: each limited route gets its own `onRequest` hook and
 * counter (per rule, route and client IP), on `@fastify/rate-limit` (in memory, or in Redis to
 * share counters between instances). A hit is a 429 `RATE_LIMITED` problem with `Retry-After`.
 */
import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import { ProceedConfigError, ProceedError } from '../core/errors.js';
import type { MountedRoute } from '../core/route-table.js';
import { checkRateLimitRule, type RateLimitRule } from '../core/steps.js';

/** A rule's numbers changed by the app, say from an environment variable. */
export interface RateLimitChange {
  /** Requests per window per client IP and route. */
  max?: number;
  /** The window in ms. */
  window?: number;
}

/** What the part of an ioredis client Proceed uses looks like. */
export interface RateLimitRedis {
  options?: { enableOfflineQueue?: boolean | undefined };
  ping(): Promise<unknown>;
  on(event: 'error' | 'ready', listener: (error?: Error) => void): unknown;
  off(event: 'error' | 'ready', listener: (error?: Error) => void): unknown;
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

type Limiter = ReturnType<FastifyInstance['createRateLimit']>;

export class RateLimits {
  readonly #server: FastifyInstance;
  readonly #options: RateLimitOptions;
  readonly #used = new Set<string>();
  #registered = false;

  /** Whether the store failed last time it was used (one log line per outage). */
  #storeDown = false;

  constructor(server: FastifyInstance, options: RateLimitOptions = {}) {
    this.#server = server;
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
      server.addHook('onClose', async () => {
        redis.off('error', failed);
        redis.off('ready', recovered);
      });
    } else if (options.onStoreError !== undefined) {
      throw new ProceedConfigError(
        'rateLimit.onStoreError applies to a shared store only: set rateLimit.redis too, or remove it (limits are counted in this process, which cannot fail)',
      );
    }
    const names = Object.keys(options.limits ?? {});
    if (names.length > 0) {
      server.addHook('onReady', async () => {
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
    let timer: NodeJS.Timeout | undefined;
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
    this.#server.log.error({ err: error }, `Rate-limit store (Redis) unreachable: ${effect}`);
  }

  #storeRecovered(): void {
    if (!this.#storeDown) return;
    this.#storeDown = false;
    this.#server.log.info('Rate-limit store (Redis) reachable again: rate limits apply');
  }

  /** The `onRequest` hooks of a route, one per rule; none when it has no rules. */
  hooksFor(route: MountedRoute): onRequestAsyncHookHandler[] {
    const rules = route.definition.rateLimits;
    if (rules.length === 0) return [];
    const resolved = rules.map((rule) => this.#resolve(rule));
    this.#register();
    return resolved.map((rule) => this.#hook(route, rule));
  }

  #resolve(rule: RateLimitRule): RateLimitRule {
    this.#used.add(rule.name);
    const change = this.#options.limits?.[rule.name];
    if (change === undefined) return rule;
    try {
      return checkRateLimitRule({
        name: rule.name,
        max: change.max ?? rule.max,
        window: change.window ?? rule.window,
      });
    } catch (error) {
      throw new ProceedConfigError(`rateLimit.limits: ${(error as Error).message}`);
    }
  }

  #register(): void {
    if (this.#registered) return;
    this.#registered = true;
    // global: false: the plugin limits nothing by itself; the routes' own hooks call it.
    const { redis } = this.#options;
    // skipOnError false: a store error reaches the hook above, which decides (allow or refuse).
    this.#server.register(fastifyRateLimit, {
      global: false,
      skipOnError: false,
      ...(redis === undefined ? {} : { redis: redis as never }),
    });
  }

  #hook(route: MountedRoute, rule: RateLimitRule): onRequestAsyncHookHandler {
    // HEAD requests reach GET routes and count with them: the key names the route, not the request.
    const prefix = `${rule.name}|${route.method} ${route.path}|`;
    let limiter: Limiter | undefined;
    return async (request, reply) => {
      limiter ??= this.#server.createRateLimit({
        max: rule.max,
        timeWindow: rule.window,
        keyGenerator: (each) => prefix + fastifyRateLimit.normalizeIP(each.ip),
      });
      let result: Awaited<ReturnType<Limiter>>;
      try {
        result = await limiter(request);
      } catch (error) {
        // The store cannot count: never a 500 (docs/deployment.md, "Shared rate limits").
        this.#storeFailed(error as Error);
        if (this.#options.onStoreError !== 'refuse') return;
        throw new ProceedError('UNAVAILABLE', 'Rate limits cannot be checked right now; try again shortly', {
          headers: { 'retry-after': '5' },
        });
      }
      if (this.#storeDown) this.#storeRecovered();
      if (result.isAllowed) return;
      const headers = {
        'x-ratelimit-limit': String(result.max),
        'x-ratelimit-remaining': String(result.remaining),
        'x-ratelimit-reset': String(result.ttlInSeconds),
      };
      if (!result.isExceeded) {
        reply.headers(headers);
        return;
      }
      const seconds = Math.max(1, result.ttlInSeconds);
      throw new ProceedError('RATE_LIMITED', `Too many requests; try again in ${seconds} s`, {
        headers: { ...headers, 'x-ratelimit-remaining': '0', 'retry-after': String(seconds) },
      });
    };
  }
}
