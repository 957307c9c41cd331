/**
 * What a procedure is, once built (docs/procedures.md): its definition as the core, the adapters
 * and the generator read it, and the types the typed client and the guards infer from.
 * src/core/procedure.ts builds them.
 */
import { type ProblemCode, ProceedConfigError } from './errors.js';
import type { EventStreamOptions } from './events.js';
import type { Guard } from './guards.js';
import type { InputMode, ProcedureKind, RestOverride, SuccessStatus } from './naming.js';
import { optionKeys, refuseUnknownOptions } from './options.js';
import type { ResponseControl } from './response.js';
import type { StandardSchemaV1 } from './schema.js';
import type { SocketHandlerOptions, SocketInOf, SocketOutOf, SocketOutput } from './sockets.js';
import type { Middleware, RateLimitRule, RouteDocumentation } from './steps.js';
import type { UploadOptions } from './upload-options.js';

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
  | ({ kind: 'select' } & OutputSelection)
  /** A file: the handler returns a {@link FileAnswer} (docs/files.md). */
  | { kind: 'download'; types: readonly string[] }
  /** Server-sent events: the handler yields them (docs/events.md). */
  | { kind: 'events'; schema: StandardSchemaV1; keepAlive: number; credentialsCheck: number }
  /** A WebSocket: the handler takes the client's messages and sends its own (docs/sockets.md). */
  | { kind: 'socket'; socket: SocketOutput };

export type AnyHandler = (options: { input: never; ctx: never; response: ResponseControl<never> }) => unknown;
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
  /** The procedure's own upload limits (`.uploads()`), over the app's. */
  readonly uploads: UploadOptions | undefined;
  /** Set by `.mcp()`: the procedure is a tool of the app's MCP endpoint (docs/mcp.md). */
  readonly mcp: McpTool | undefined;
  readonly handler: AnyHandler;
  /**
   * How the procedure takes files on a route of this input mode, if it does: read from its input
   * when asked (the client's route manifest asks it, without loading the schema code itself).
   */
  readonly uploadMode: (inputMode: InputMode) => 'form' | 'raw' | undefined;
}

/** How a procedure shows as an MCP tool; its name is the procedure's (docs/mcp.md). */
export interface McpTool {
  /** A human-readable name for the tool; the procedure's summary when unset. */
  readonly title?: string;
  /** What the tool does, for the model; the procedure's description or summary when unset. */
  readonly description?: string;
  /**
   * Whether a call may destroy or overwrite what is there, which clients may ask the user to
   * confirm. Unset: true for a write that is not a create (`create*` adds; an update, a delete or
   * another action may not), false for a read.
   */
  readonly destructive?: boolean;
}

const mcpToolKeys = optionKeys<McpTool>()('title', 'description', 'destructive');
const mcpToolTexts = ['title', 'description'] as const;

/** `.mcp()`'s options, checked: a tool is named after its procedure (`{ name }` was kept and ignored). */
export function checkedMcpTool(tool: McpTool): McpTool {
  refuseUnknownOptions('.mcp()', tool, mcpToolKeys);
  for (const key of mcpToolTexts)
    if (tool[key] !== undefined && typeof tool[key] !== 'string')
      throw new ProceedConfigError(`.mcp(): ${key} is text, not ${JSON.stringify(tool[key])}`);
  if (tool.destructive !== undefined && typeof tool.destructive !== 'boolean')
    throw new ProceedConfigError(
      `.mcp(): destructive is true or false, not ${JSON.stringify(tool.destructive)}`,
    );
  return tool;
}

/** What a builder holds: a procedure's definition before its handler. */
export type BuilderState = {
  -readonly [K in Exclude<
    keyof ProcedureDefinition,
    'kind' | 'handler' | 'uploadMode'
  >]: ProcedureDefinition[K];
};

/** What `.versioned()` declares. */
export interface Versioning {
  /** Takes the version from the handler's result; absent on a write that answers without one. */
  readonly read: ((result: unknown) => unknown) | undefined;
}

/**
 * How a procedure's answer reaches its client, as its `.output()` declared it: JSON (a schema, a
 * view, or the handler's own type), a file, event frames, a WebSocket, or no body (204). The
 * builder records it beside the output type, so that the handler's options and the typed client
 * read one literal instead of testing the output's shape against each kind, which the checker
 * pays for on every procedure (docs/performance.md, "The type checker").
 */
export type AnswerKind = 'json' | 'file' | 'events' | 'socket' | 'empty';

/** Type carriers for inference; never present at run time. */
export interface ProcedureTypes<
  TCtx,
  TClientInput,
  TInput,
  TOutput,
  TKind extends ProcedureKind,
  TStatus extends SuccessStatus = never,
  TAnswer extends AnswerKind = 'json',
