/**
 * Per-client-IP rate limiting of chosen routes (login, register, refresh, forgot-password), on
 * `@fastify/rate-limit`. The limiter runs in one `onRequest` hook that looks the matched route up
 * in a set, so it applies to routes mounted before or after it; a hit answers 429 `RATE_LIMITED`
 * with `Retry-After` through the app's problem+json error handler.
 */
import fastifyRateLimit from '@fastify/rate-limit';
import { rateLimitFromEnv } from '../config/env.js';
import { ProceedConfigError, ProceedError } from '../core/errors.js';
import type { App } from '../server/app.js';

export interface AuthRateLimitOptions {
  /**
   * The routes to limit, as mounted: `'POST /api/auth/login'`, or a bare path for every method
   * of it. Each route has its own counter per client IP. A route that does not exist when the
   * app starts is a start-up error (a typo must not silently disable the limit).
   */
  routes: readonly string[];
  /** Requests per window per client IP and route. Default `AUTH_RATE_LIMIT`, else 10. */
  max?: number;
  /** The window in ms. Default 60,000. */
  timeWindow?: number;
  /**
   * An ioredis client, to share counters between instances (the default counts in memory, per
   * instance).
   */
  redis?: unknown;
}

const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
type Method = (typeof methods)[number];

/** HEAD requests reach GET routes; they count as GET. */
const methodOf = (method: string) => (method === 'HEAD' ? 'GET' : method);

interface RouteSpec {
  method: Method | undefined;
  path: string;
}

function parseRoute(route: string): RouteSpec {
  const match = /^(?:([A-Za-z]+)\s+)?(\/\S*)$/.exec(route.trim());
  const method = match?.[1]?.toUpperCase();
  const path = match?.[2];
  if (path === undefined || (method !== undefined && !methods.includes(method as Method))) {
    throw new ProceedConfigError(
      `authRateLimit: "${route}" is not a route (expected "POST /api/auth/login")`,
    );
  }
  return { method: method as Method | undefined, path };
}

/**
 * Limits the given routes to `max` requests per `timeWindow` per client IP (IPv6 by /64). The
 * client IP is Fastify's `request.ip`: behind a proxy, set `createApp({ trustProxy })`.
 *
 * @example
 * await authRateLimit(app, { routes: ['POST /api/auth/login', 'POST /api/auth/register'] });
 */
export async function authRateLimit(app: App, options: AuthRateLimitOptions): Promise<void> {
  const max = options.max ?? rateLimitFromEnv();
  const timeWindow = options.timeWindow ?? 60_000;
  if (!Number.isInteger(max) || max < 1) throw new ProceedConfigError('authRateLimit: max must be ≥ 1');
  if (!Number.isInteger(timeWindow) || timeWindow < 1)
    throw new ProceedConfigError('authRateLimit: timeWindow must be a positive number of ms');
  const specs = options.routes.map(parseRoute);
  app.declareProblem('RATE_LIMITED', options.routes);
  const limited = new Map<string, Set<string>>();
  for (const { method, path } of specs) {
    const set = limited.get(path) ?? new Set<string>();
    for (const each of method === undefined ? methods : [method]) set.add(each);
    limited.set(path, set);
  }
  const server = app.server;

  if (!server.hasDecorator('createRateLimit')) {
    // global: false, so that the plugin itself limits nothing; the hook below picks the routes.
    await server.register(fastifyRateLimit, {
      global: false,
      ...(options.redis === undefined ? {} : { redis: options.redis }),
    });
  }
  const limiter = server.createRateLimit({
    max,
    timeWindow,
    keyGenerator: (request) =>
      `${methodOf(request.method)} ${request.routeOptions.url} ${fastifyRateLimit.normalizeIP(request.ip)}`,
  });

  server.addHook('onRequest', async (request, reply) => {
    const url = request.routeOptions.url;
    if (url === undefined) return;
    if (limited.get(url)?.has(methodOf(request.method)) !== true) return;
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
  });

  server.addHook('onReady', async () => {
    const missing = specs
      .filter(({ method, path }) =>
        (method === undefined ? methods : [method]).every(
          (each) => !server.hasRoute({ method: each, url: path }),
        ),
      )
      .map(({ method, path }) => (method === undefined ? path : `${method} ${path}`));
    if (missing.length > 0) {
      throw new ProceedConfigError(`authRateLimit: no such route: ${missing.join(', ')}`);
    }
  });
}
