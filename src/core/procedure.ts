/**
 * The procedure builder (what it builds: src/core/procedure-types.ts). Builders are immutable: every method returns a new builder, so a
 * partly configured builder (say, one with an `authenticated` guard) can be shared as a base.
 */

import { type EventStreamOf, type EventStreamOutput, isEventStreamOutput } from './events.js';
import { type DownloadOutput, type FileAnswer, isDownloadOutput } from './files.js';
import type { AfterGuards, Guard } from './guards.js';
import type { InputMode, ProcedureKind, RestOverride, RestRoute, SuccessStatus } from './naming.js';
import { optionKeys, refuseUnknownOptions } from './options.js';
import type { EntityVersion, Precondition } from './precondition.js';
import type { BaseContext } from './request-context.js';
import { checkedAnswerHeader } from './response.js';
import type { SchemaInput, SchemaLike, SchemaOutput, StandardSchemaV1 } from './schema.js';
import { isSocketOutput, type SocketOf, type SocketOutput, type SocketWire } from './sockets.js';
import type { Middleware, Step } from './steps.js';
import { checkUploadOptions, type UploadOptions } from './upload-options.js';
import { uploadShapeOf } from './uploads.js';

export type {
  AnswerKind,
  AnyHandler,
  AnyMiddleware,
  AnyProcedure,
  NoContent,
  OutputDeclaration,
  OutputSelection,
  Procedure,
  ProcedureDefinition,
  ProcedureMeta,
  ProcedureTypes,
  Versioning,
} from './procedure-types.js';

import type {
  AnswerKind,
  AnyHandler,
  AnyMiddleware,
  AnyProcedure,
  BuilderState,
  ChosenReturn,
  Finished,
  Handler,
  HandlerReturn,
  McpTool,
  NoContent,
  NoOutput,
  ProcedureDefinition,
  ProcedureMeta,
  StepInput,
} from './procedure-types.js';
import { checkedInput, checkedMcpTool, checkedSchema } from './procedure-types.js';

const restKeys = optionKeys<RestOverride>()('method', 'path', 'status');

type RawInput = Record<string, unknown>;

/** The builder returned by {@link procedure}. */
export class ProcedureBuilder<
  TCtx,
  TClientInput = RawInput | undefined,
  TInput = RawInput,
  TOutput = NoOutput,
  THasInput extends boolean = false,
  TReturn = unknown,
  TStatus extends SuccessStatus = never,
  TAnswer extends AnswerKind = 'json',
