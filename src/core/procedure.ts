/**
 * The procedure builder. Builders are immutable: every method returns a new builder, so a
 * partly configured builder (say, one with an `authenticated` guard) can be shared as a base.
 */
import type { ErrorCode } from './errors.js';
import type { ProcedureKind, RestOverride } from './naming.js';
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
 * A named check on the context. A failing guard answers 401 when no user is signed in and 403
 * (naming the guard) when one is.
 */
export interface Guard<TCtx = never> {
  readonly name: string;
  /** Guards run before input validation: they see the context, never the input. */
  check(ctx: TCtx): MaybePromise<boolean>;
  /** Passes only for a signed-in caller: ctx.user becomes non-optional after it. */
  readonly requiresUser?: boolean;
}

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
export function guard<TCtx>(definition: {
  name: string;
  check: (ctx: TCtx) => MaybePromise<boolean>;
  requiresUser: true;
}): UserGuard<TCtx>;
export function guard<TCtx>(definition: {
  name: string;
  check: (ctx: TCtx) => MaybePromise<boolean>;
  requiresUser?: false;
}): Guard<TCtx>;
export function guard<TCtx>(definition: {
  name: string;
  check: (ctx: TCtx) => MaybePromise<boolean>;
  requiresUser?: boolean;
}): Guard<TCtx> {
  if (definition.name.trim() === '') throw new TypeError('A guard needs a name');
  return Object.freeze({ ...definition });
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
 * Runs around the handler (after guards, before input validation). Whatever it passes to
 * `next()` is merged into the context of everything after it.
 *
 * @example
 * const timed = procedure<Ctx>().use(async ({ ctx, next }) => {
 *   const started = performance.now();
 *   const result = await next({ startedAt: started });
 *   ctx.request; // still there
 *   return result;
 * });
 */
export type Middleware<TCtx, TAdd extends object> = (options: {
  ctx: TCtx;
  next: MiddlewareNext;
}) => Promise<MiddlewareResult<TAdd>>;

/** Documentation a procedure carries into OpenAPI. */
export interface ProcedureMeta {
  summary?: string;
  description?: string;
  deprecated?: boolean;
  /**
   * Problem codes the handler itself may answer with, beyond those Proceed derives from the
   * input, guards and route (documented in OpenAPI), e.g. `['FORBIDDEN']` for a login that
   * refuses deactivated accounts.
   */
  errors?: readonly ErrorCode[];
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
export type AnyMiddleware = Middleware<never, object>;

/** The runtime description of a procedure: plain data the server, OpenAPI and CLI read. */
export interface ProcedureDefinition {
  readonly kind: ProcedureKind;
  readonly input: StandardSchemaV1 | undefined;
  readonly output: OutputDeclaration | undefined;
  readonly guards: readonly Guard<never>[];
  readonly middlewares: readonly AnyMiddleware[];
  readonly rest: RestOverride | undefined;
  readonly meta: ProcedureMeta;
  /** Headers sent with every successful answer of this procedure. */
  readonly headers: Readonly<Record<string, string>>;
  readonly handler: AnyHandler;
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
  rest: RestOverride | undefined;
  meta: ProcedureMeta;
  headers: Readonly<Record<string, string>>;
}

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
  ): ProcedureBuilder<TCtx, StandardSchemaV1.InferInput<S>, StandardSchemaV1.InferOutput<S>, TOutput> {
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
  ): ProcedureBuilder<TCtx, TClientInput, TInput, StandardSchemaV1.InferInput<S>>;
  output<C extends Record<string, StandardSchemaV1>>(
    choices: C,
    select: (ctx: TCtx) => keyof C & string,
  ): ProcedureBuilder<TCtx, TClientInput, TInput, StandardSchemaV1.InferInput<C[keyof C]>>;
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
  ): ProcedureBuilder<AfterGuards<TCtx, G>, TClientInput, TInput, TOutput> {
    return this.#with({ guards: [...this.#state.guards, ...(guards as readonly Guard<never>[])] }) as never;
  }

  /** Adds a middleware; what it passes to `next()` joins the context. */
  use<TAdd extends object>(
    middleware: Middleware<TCtx, TAdd>,
  ): ProcedureBuilder<Omit<TCtx, keyof TAdd> & TAdd, TClientInput, TInput, TOutput> {
    return this.#with({ middlewares: [...this.#state.middlewares, middleware as AnyMiddleware] }) as never;
  }

  /** Overrides the naming convention: `path` is relative to the mount prefix (`/api`). */
  rest(route: RestOverride): ProcedureBuilder<TCtx, TClientInput, TInput, TOutput> {
    return this.#with({ rest: { ...route } }) as never;
  }

  /**
   * Headers for every successful answer, e.g. `{ 'cache-control': 'no-store' }` on a route that
   * answers with tokens. Names are case-insensitive; later calls add to earlier ones.
   */
  headers(headers: Record<string, string>): ProcedureBuilder<TCtx, TClientInput, TInput, TOutput> {
    const lowered = Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]),
    );
    return this.#with({ headers: { ...this.#state.headers, ...lowered } }) as never;
  }

  /** Documentation for OpenAPI. */
  meta(meta: ProcedureMeta): ProcedureBuilder<TCtx, TClientInput, TInput, TOutput> {
    return this.#with({ meta: { ...this.#state.meta, ...meta } }) as never;
  }

  /** Finishes a read. */
  query<R extends HandlerReturn<TOutput>>(
    handler: Handler<TCtx, TInput, R>,
  ): Finished<TCtx, TClientInput, TInput, TOutput, R, 'query'> {
    return this.#finish('query', handler as AnyHandler) as never;
  }

  /** Finishes a write. */
  mutation<R extends HandlerReturn<TOutput>>(
    handler: Handler<TCtx, TInput, R>,
  ): Finished<TCtx, TClientInput, TInput, TOutput, R, 'mutation'> {
    return this.#finish('mutation', handler as AnyHandler) as never;
  }

  #finish(kind: ProcedureKind, handler: AnyHandler): AnyProcedure {
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
      rest: undefined,
      meta: {},
      headers: {},
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
