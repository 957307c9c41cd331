/**
 * Middlewares and steps: what runs around a handler, and the facts a step carries into a
 * route's documentation (problems, headers, rate limits).
 */
import { type ProblemCode, ProceedConfigError } from './errors.js';
import { optionKeys, refuseUnknownOptions } from './options.js';
import type { StandardSchemaV1 } from './schema.js';

declare const contextAddition: unique symbol;

/** What `next()` returns to a middleware; carries the context it added at the type level. */
export interface MiddlewareResult<TAdd> {
  readonly [contextAddition]?: TAdd;
  readonly output: unknown;
}

export type MiddlewareNext = <TAdd extends object = Record<never, never>>(
  addition?: TAdd,
) => Promise<MiddlewareResult<TAdd>>;

/**
 * Runs around the handler, after the guards. Placed before `.input()` it runs before the input
 * is validated and its `input` is `undefined`; placed after, it receives the validated input.
 * Whatever it passes to `next()` is merged into the context of everything after it.
 *
 * @example
 * const loaded = procedure<Ctx>()
 *   .input(z.object({ id: z.uuid() }))
 *   .use(async ({ ctx, input, next }) => next({ post: await ctx.db.posts.find(input.id) }));
 */
export type Middleware<TCtx, TAdd extends object, TInput = undefined> = (options: {
  ctx: TCtx;
  input: TInput;
  next: MiddlewareNext;
}) => Promise<MiddlewareResult<TAdd>>;

/** A response header a step or plugin adds, as OpenAPI documents it. */
export interface HeaderDocumentation {
  readonly description: string;
  readonly type: 'string' | 'integer';
  /**
   * More of the value's JSON Schema where the server bounds it (`const`, `enum`, `maxLength`,
   * `pattern`, `format`), so that the document can say so.
   */
  readonly schema?: Readonly<Record<string, unknown>>;
}

/**
 * What a step, guard or plugin adds to a route's documentation. It travels on the procedure (or,
 * for plugins, as a function of the route), never as a route string.
 */
export interface RouteDocumentation {
  /** Problems the route can answer because of this step. */
  readonly problems?: readonly ProblemCode[];
  /** Headers on the route's successful answers (the problems document their own). */
  readonly headers?: Readonly<Record<string, HeaderDocumentation>>;
  /** The route reads a bearer token: `optional` (checked when sent) or `required`. */
  readonly bearer?: 'optional' | 'required';
  /** Optional request headers the route reads (`If-None-Match`, say). */
  readonly requestHeaders?: Readonly<Record<string, HeaderDocumentation>>;
  /** The route answers 304 Not Modified to a matching `If-None-Match`. */
  readonly notModified?: boolean;
  /**
   * Path parameters the step reads (`owned()` reads `id`): a route whose path lacks one is
   * refused at start-up, where it would otherwise fail every request.
   */
  readonly pathParams?: readonly string[];
  /**
   * The schema the step checks each of those parameters with (`owned()`: a UUID unless told): an
   * input that checks the same parameter as another type or format is refused at start-up, where
   * one of the two would refuse every request.
   */
  readonly pathParamSchemas?: Readonly<Record<string, StandardSchemaV1>>;
  /**
   * The step's name when it checks access (its problems name `FORBIDDEN`: `owned()`), set by
   * {@link step}: `proceed routes` lists it beside the route's guards.
   */
  readonly check?: string;
}

/**
 * A fixed-window limit per route, counted by src/http/rate-limit.ts (in memory or Redis) on
 * every adapter: per client IP, or per what `key` returns; the app may change `max` and `window`
 * by `name`.
 */
export interface RateLimitRule {
  readonly name: string;
  readonly max: number;
  /** The window in ms. */
  readonly window: number;
  /**
   * Counts per what this returns of the call (an account, an API key, `ctx.user.id`) instead of
   * per client IP, once the guards and the input have passed; `undefined`: the call is not
   * counted by this rule (docs/procedures.md, "Rate limits").
   */
  readonly key?: ((call: { ctx: never; input: never }) => string | undefined) | undefined;
  /**
   * `calls` (default) counts every call; `failures` counts only the calls that end in an error,
   * while refusing every call once the count is reached (a login's failed attempts per account).
   * Only with `key`.
   */
  readonly counts?: 'calls' | 'failures' | undefined;
}

/** What `.use()` takes besides a plain middleware: a middleware with facts about the route. */
export interface Step<TCtx = never, TAdd extends object = Record<never, never>, TInput = unknown> {
  readonly '~step': {
    readonly name: string;
    readonly run: Middleware<TCtx, TAdd, TInput> | undefined;
    readonly documents: RouteDocumentation | undefined;
    readonly rateLimit: RateLimitRule | undefined;
  };
}

