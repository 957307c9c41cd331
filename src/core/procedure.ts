/**
 * The procedure builder. Builders are immutable: every method returns a new builder, so a
 * partly configured builder (say, one with an `authenticated` guard) can be shared as a base.
 */
import type { ProblemCode } from './errors.js';
import type { ProcedureKind, RestOverride } from './naming.js';
import { optionKeys, refuseUnknownOptions } from './options.js';
import type { EntityVersion, Precondition } from './precondition.js';
import type { StandardSchemaV1 } from './schema.js';

type MaybePromise<T> = T | Promise<T>;

/** What Proceed knows of the HTTP request behind a call. Transport-neutral. */
export interface RequestInfo {
  readonly id: string;
  readonly method: string;
  readonly url: string;
  readonly ip: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Raw path parameters, before coercion and validation. */
  readonly params: Readonly<Record<string, string>>;
}

/** The context every handler, guard and middleware receives. Apps and plugins extend it. */
export interface BaseContext {
  request: RequestInfo;
}

/**
 * A named check on the context. A failing guard answers 401 when no user is signed in and, when
 * one is, 403 naming the guard, unless it `failsWith: 'UNAUTHENTICATED'` (a guard that only asks
 * for a signed-in caller). The server and the OpenAPI generator both read `failsWith`.
 */
export interface Guard<TCtx = never> {
  readonly name: string;
  /** Guards run before input validation: they see the context, never the input. */
  check(ctx: TCtx): MaybePromise<boolean>;
  /** Passes only for a signed-in caller: ctx.user becomes non-optional after it. */
  readonly requiresUser?: boolean;
  /** What refusing a signed-in caller answers. Default `FORBIDDEN` (403). */
  readonly failsWith?: GuardFailure;
  /** The fields of `ctx.user` the check reads; a loaded user must have them. */
  readonly reads?: readonly string[];
}

/** `FORBIDDEN`: a signed-in caller it refuses gets 403. `UNAUTHENTICATED`: it only checks sign-in. */
export type GuardFailure = 'FORBIDDEN' | 'UNAUTHENTICATED';

interface GuardDefinition<TCtx> {
  name: string;
  check: (ctx: TCtx) => MaybePromise<boolean>;
  failsWith?: GuardFailure;
  requiresUser?: boolean;
  /**
   * The fields of `ctx.user` the check reads (`hasRole` reads `role`). A signed-in user without
   * one of them is the user loader's mistake: a 500 whose log line names the guard, the field and
   * the loader, rather than a 403 that blames the caller (docs/auth.md).
   */
  reads?: readonly UserField<TCtx>[];
}

/** The field names of a context's user; any string when the context declares no user type. */
export type UserField<TCtx> =
  unknown extends UserOf<TCtx> ? string : keyof NonNullable<UserOf<TCtx>> & string;

/** The user a context type carries (`unknown` when it declares none). */
export type UserOf<TCtx> = TCtx extends { user?: infer User } ? User : unknown;

const guardKeys = optionKeys<GuardDefinition<unknown>>()(
  'name',
  'check',
  'failsWith',
  'requiresUser',
  'reads',
);
const restKeys = optionKeys<RestOverride>()('method', 'path', 'status');

/** A guard that passes only for a signed-in caller. */
export interface UserGuard<TCtx = never> extends Guard<TCtx> {
  readonly requiresUser: true;
}

/**
 * Defines a guard.
 *
 * @example
 * const editor = guard({ name: 'editor', requiresUser: true, check: (ctx: Ctx) => ctx.user?.role === 'editor' });
 */