> {
  readonly #state: BuilderState;

  constructor(state: BuilderState) {
    this.#state = state;
  }

  #with(change: Partial<BuilderState>) {
    return new ProcedureBuilder(Object.freeze({ ...this.#state, ...change }));
  }

  /** Validates the input with any Standard Schema validator (Zod 4 first of all). */
  input<S extends SchemaLike>(
    schema: S,
  ): ProcedureBuilder<TCtx, SchemaInput<S>, SchemaOutput<S>, TOutput, true, TReturn, TStatus, TAnswer> {
    return this.#with({ input: checkedInput(this.#state.input, schema) }) as never;
  }

  /**
   * Declares the output: a view of a resource or any schema. With a second argument the schema
   * is chosen per request from the context.
   *
   * @example
   * .output(Post.public)
   * .output({ public: Post.public, admin: Post.admin }, (ctx) => (ctx.user?.role === 'admin' ? 'admin' : 'public'))
   */
  // The schema's overload comes first: the one nearly every call takes, tried before the others.
  output<S extends SchemaLike>(
    schema: S,
  ): ProcedureBuilder<TCtx, TClientInput, TInput, SchemaInput<S>, THasInput, TReturn, TStatus, 'json'>;
  output(
    download: DownloadOutput,
  ): ProcedureBuilder<TCtx, TClientInput, TInput, FileAnswer, THasInput, TReturn, TStatus, 'file'>;
  output<S extends StandardSchemaV1>(
    events: EventStreamOutput<S>,
  ): ProcedureBuilder<
    TCtx,
    TClientInput,
    TInput,
    EventStreamOf<SchemaInput<S>>,
    THasInput,
    TReturn,
    TStatus,
    'events'
  >;
  output<In extends StandardSchemaV1, Out extends StandardSchemaV1>(
    socket: SocketOutput<In, Out>,
  ): ProcedureBuilder<
    TCtx,
    TClientInput,
    TInput,
    SocketOf<SchemaOutput<In>, SchemaInput<Out>, SocketWire<SchemaInput<In>, SchemaOutput<Out>>>,
    THasInput,
    TReturn,
    TStatus,
    'socket'
  >;
  output<C extends Record<string, SchemaLike>>(
    choices: C,
    select: (ctx: TCtx) => keyof C & string,
  ): ProcedureBuilder<
    TCtx,
    TClientInput,
    TInput,
    SchemaInput<C[keyof C]>,
    THasInput,
    TReturn,
    TStatus,
    'json'
  >;
  output(
    schemaOrChoices:
      | DownloadOutput
      | EventStreamOutput
      | SocketOutput
      | StandardSchemaV1
      | Record<string, StandardSchemaV1>,
    select?: (ctx: TCtx) => string,
  ): unknown {
    if (isDownloadOutput(schemaOrChoices))
      return this.#with({ output: { kind: 'download', types: schemaOrChoices.types } });
    if (isEventStreamOutput(schemaOrChoices)) {
      const { schema, keepAlive, credentialsCheck } = schemaOrChoices;
      return this.#with({ output: { kind: 'events', schema, keepAlive, credentialsCheck } });
    }
    if (isSocketOutput(schemaOrChoices))
      return this.#with({ output: { kind: 'socket', socket: schemaOrChoices } });
    if ('~standard' in schemaOrChoices) {
      return this.#with({ output: { kind: 'fixed', schema: checkedSchema('.output()', schemaOrChoices) } });
    }
    if (select === undefined) throw new TypeError('.output(choices, select) needs a select function');
    const choices = schemaOrChoices as Record<string, StandardSchemaV1>;
    if (Object.keys(choices).length === 0)
      throw new TypeError('.output(choices, select) needs at least one choice');
    for (const [name, choice] of Object.entries(choices)) checkedSchema(`.output() choice "${name}"`, choice);
    return this.#with({ output: { kind: 'select', choices, select: select as (ctx: never) => string } });
  }

  /** Adds guards; all must pass. */
  guard<const G extends readonly Guard<TCtx>[]>(
    ...guards: G
  ): ProcedureBuilder<
    AfterGuards<TCtx, G>,
    TClientInput,
    TInput,
    TOutput,
    THasInput,
    TReturn,
    TStatus,
    TAnswer
  > {
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
  ): ProcedureBuilder<
    Omit<TCtx, keyof TAdd> & TAdd,
    TClientInput,
    TInput,
    TOutput,
    THasInput,
    TReturn,
    TStatus,
    TAnswer
  > {
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

  /**
   * Overrides the naming convention: `path` is relative to the mount prefix (`/api`). `status`
   * sets the success status; with 204 the procedure answers no body (its client resolves to
   * `undefined`, and it declares no `.output()`). A list of statuses lets the handler choose one
   * per call with `response.status()`; the first is the default, and the typed client's result
   * is then `{ status, data }`, a union by status. `status` may be given without `method` and
   * `path`, to keep the convention's route.
   */
  rest(
    route: RestRoute & { status: 204 | readonly [204] },
  ): ProcedureBuilder<TCtx, TClientInput, TInput, NoContent, THasInput, TReturn, never, 'empty'>;
  rest<const S extends readonly [SuccessStatus, SuccessStatus, ...SuccessStatus[]]>(
    route: RestRoute & { status: S },
  ): ProcedureBuilder<TCtx, TClientInput, TInput, TOutput, THasInput, TReturn, S[number], TAnswer>;
  rest(
    route: RestRoute,
  ): ProcedureBuilder<TCtx, TClientInput, TInput, TOutput, THasInput, TReturn, never, TAnswer>;
  rest(route: RestRoute): unknown {
    refuseUnknownOptions('.rest()', route, restKeys);
    // A later call adds to an earlier one: `.rest({ method, path })` then `.rest({ status })`.
    const merged = { ...this.#state.rest, ...route } as RestOverride;
    if ((merged.method === undefined) !== (merged.path === undefined))
      throw new TypeError('.rest(): method and path come together (or neither, to keep the convention)');
    return this.#with({ rest: merged }) as never;
  }

  /**
   * Headers for every successful answer, e.g. `{ 'cache-control': 'no-store' }` on a route that
   * answers with tokens. Names are case-insensitive; later calls add to earlier ones. Those the
   * HTTP layer sets itself (`content-type`, `content-length`, `etag`, …) and values with control
   * characters are refused here.
   */
  headers(
    headers: Record<string, string>,
  ): ProcedureBuilder<TCtx, TClientInput, TInput, TOutput, THasInput, TReturn, TStatus, TAnswer> {
    // Checked as a handler's response.header() is: a fixed content-length cut every body short.
    const lowered = Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [checkedAnswerHeader('.headers()', name, value), value]),
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
  ): ProcedureBuilder<
    TCtx & { precondition: Precondition },
    TClientInput,
    TInput,
    TOutput,
    THasInput,
    R,
    TStatus,
    TAnswer
  > {
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
  idempotent(): ProcedureBuilder<TCtx, TClientInput, TInput, TOutput, THasInput, TReturn, TStatus, TAnswer> {
    return this.#with({ idempotent: true }) as never;
  }

  /**
   * Upload limits of this procedure, over the app's (`createApp({ uploads })`) and the defaults:
   * `fileSize`, `files`, `fields`, `fieldSize`, `total`, `memory`; and `checkContent`, which
   * checks each file's first bytes against its `.mime()` (docs/uploads.md). Its input must hold
   * a `z.file()`.
   *
   * @example
   * procedure().input(z.object({ photo: z.file().mime(['image/png']) })).uploads({ fileSize: 2 * 1024 * 1024, checkContent: true })
   */
  uploads(
    limits: UploadOptions,
  ): ProcedureBuilder<TCtx, TClientInput, TInput, TOutput, THasInput, TReturn, TStatus, TAnswer> {
    const checked = checkUploadOptions('.uploads()', limits);
    return this.#with({ uploads: { ...this.#state.uploads, ...checked } }) as never;
  }

  /** Documentation for OpenAPI. */
  meta(
    meta: ProcedureMeta,
  ): ProcedureBuilder<TCtx, TClientInput, TInput, TOutput, THasInput, TReturn, TStatus, TAnswer> {
    return this.#with({ meta: { ...this.#state.meta, ...meta } }) as never;
  }

  /** Makes the procedure a tool of the app's MCP endpoint (`mcpPlugin`, docs/mcp.md): same guards, views, limits. */
  mcp(tool: McpTool = {}): this {
    return this.#with({ mcp: Object.freeze({ ...checkedMcpTool(tool) }) }) as never;
  }

  /** Finishes a read. */
  query<R extends ChosenReturn<HandlerReturn<TOutput>, TStatus> & TReturn>(
    handler: Handler<TCtx, TInput, R, TStatus, TOutput, TAnswer>,
  ): Finished<TCtx, TClientInput, TInput, TOutput, R, 'query', TStatus, TAnswer> {
    return this.#finish('query', handler as unknown as AnyHandler) as never;
  }

  /** Finishes a write. */
  mutation<R extends ChosenReturn<HandlerReturn<TOutput>, TStatus> & TReturn>(
    handler: Handler<TCtx, TInput, R, TStatus, TOutput, TAnswer>,
  ): Finished<TCtx, TClientInput, TInput, TOutput, R, 'mutation', TStatus, TAnswer> {
    return this.#finish('mutation', handler as unknown as AnyHandler) as never;
  }

  #finish(kind: ProcedureKind, handler: AnyHandler): AnyProcedure {
    if (kind === 'query' && this.#state.versioning !== undefined && this.#state.versioning.read === undefined)
      throw new TypeError('.versioned() on a query needs read: the version its answers carry');
    const definition: ProcedureDefinition = Object.freeze({
      ...this.#state,
      kind,
      handler,
      uploadMode: (inputMode: InputMode) => uploadShapeOf(definition, inputMode)?.mode,
    });
    return Object.freeze({ '~proceed': definition });
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
      uploads: undefined,
      mcp: undefined,
    }),
  );
}

export { type Collection, procedures } from './collection.js';