/**
 * A named middleware that documents what it adds to a route (the problems it answers, its
 * headers). Pass it to `.use()` like a plain middleware.
 *
 * @example
 * const tenant = step({
 *   name: 'tenant',
 *   documents: { problems: ['NOT_FOUND'] },
 *   run: async ({ ctx, next }) => next({ tenant: await findTenant(ctx.request.headers.host) }),
 * });
 */
export function step<TCtx, TAdd extends object = Record<never, never>, TInput = unknown>(definition: {
  name: string;
  run?: Middleware<TCtx, TAdd, TInput>;
  documents?: RouteDocumentation;
}): Step<TCtx, TAdd, TInput> {
  if (definition.name.trim() === '') throw new ProceedConfigError('A step needs a name');
  const { documents } = definition;
  return Object.freeze({
    '~step': Object.freeze({
      name: definition.name,
      run: definition.run,
      documents:
        documents?.problems?.includes('FORBIDDEN') === true
          ? { ...documents, check: definition.name }
          : documents,
      rateLimit: undefined,
    }),
  });
}

/**
 * Limits a route to `max` requests per `window` ms per client IP (IPv6 by /64), counted before
 * anything else of the route runs. A hit answers 429 `RATE_LIMITED` with `Retry-After`; answers
 * carry `X-RateLimit-*`. Each route has its own counter; `createApp({ rateLimit: { limits } })`
 * changes a rule's numbers by its name (say, from an environment variable).
 *
 * With `key`, the rule counts per what `key` returns of the caller and the valid input instead,
 * after the guards and the input's validation, and with `counts: 'failures'` only the calls that
 * fail: a login's wrong passwords per account, whatever address they come from.
 *
 * @example
 * const signIn = rateLimit({ name: 'auth', max: 10, window: 60_000 });
 * const login = procedure().use(signIn).input(credentials).mutation(...);
 * const perUser = rateLimit<{ user: User }>({ name: 'exports', max: 5, key: ({ ctx }) => ctx.user.id });
 */
export function rateLimit<TCtx = unknown, TInput = unknown>(rule: {
  name: string;
  max: number;
  window?: number;
  key?: ((call: { ctx: TCtx; input: TInput }) => string | undefined) | undefined;
  counts?: 'calls' | 'failures' | undefined;
}): Step<unknown> {
  // `{ windowMs }` kept the 60 s window, silently.
  refuseUnknownOptions('rateLimit', rule, rateLimitKeys, { required: true });
  const checked = checkRateLimitRule({
    name: rule.name,
    max: rule.max,
    window: rule.window ?? 60_000,
    key: rule.key as RateLimitRule['key'],
    counts: rule.counts,
  });
  return Object.freeze({
    '~step': Object.freeze({
      name: `rate limit "${checked.name}"`,
      run: undefined,
      documents: rateLimitDocumentation,
      rateLimit: checked,
    }),
  });
}

const rateLimitKeys = optionKeys<RateLimitRule>()('name', 'max', 'window', 'key', 'counts');

// The X-RateLimit-* headers go on every answer of the route, problems included: the OpenAPI
// generator declares them from `rateLimits` (src/openapi/response-headers.ts).
const rateLimitDocumentation: RouteDocumentation = Object.freeze<RouteDocumentation>({
  problems: ['RATE_LIMITED'],
});

/** Throws a ProceedConfigError naming the rule when its numbers cannot work. */
export function checkRateLimitRule(rule: RateLimitRule): RateLimitRule {
  if (typeof rule.name !== 'string' || rule.name.trim() === '')
    throw new ProceedConfigError('rateLimit needs a name');
  // Safe integers only: the X-RateLimit-* headers are documented as such (src/openapi/response-headers.ts).
  if (!Number.isSafeInteger(rule.max) || rule.max < 1)
    throw new ProceedConfigError(`rateLimit "${rule.name}": max must be an integer ≥ 1, not ${rule.max}`);
  if (!Number.isSafeInteger(rule.window) || rule.window < 1)
    throw new ProceedConfigError(
      `rateLimit "${rule.name}": window must be a positive number of ms, not ${rule.window}`,
    );
  if (rule.key !== undefined && typeof rule.key !== 'function')
    throw new ProceedConfigError(`rateLimit "${rule.name}": key must be a function of { ctx, input }`);
  if (rule.counts !== undefined && rule.counts !== 'calls' && rule.counts !== 'failures')
    throw new ProceedConfigError(
      `rateLimit "${rule.name}": counts must be "calls" or "failures", not ${JSON.stringify(rule.counts)}`,
    );
  // A rule per client IP is checked before the route runs, and whether the call failed is known
  // only after: failures are counted per key.
  if (rule.counts === 'failures' && rule.key === undefined)
    throw new ProceedConfigError(`rateLimit "${rule.name}": counts "failures" needs a key`);
  return Object.freeze({
    name: rule.name,
    max: rule.max,
    window: rule.window,
    ...(rule.key === undefined ? {} : { key: rule.key, counts: rule.counts ?? 'calls' }),
  });
}