export function guard<TCtx>(definition: GuardDefinition<TCtx> & { requiresUser: true }): UserGuard<TCtx>;
export function guard<TCtx>(definition: GuardDefinition<TCtx> & { requiresUser?: false }): Guard<TCtx>;
export function guard<TCtx>(definition: GuardDefinition<TCtx> & { requiresUser?: boolean }): Guard<TCtx> {
  refuseUnknownOptions(
    typeof definition?.name === 'string' ? `guard "${definition.name}"` : 'guard()',
    definition,
    guardKeys,
    { required: true },
  );
  if (
    definition.reads !== undefined &&
    (!Array.isArray(definition.reads) || definition.reads.some((field) => typeof field !== 'string'))
  )
    throw new TypeError(`guard "${definition.name}": reads is a list of user field names`);
  if (definition.name.trim() === '') throw new TypeError('A guard needs a name');
  if (definition.failsWith !== undefined && !['FORBIDDEN', 'UNAUTHENTICATED'].includes(definition.failsWith))
    throw new TypeError(`guard "${definition.name}": failsWith is FORBIDDEN or UNAUTHENTICATED`);
  return Object.freeze({ ...definition });
}

/**
 * The first field a guard `reads` that a signed-in user lacks: absent from the object, which is
 * the loader's mistake (a field that is `null` was loaded, and is the check's to judge).
 */
export function missingUserField(guard: Guard<never>, user: unknown): string | undefined {
  if (guard.reads === undefined || typeof user !== 'object' || user === null) return undefined;
  return guard.reads.find((field) => !(field in user));
}

/** Thrown by a guard (or a composite) that finds a field it reads missing from `ctx.user`. */
export class MissingUserFieldError extends Error {
  override readonly name = 'MissingUserFieldError';
  constructor(
    readonly guard: string,
    readonly field: string,
  ) {
    super(`Guard "${guard}" reads user.${field}, which the loaded user does not have`);
  }
}

/** Whether a guard can refuse a signed-in caller with 403. */
export function canForbid(guard: Guard<never>): boolean {
  return guard.failsWith !== 'UNAUTHENTICATED';
}

/** The context after a user-requiring guard: `user` is present. */
export type WithUser<TCtx> = TCtx extends { user?: infer U }
  ? Omit<TCtx, 'user'> & { user: NonNullable<U> }
  : TCtx;

type AfterGuards<TCtx, G extends readonly Guard<never>[]> = [
  Extract<G[number], { requiresUser: true }>,
] extends [never]
  ? TCtx
  : WithUser<TCtx>;

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
}

/**
 * A fixed-window limit per client IP and route. The app's adapter counts (Fastify:
 * `@fastify/rate-limit`, in memory or Redis); the app may change `max` and `window` by `name`.
 */
