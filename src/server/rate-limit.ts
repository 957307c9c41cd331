/**
 * The Fastify side of `rateLimit()` steps: each limited route gets its own `onRequest` hook and
 * counter (per rule, route and client IP), on `@fastify/rate-limit` (in memory, or in Redis to
 * share counters between instances). A hit is a 429 `RATE_LIMITED` problem with `Retry-After`.
 */
import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import { ProceedConfigError, ProceedError } from '../core/errors.js';
import { checkRateLimitRule, type RateLimitRule } from '../core/procedure.js';
import type { MountedRoute } from '../core/route-table.js';

/** A rule's numbers changed by the app, say from an environment variable. */
export interface RateLimitChange {
  /** Requests per window per client IP and route. */
  max?: number;
  /** The window in ms. */
  window?: number;
}

export interface RateLimitOptions {
  /** An ioredis client, to share counters between instances. Default: in memory, per instance. */
  redis?: unknown;
  /** Changes the numbers of `rateLimit()` rules by name; a name no route uses is a start-up error. */
  limits?: Readonly<Record<string, RateLimitChange>>;
}

type Limiter = ReturnType<FastifyInstance['createRateLimit']>;

export class RateLimits {
  readonly #server: FastifyInstance;
  readonly #options: RateLimitOptions;
  readonly #used = new Set<string>();
  #registered = false;

  constructor(server: FastifyInstance, options: RateLimitOptions = {}) {
    this.#server = server;
    this.#options = options;
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
    this.#server.register(fastifyRateLimit, { global: false, ...(redis === undefined ? {} : { redis }) });
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
      const result = await limiter(request);
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