> {
  ctx: TCtx;
  /** What a client sends (before the schema's transforms and defaults). */
  clientInput: TClientInput;
  /** What the handler receives. */
  input: TInput;
  /** What the handler returns, before serialization. */
  output: TOutput;
  kind: TKind;
  /** The statuses a handler chooses among with `response.status()`; never when it has one. */
  statuses: TStatus;
  /** How the answer reaches the client. */
  answer: TAnswer;
}

/** A finished procedure. */
export interface Procedure<
  TCtx = unknown,
  TClientInput = unknown,
  TInput = unknown,
  TOutput = unknown,
  TKind extends ProcedureKind = ProcedureKind,
  TStatus extends SuccessStatus = never,
  TAnswer extends AnswerKind = 'json',
> {
  readonly '~proceed': ProcedureDefinition;
  readonly '~types'?: ProcedureTypes<TCtx, TClientInput, TInput, TOutput, TKind, TStatus, TAnswer>;
}

// biome-ignore lint/suspicious/noExplicitAny: a procedure of any context, input and output
export type AnyProcedure = Procedure<any, any, any, any, ProcedureKind, any, any>;

type MaybePromise<T> = T | Promise<T>;

/** What a middleware receives as `input`: nothing before `.input()`, the validated input after. */
export type StepInput<TInput, THasInput extends boolean> = THasInput extends true ? TInput : undefined;

export type HandlerReturn<TOutput> = [TOutput] extends [NoOutput]
  ? unknown
  : [TOutput] extends [NoContent]
    ? unknown
    : TOutput;
/** A handler that may answer 204 may return nothing: the body stays on the server anyway. */
export type ChosenReturn<R, TStatus> = 204 extends TStatus ? R | undefined : R;
declare const noOutput: unique symbol;
/** A builder's output before `.output()`: the handler's return type decides it. */
export type NoOutput = typeof noOutput;
declare const noContent: unique symbol;
/** The output of a procedure that answers 204 No Content: nothing reaches the client. */
export type NoContent = typeof noContent;

/** The procedure a builder finishes into: its output is the declared one, or the handler's. */
export type Finished<
  TCtx,
  TClientInput,
  TInput,
  TOutput,
  R,
  K extends ProcedureKind,
  TStatus extends SuccessStatus,
  TAnswer extends AnswerKind,
> = Procedure<
  TCtx,
  TClientInput,
  TInput,
  [TOutput] extends [NoOutput] ? Awaited<R> : TOutput,
  K,
  TStatus,
  TAnswer
>;

/** What every handler receives: its validated input, the request's context and its say over the answer's headers and cookies. */
interface HandlerOptions<TCtx, TInput, TStatus extends SuccessStatus> {
  input: TInput;
  ctx: TCtx;
  response: ResponseControl<TStatus>;
}

/** A handler: an event stream's and a socket's receive more than the others (by its {@link AnswerKind}). */
export type Handler<
  TCtx,
  TInput,
  TOutput,
  TStatus extends SuccessStatus,
  TDeclared = unknown,
  TAnswer extends AnswerKind = 'json',
> = (
  options: TAnswer extends 'events'
    ? HandlerOptions<TCtx, TInput, TStatus> & EventStreamOptions
    : TAnswer extends 'socket'
      ? HandlerOptions<TCtx, TInput, TStatus> &
          SocketHandlerOptions<SocketInOf<TDeclared>, SocketOutOf<TDeclared>>
      : HandlerOptions<TCtx, TInput, TStatus>,
) => MaybePromise<TOutput>;

/**
 * A schema as the builder takes it: the types ask only for the Standard Schema mark (see
 * `SchemaLike`), so that what validates is checked here, once, when the procedure is built.
 */
export function checkedSchema(where: string, schema: unknown): StandardSchemaV1 {
  const standard = (schema as { '~standard'?: { validate?: unknown } } | null)?.['~standard'];
  if (typeof standard?.validate !== 'function')
    throw new TypeError(
      `${where} takes a Standard Schema (a Zod, Valibot or ArkType schema): this one cannot validate`,
    );
  return schema as StandardSchemaV1;
}

/** `.input()`'s schema: one per procedure (a second replaced the first, silently; tRPC merges them). */
export function checkedInput(previous: StandardSchemaV1 | undefined, schema: unknown): StandardSchemaV1 {
  if (previous !== undefined)
    throw new ProceedConfigError(
      ".input() is called once per procedure: a second call would replace the first schema; give one schema with every field (a Zod object's .extend())",
    );
  return checkedSchema('.input()', schema);
}