export interface RateLimitRule {
  readonly name: string;
  readonly max: number;
  /** The window in ms. */
  readonly window: number;
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
  if (definition.name.trim() === '') throw new TypeError('A step needs a name');
  return Object.freeze({
    '~step': Object.freeze({
      name: definition.name,
      run: definition.run,
      documents: definition.documents,
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
 * @example
 * const signIn = rateLimit({ name: 'auth', max: 10, window: 60_000 });
 * const login = procedure().use(signIn).input(credentials).mutation(...);
 */
export function rateLimit(rule: { name: string; max: number; window?: number }): Step<unknown> {
  const checked = checkRateLimitRule({ name: rule.name, max: rule.max, window: rule.window ?? 60_000 });
  return Object.freeze({
    '~step': Object.freeze({
      name: `rate limit "${checked.name}"`,
      run: undefined,
      documents: rateLimitDocumentation,
      rateLimit: checked,
    }),
  });
}

const rateLimitDocumentation: RouteDocumentation = Object.freeze<RouteDocumentation>({
  problems: ['RATE_LIMITED'],
  headers: {
    'X-RateLimit-Limit': { description: 'Requests allowed per window', type: 'integer' },
    'X-RateLimit-Remaining': { description: 'Requests left in this window', type: 'integer' },
    'X-RateLimit-Reset': { description: 'Seconds until the window resets', type: 'integer' },
  },
});

/** Throws a TypeError naming the rule when its numbers cannot work. */
export function checkRateLimitRule(rule: RateLimitRule): RateLimitRule {
  if (typeof rule.name !== 'string' || rule.name.trim() === '') throw new TypeError('rateLimit needs a name');
  if (!Number.isInteger(rule.max) || rule.max < 1)
    throw new TypeError(`rateLimit "${rule.name}": max must be an integer ≥ 1, not ${rule.max}`);
  if (!Number.isInteger(rule.window) || rule.window < 1)
    throw new TypeError(
      `rateLimit "${rule.name}": window must be a positive number of ms, not ${rule.window}`,
    );
  return Object.freeze({ name: rule.name, max: rule.max, window: rule.window });
}

/** Documentation a procedure carries into OpenAPI. */
export interface ProcedureMeta {
  summary?: string;
  description?: string;
  deprecated?: boolean;
  /**
   * Problem codes the handler itself may answer with, beyond those Proceed derives from the
   * input, guards and route (documented in OpenAPI), e.g. `['FORBIDDEN']` for a login that
   * refuses deactivated accounts, or an app's own code from `defineErrors`.
   */
  errors?: readonly ProblemCode[];
}

/** An output chosen per request: one schema per case, and a function of the context that picks. */
export interface OutputSelection {
  readonly choices: Readonly<Record<string, StandardSchemaV1>>;
  readonly select: (ctx: never) => string;
}

export type OutputDeclaration =
  | { kind: 'fixed'; schema: StandardSchemaV1 }
  | ({ kind: 'select' } & OutputSelection);

export type AnyHandler = (options: { input: never; ctx: never }) => unknown;
export type AnyMiddleware = Middleware<never, object, never>;

/** The runtime description of a procedure: plain data the server, OpenAPI and CLI read. */
export interface ProcedureDefinition {
  readonly kind: ProcedureKind;
  readonly input: StandardSchemaV1 | undefined;
  readonly output: OutputDeclaration | undefined;
  readonly guards: readonly Guard<never>[];
  /** Run after the guards, before the input is validated. */
  readonly middlewares: readonly AnyMiddleware[];
  /** Run after the input is validated (placed after `.input()`); they receive it. */
  readonly inputMiddlewares: readonly AnyMiddleware[];
  /** What the procedure's steps add to its documentation. */
  readonly documentation: readonly RouteDocumentation[];
  readonly rateLimits: readonly RateLimitRule[];
  readonly rest: RestOverride | undefined;
  readonly meta: ProcedureMeta;
  /** Headers sent with every successful answer of this procedure. */
  readonly headers: Readonly<Record<string, string>>;
  /** Set by `.versioned()`: its answers carry versions and its writes check `If-Match`. */
  readonly versioning: Versioning | undefined;
  /** Set by `.idempotent()`: a POST that replays its answer to a repeated `Idempotency-Key`. */
  readonly idempotent: boolean;
  readonly handler: AnyHandler;
}

/** What `.versioned()` declares. */
export interface Versioning {
  /** Takes the version from the handler's result; absent on a write that answers without one. */
  readonly read: ((result: unknown) => unknown) | undefined;
}

/** Type carriers for inference; never present at run time. */
export interface ProcedureTypes<TCtx, TClientInput, TInput, TOutput, TKind extends ProcedureKind> {
  ctx: TCtx;
  /** What a client sends (before the schema's transforms and defaults). */
  clientInput: TClientInput;
  /** What the handler receives. */
  input: TInput;
  /** What the handler returns, before serialization. */
  output: TOutput;
  kind: TKind;
}

/** A finished procedure. */
export interface Procedure<
  TCtx = unknown,
  TClientInput = unknown,
  TInput = unknown,
  TOutput = unknown,
  TKind extends ProcedureKind = ProcedureKind,
> {
  readonly '~proceed': ProcedureDefinition;
  readonly '~types'?: ProcedureTypes<TCtx, TClientInput, TInput, TOutput, TKind>;
}

// biome-ignore lint/suspicious/noExplicitAny: a procedure of any context, input and output
export type AnyProcedure = Procedure<any, any, any, any, ProcedureKind>;

type RawInput = Record<string, unknown>;

interface BuilderState {
  input: StandardSchemaV1 | undefined;
  output: OutputDeclaration | undefined;
  guards: readonly Guard<never>[];
  middlewares: readonly AnyMiddleware[];
  inputMiddlewares: readonly AnyMiddleware[];
  documentation: readonly RouteDocumentation[];
  rateLimits: readonly RateLimitRule[];
  rest: RestOverride | undefined;
  meta: ProcedureMeta;
  headers: Readonly<Record<string, string>>;
  versioning: Versioning | undefined;
  idempotent: boolean;
}

/** What a middleware receives as `input`: nothing before `.input()`, the validated input after. */
type StepInput<TInput, THasInput extends boolean> = THasInput extends true ? TInput : undefined;

type HandlerReturn<TOutput> = [TOutput] extends [typeof noOutput] ? unknown : TOutput;
declare const noOutput: unique symbol;

/** The procedure a builder finishes into: its output is the declared one, or the handler's. */
type Finished<TCtx, TClientInput, TInput, TOutput, R, K extends ProcedureKind> = Procedure<
  TCtx,
  TClientInput,
  TInput,
  [TOutput] extends [typeof noOutput] ? Awaited<R> : TOutput,
  K
>;

type Handler<TCtx, TInput, TOutput> = (options: { input: TInput; ctx: TCtx }) => MaybePromise<TOutput>;

/** The builder returned by {@link procedure}. */
export class ProcedureBuilder<
  TCtx,
  TClientInput = RawInput | undefined,
  TInput = RawInput,
  TOutput = typeof noOutput,
  THasInput extends boolean = false,
  TReturn = unknown,
> {
  readonly #state: BuilderState;

  constructor(state: BuilderState) {
    this.#state = state;
  }

  #with(change: Partial<BuilderState>) {
    return new ProcedureBuilder(Object.freeze({ ...this.#state, ...change }));
  }

  /** Validates the input with any Standard Schema validator (Zod 4 first of all). */
  input<S extends StandardSchemaV1>(
    schema: S,
  ): ProcedureBuilder<
    TCtx,
    StandardSchemaV1.InferInput<S>,
    StandardSchemaV1.InferOutput<S>,
    TOutput,
    true,
    TReturn
  > {
    return this.#with({ input: schema }) as never;
  }

  /**
   * Declares the output: a view of a resource or any schema. With a second argument the schema
   * is chosen per request from the context.
   *
   * @example
   * .output(Post.public)
   * .output({ public: Post.public, admin: Post.admin }, (ctx) => (ctx.user?.role === 'admin' ? 'admin' : 'public'))
   */
  output<S extends StandardSchemaV1>(
    schema: S,
  ): ProcedureBuilder<TCtx, TClientInput, TInput, StandardSchemaV1.InferInput<S>, THasInput, TReturn>;
  output<C extends Record<string, StandardSchemaV1>>(
    choices: C,
    select: (ctx: TCtx) => keyof C & string,
  ): ProcedureBuilder<
    TCtx,
    TClientInput,
    TInput,
    StandardSchemaV1.InferInput<C[keyof C]>,
    THasInput,
    TReturn
  >;
  output(
    schemaOrChoices: StandardSchemaV1 | Record<string, StandardSchemaV1>,
    select?: (ctx: TCtx) => string,
  ): unknown {
    if ('~standard' in schemaOrChoices) {
      return this.#with({ output: { kind: 'fixed', schema: schemaOrChoices as StandardSchemaV1 } });
    }
    if (select === undefined) throw new TypeError('.output(choices, select) needs a select function');
    const choices = schemaOrChoices as Record<string, StandardSchemaV1>;
    if (Object.keys(choices).length === 0)
      throw new TypeError('.output(choices, select) needs at least one choice');
    return this.#with({ output: { kind: 'select', choices, select: select as (ctx: never) => string } });
  }

  /** Adds guards; all must pass. */
  guard<const G extends readonly Guard<TCtx>[]>(
    ...guards: G
  ): ProcedureBuilder<AfterGuards<TCtx, G>, TClientInput, TInput, TOutput, THasInput, TReturn> {
    return this.#with({ guards: [...this.#state.guards, ...(guards as readonly Guard<never>[])] }) as never;
  }

  /**
   * Adds a middleware or a {@link step}; what it passes to `next()` joins the context. After
   * `.input()` it receives the validated input.
   */
  use<TAdd extends object = Record<never, never>>(
    middleware:
      | Middleware<TCtx, TAdd, StepInput<TInput, THasInput>>
      | Step<TCtx, TAdd, StepInput<TInput, THasInput>>,
  ): ProcedureBuilder<Omit<TCtx, keyof TAdd> & TAdd, TClientInput, TInput, TOutput, THasInput, TReturn> {
    const state = this.#state;
    const definition = typeof middleware === 'function' ? undefined : middleware['~step'];
    const run = (typeof middleware === 'function' ? middleware : definition?.run) as
      | AnyMiddleware
      | undefined;
    const change: Partial<BuilderState> = {};
    if (run !== undefined) {
      if (state.input === undefined) change.middlewares = [...state.middlewares, run];
      else change.inputMiddlewares = [...state.inputMiddlewares, run];
    }
    if (definition?.documents !== undefined)
      change.documentation = [...state.documentation, definition.documents];
    if (definition?.rateLimit !== undefined) {
      const rule = definition.rateLimit;
      if (state.rateLimits.some((each) => each.name === rule.name))
        throw new TypeError(`rate limit "${rule.name}" is used twice on one procedure`);
      change.rateLimits = [...state.rateLimits, rule];
    }
    return this.#with(change) as never;
  }

  /** Overrides the naming convention: `path` is relative to the mount prefix (`/api`). */
  rest(route: RestOverride): ProcedureBuilder<TCtx, TClientInput, TInput, TOutput, THasInput, TReturn> {
    refuseUnknownOptions('.rest()', route, restKeys);
    return this.#with({ rest: { ...route } }) as never;
  }

  /**
   * Headers for every successful answer, e.g. `{ 'cache-control': 'no-store' }` on a route that
   * answers with tokens. Names are case-insensitive; later calls add to earlier ones.
   */
  headers(
    headers: Record<string, string>,
  ): ProcedureBuilder<TCtx, TClientInput, TInput, TOutput, THasInput, TReturn> {
    const lowered = Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]),
    );
    return this.#with({ headers: { ...this.#state.headers, ...lowered } }) as never;
  }

  /**
   * The records this procedure answers with have versions (docs/http-caching.md, "If-Match").
   * `read` takes the version from the handler's result: it joins the answer's `ETag`, which
   * clients send back in `If-Match`. On a write, `ctx.precondition` holds that `If-Match`: call
   * `ctx.precondition.check(version)` with the version read before writing, and make the write
   * apply only while it is current. A write without a record to answer with (a delete) omits
   * `read`. A procedure that is not versioned answers `If-Match` other than `*` with 412.
   *
   * @example
   * const updatePost = procedure<Ctx>()
   *   .input(z.object({ id: z.uuid(), title: z.string() }))
   *   .versioned((post: PostRow) => post.version)
   *   .mutation(async ({ input, ctx }) => {
   *     const post = await ctx.db.posts.find(input.id);
   *     ctx.precondition.check(post.version);
   *     return ctx.db.posts.updateIfVersion(post.id, post.version, { title: input.title });
   *   });
   */
  versioned<R = unknown>(
    read?: (result: R) => EntityVersion,
  ): ProcedureBuilder<TCtx & { precondition: Precondition }, TClientInput, TInput, TOutput, THasInput, R> {
    if (this.#state.versioning !== undefined) throw new TypeError('.versioned() is called twice');
    if (read !== undefined && typeof read !== 'function')
      throw new TypeError('.versioned(read): read must be a function of the handler result');
    return this.#with({ versioning: { read: read as ((result: unknown) => unknown) | undefined } }) as never;
  }

  /**
   * A POST that a client may retry safely with an `Idempotency-Key` (docs/http-caching.md): the
   * same key from the same caller with the same body replays the first answer without running
   * the handler again. Needs an idempotency store on the app (`idempotencyPlugin` from
   * `proceedjs/idempotency`); `idempotencyPlugin`'s `creates: true` does this for every `create*`.
   *
   * @example
   * const createPost = procedure<Ctx>().idempotent().input(newPost).mutation(({ input, ctx }) => ctx.db.posts.insert(input));
   */
  idempotent(): ProcedureBuilder<TCtx, TClientInput, TInput, TOutput, THasInput, TReturn> {
    return this.#with({ idempotent: true }) as never;
  }

  /** Documentation for OpenAPI. */
  meta(meta: ProcedureMeta): ProcedureBuilder<TCtx, TClientInput, TInput, TOutput, THasInput, TReturn> {
    return this.#with({ meta: { ...this.#state.meta, ...meta } }) as never;
  }

  /** Finishes a read. */
  query<R extends HandlerReturn<TOutput> & TReturn>(
    handler: Handler<TCtx, TInput, R>,
  ): Finished<TCtx, TClientInput, TInput, TOutput, R, 'query'> {
    return this.#finish('query', handler as AnyHandler) as never;
  }

  /** Finishes a write. */
  mutation<R extends HandlerReturn<TOutput> & TReturn>(
    handler: Handler<TCtx, TInput, R>,
  ): Finished<TCtx, TClientInput, TInput, TOutput, R, 'mutation'> {
    return this.#finish('mutation', handler as AnyHandler) as never;
  }

  #finish(kind: ProcedureKind, handler: AnyHandler): AnyProcedure {
    if (kind === 'query' && this.#state.versioning !== undefined && this.#state.versioning.read === undefined)
      throw new TypeError('.versioned() on a query needs read: the version its answers carry');
    return Object.freeze({ '~proceed': Object.freeze({ ...this.#state, kind, handler }) });
  }
}

/**
 * Starts a procedure. The type argument is the app's context (see `createApp({ context })`).
 *
 * @example
 * const getPost = procedure<AppContext>()
 *   .input(z.object({ id: z.uuid() }))
 *   .output(Post.public)
 *   .query(({ input, ctx }) => ctx.db.posts.find(input.id));
 */
export function procedure<TCtx extends object = BaseContext>(): ProcedureBuilder<TCtx & BaseContext> {
  return new ProcedureBuilder(
    Object.freeze({
      input: undefined,
      output: undefined,
      guards: [],
      middlewares: [],
      inputMiddlewares: [],
      documentation: [],
      rateLimits: [],
      rest: undefined,
      meta: {},
      headers: {},
      versioning: undefined,
      idempotent: false,
    }),
  );
}

/** A named group of procedures; the name is the resource's path segment. */
export interface Collection<
  N extends string = string,
  R extends Record<string, AnyProcedure> = Record<string, AnyProcedure>,
> {
  readonly name: N;
  readonly procedures: R;
}

/**
 * Groups procedures under a resource name.
 *
 * @example
 * export const posts = procedures('posts', { listPosts, getPost, createPost, updatePost, deletePost });
 */
export function procedures<N extends string, R extends Record<string, AnyProcedure>>(
  name: N,
  record: R,
): Collection<N, R> {
  for (const [key, value] of Object.entries(record)) {
    if (typeof value !== 'object' || value === null || !('~proceed' in value)) {
      throw new TypeError(
        `procedures('${name}'): "${key}" is not a procedure (finish it with .query() or .mutation())`,
      );
    }
  }
  return Object.freeze({ name, procedures: record });
}
