/**
 * Runs one call of a procedure, transport-neutral: guards, middlewares, input assembly,
 * coercion, validation, the handler and serialization. Adapters only translate requests in and
 * replies out.
 */
import { type Coercer, createBodyDateCoercer, createCoercer } from './coerce.js';
import { ProceedError, UnauthenticatedError, ValidationError } from './errors.js';
import { type EventsAnswer, ServerEvent } from './events.js';
import { FileAnswer } from './files.js';
import { canForbid, type Guard, MissingUserFieldError, missingUserField } from './guards.js';
import { fillPath } from './naming.js';
import { refuseNul } from './nul.js';
import { assignOwn } from './objects.js';
import { compileSerializer, OutputMismatchError, type Serializer } from './output.js';
import {
  parseIfMatch,
  preconditionOf,
  RequestPrecondition,
  unversionedRoute,
  versionOf,
} from './precondition.js';
import type { AnyMiddleware } from './procedure.js';
import type { BaseContext } from './request-context.js';
import { ResponseControl } from './response.js';
import type { RouteEntry } from './routes.js';
import { type Validation, validate } from './schema.js';
import type { MiddlewareResult } from './steps.js';
import { isThenable } from './thenable.js';
import type { StepTracer } from './tracing.js';
import { checksNothing, keyShapeOf, refuseUnknownKeys, shapeAt } from './unknown-keys.js';
import { DeferredBody } from './uploads.js';

/** One request, as the adapter hands it over. */
export interface Call {
  ctx: BaseContext & { user?: unknown };
  params: Record<string, string>;
  query: Record<string, unknown> | undefined;
  body: unknown;
  /** The `If-Match` header, as sent. */
  ifMatch?: string | undefined;
  /** Times each step in a span of its own; set by the adapter only for a request being traced. */
  trace?: StepTracer | undefined;
}

/** What the adapter writes back. `body` is JSON text. */
export interface Reply {
  status: number;
  body: string;
  location: string | undefined;
  /** The version of the record answered with, for its `ETag` (`.versioned(read)`). */
  version: string | undefined;
  /** What the handler set with `response.header()` / `response.cookie()`; absent when nothing. */
  response?: ResponseControl<never>;
  /** A file to send instead of `body`, for a procedure declared with `.output(download())`. */
  file?: FileAnswer;
  /** Events to stream instead of `body`, for a procedure declared with `.output(eventStream())`. */
  events?: EventsAnswer;
}

/**
 * One compiled call. Synchronous when every step is (a handler that answers from memory), so
 * that no promise is made where nothing waits; it never throws, a failure is a rejected promise.
 */
export type Invoke = (call: Call) => Reply | Promise<Reply>;

const deleteSuccess = '{"success":true}';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An update's input: its path parameters and, under `data`, its body. */
function withData(params: unknown, body: unknown): Record<string, unknown> {
  const input: Record<string, unknown> = assignOwn({}, params as object);
  input.data = body;
  return input;
}

/**
 * Assembles a call's input from its query string or JSON body and its path parameters. A key the
 * input does not name is refused here, before anything runs, rather than dropped by the validator:
 * a misspelt key (`?tags=` for `?tag=`, `is_private` for `isPrivate`) would otherwise change
 * what the request means (docs/procedures.md, "Keys the input does not name"). Path parameters
 * join the input and are never unknown; an update's body is checked where it sits, under `data`.
 */
function assembler(
  route: RouteEntry,
  coerce: Coercer,
  reviveDates: (value: unknown) => unknown,
): (call: Call, body: unknown) => unknown {
  const { inputMode, params: exempt } = route;
  const shape = keyShapeOf(route.definition.input);
  const unchecked = checksNothing(shape);
  if (inputMode === 'query') {
    const query = { noun: 'query parameter', exempt };
    return (call) => {
      const input = coerce(assignOwn(assignOwn({}, call.query), call.params));
      if (!unchecked) refuseUnknownKeys(input, shape, query);
      return input;
    };
  }
  const data = shapeAt(shape, 'data');
  const update = { noun: 'key', path: 'data' };
  const body = { noun: 'key', exempt };
  return (call, sent) => {
    const params = coerce({ ...call.params });
    if (inputMode === 'update') {
      refuseUnknownKeys(sent, data, update);
      return reviveDates(withData(params, sent));
    }
    if (sent === undefined || sent === null) return params;
    if (!isPlainObject(sent)) {
      throw new ValidationError([{ path: '', message: 'The request body must be a JSON object' }]);
    }
    if (!unchecked) refuseUnknownKeys(sent, shape, body);
    return reviveDates(assignOwn(assignOwn({}, sent), params));
  };
}

/** How a route is compiled beside its definition: what the app knows. */
export interface CompileOptions {
  /** What loads `ctx.user` (`authPlugin's userLoader (findUser)`), for the log of a guard that finds a field missing. */
  userSource?: () => string | undefined;
}

/**
 * A guard declared the user fields it reads; a user without one is the loader's mistake, not the
 * caller's: an internal error (500) whose message, in the log, says which guard, field and loader.
 */
function loaderMistake(error: MissingUserFieldError, owner: string, options: CompileOptions): Error {
  const source = options.userSource?.() ?? "the app's context";
  return new Error(
    `Guard "${error.guard}" of ${owner} reads user.${error.field}, but the user from ${source} has no "${error.field}": return it from the loader (docs/auth.md, "What guards need from the app")`,
  );
}

/**
 * Runs the guards in order: synchronously while they answer synchronously, so that a route
 * whose guards read only the context makes no promise; from the first pending one on, in turn.
 */
function runGuards(
  guards: readonly Guard<never>[],
  ctx: Call['ctx'],
  owner: string,
  options: CompileOptions,
  tracer: StepTracer | undefined,
  from = 0,
): void | Promise<void> {
  try {
    for (let index = from; index < guards.length; index++) {
      const guard = guards[index] as Guard<never>;
      const signedIn = ctx.user !== undefined && ctx.user !== null;
      if (guard.requiresUser === true && !signedIn) throw new UnauthenticatedError();
      const missing = signedIn ? missingUserField(guard, ctx.user) : undefined;
      if (missing !== undefined) throw new MissingUserFieldError(guard.name, missing);
      const checked =
        tracer === undefined
          ? guard.check(ctx as never)
          : tracer.step('guard', guard.name, () => guard.check(ctx as never));
      // Any thenable is awaited, a native promise or not: a check still pending is no pass.
      if (isThenable(checked))
        return Promise.resolve(checked).then((allowed) => {
          refuseUnless(allowed, guard, signedIn);
          return runGuards(guards, ctx, owner, options, tracer, index + 1);
        }, rethrow);
      refuseUnless(checked, guard, signedIn);
    }
  } catch (error) {
    rethrow(error);
  }
  function rethrow(error: unknown): never {
    throw error instanceof MissingUserFieldError ? loaderMistake(error, owner, options) : error;
  }
}

/** Only `true` passes: anything else a check returns, by mistake or not, refuses. */
function refuseUnless(allowed: unknown, guard: Guard<never>, signedIn: boolean): void {
  if (allowed === true) return;
  if (!signedIn || !canForbid(guard)) throw new UnauthenticatedError();
  throw new ProceedError('FORBIDDEN', `Guard "${guard.name}" denied access`);
}

type Step<T> = (call: Call, input: T) => Reply | Promise<Reply>;

/**
 * A validated input, boxed: an input may itself be anything, a promise-like value included, and
 * must not be mistaken for a validation still under way.
 */
class Checked {
  constructor(readonly value: unknown) {}
}
const boxed = (_call: Call, value: unknown) => new Checked(value);

/**
 * Composes the middlewares once; each call then walks the chain with its own context. Every
 * middleware receives `input` (undefined before validation) and hands it on unchanged.
 */
function chain<T>(
  middlewares: readonly AnyMiddleware[],
  last: Step<T>,
): (call: Call, input: T) => Promise<Reply> {
  const dispatch = async (index: number, call: Call, input: T): Promise<Reply> => {
    const middleware = middlewares[index];
    if (middleware === undefined) return last(call, input);
    const { ctx } = call;
    let reply: Reply | undefined;
    let called = false;
    const result = await middleware({
      ctx: ctx as never,
      input: input as never,
      next: async (addition?: object): Promise<MiddlewareResult<never>> => {
        // A second call would run the rest of the chain, the handler included, once more.
        if (called) throw new Error('A middleware of this route called next() more than once');
        called = true;
        if (addition !== undefined) Object.assign(ctx, addition);
        reply = await dispatch(index + 1, call, input);
        return { output: reply };
      },
    });
    if (reply === undefined || result?.output !== reply)
      throw new Error(`A middleware of this route did not return what next() returned`);
    return reply;
  };
  return (call, input) => dispatch(0, call, input);
}

/** Carries what the handler set onto its reply, when it set anything. */
function withResponse(
  reply: Reply | Promise<Reply>,
  response: ResponseControl<never>,
): Reply | Promise<Reply> {
  if (response.headers === undefined && response.cookies === undefined) return reply;
  if (reply instanceof Promise)
    return reply.then((settled) => {
      settled.response = response;
      return settled;
    });
  reply.response = response;
  return reply;
}

/**
 * What a JSON answer cannot carry, named for the log, or undefined for plain data. Serialized,
 * a Buffer would leave as `{"type":"Buffer","data":[…]}`, a stream as its internals and a
 * generator as `{}`: a 500 that names the procedure is the honest answer (docs/procedures.md,
 * "What a handler returns").
 */
export function unsendableKind(value: unknown): string | undefined {
  if (typeof value === 'function') return 'a function';
  if (typeof value !== 'object' || value === null) return undefined;
  const prototype = Object.getPrototypeOf(value);
  if (prototype === Object.prototype || prototype === null || Array.isArray(value)) return undefined;
  if (value instanceof FileAnswer) return 'a file answer (sendFile) without .output(download())';
  if (value instanceof ServerEvent) return 'a server event (serverEvent) without .output(eventStream())';
  if (ArrayBuffer.isView(value)) return `bytes (${value.constructor.name})`;
  if (value instanceof ArrayBuffer) return 'bytes (ArrayBuffer)';
  if (typeof Blob === 'function' && value instanceof Blob) return 'a Blob';
  if (typeof ReadableStream === 'function' && value instanceof ReadableStream) return 'a ReadableStream';
  const object = value as { pipe?: unknown; on?: unknown; next?: unknown; [Symbol.asyncIterator]?: unknown };
  if (typeof object.pipe === 'function' && typeof object.on === 'function') return 'a Node.js stream';
  if (typeof object[Symbol.asyncIterator] === 'function') return 'an async iterable (an async generator?)';
  if (
    typeof object.next === 'function' &&
    typeof (value as Iterable<unknown>)[Symbol.iterator] === 'function'
  )
    return 'an iterator (a generator?)';
  return undefined;
}

/** Compiles a route once: coercer, validator and serializers are built here, not per request. */
export function compileRoute(route: RouteEntry, options: CompileOptions = {}): Invoke {
  const { definition, inputMode } = route;
  const { input: inputSchema, output, handler, guards, middlewares, inputMiddlewares } = definition;
  const coerce = createCoercer(inputSchema);
  const reviveDates = createBodyDateCoercer(inputSchema);
  const isDelete = route.convention?.prefix === 'delete';
  const isCreate = route.convention?.prefix === 'create';
  const owner = `${route.collection}.${route.name}`;
  const { versioning } = definition;
  const readVersion = versioning?.read;
  const isWrite = route.method !== 'GET';

  let serialize: (value: unknown, ctx: Call['ctx']) => string | Promise<string>;
  const events = output?.kind === 'events' ? output : undefined;
  const writeEvent = events === undefined ? undefined : compileSerializer(events.schema);
  if (output?.kind === 'download' || output?.kind === 'events') {
    serialize = () => '';
  } else if (output === undefined) {
    serialize = isDelete
      ? (value) => (value === undefined ? deleteSuccess : JSON.stringify(value))
      : (value) => JSON.stringify(value ?? null);
  } else if (output.kind === 'fixed') {
    const serializer = compileSerializer(output.schema);
    serialize = (value, ctx) => serializer(value, ctx);
  } else {
    const serializers = new Map<string, Serializer>(
      Object.entries(output.choices).map(([key, schema]) => [key, compileSerializer(schema)]),
    );
    serialize = (value, ctx) => {
      const key = output.select(ctx as never);
      const serializer = serializers.get(key);
      if (serializer === undefined)
        throw new Error(`${route.collection}.${route.name}: output choice "${key}" does not exist`);
      return serializer(value, ctx);
    };
  }

  const assemble = assembler(route, coerce, reviveDates);
  // An upload's fields arrive as text, like a query string's, and are coerced the same way; its
  // files pass as they are. A raw body is the file itself (docs/uploads.md).
  const assembleUpload = (call: Call, body: unknown): unknown => {
    if (body instanceof Blob)
      return inputMode === 'update' ? withData(coerce({ ...call.params }), body) : body;
    return coerce(assignOwn(assignOwn({}, body as Record<string, unknown>), call.params));
  };

  const recordsUnderParams = route.recordsPath !== route.collectionPath;
  const locationOf = (result: unknown, params: Record<string, string>): string | undefined => {
    if (!isCreate || !isPlainObject(result)) return undefined;
    const id = result.id;
    if (typeof id !== 'string' && typeof id !== 'number') return undefined;
    const records = recordsUnderParams ? fillPath(route.recordsPath, params) : route.collectionPath;
    return `${records}/${encodeURIComponent(String(id))}`;
  };

  // The handler's step, synchronous unless the handler or serializer is not: each avoided
  // promise is a microtask less per request (docs/architecture.md, "A request").
  const { successStatuses } = route;
  const answer = (call: Call, result: unknown, response: ResponseControl<never>): Reply | Promise<Reply> => {
    const { precondition } = call.ctx as { precondition?: unknown };
    if (precondition instanceof RequestPrecondition && !precondition.checked)
      throw new Error(
        `${owner}: a .versioned() write must call ctx.precondition.check(version) before it writes; this call was sent If-Match and never checked it (docs/http-caching.md)`,
      );
    const status = response.chosenStatus ?? route.successStatus;
    // 204 has no body: whatever the handler returned stays on the server (docs/procedures.md).
    if (status === 204) return { status: 204, body: '', location: undefined, version: undefined };
    if (output?.kind === 'download') {
      if (!(result instanceof FileAnswer))
        throw new OutputMismatchError(
          `${owner} is declared .output(download()) and returned ${unsendableKind(result) ?? (typeof result === 'object' && result !== null ? 'plain data' : String(result))}: return sendFile(…) or fileAt(…) (docs/files.md)`,
        );
      return { status, body: '', location: undefined, version: undefined, file: result };
    }
    const unsendable = unsendableKind(result);
    if (unsendable !== undefined)
      throw new OutputMismatchError(
        `${owner} returned ${unsendable}, which a JSON answer cannot carry: return plain data (docs/procedures.md, "What a handler returns")`,
      );
    const version = readVersion === undefined ? undefined : versionOf(readVersion(result), owner);
    const location = status === 201 ? locationOf(result, call.params) : undefined;
    const body =
      call.trace === undefined
        ? serialize(result, call.ctx)
        : call.trace.step('serialization', owner, () => serialize(result, call.ctx));
    if (body instanceof Promise) return body.then((text) => ({ status, body: text, location, version }));
    return { status, body, location, version };
  };
  const run = (call: Call, input: unknown): Reply | Promise<Reply> => {
    const response = new ResponseControl<never>(successStatuses);
    if (events !== undefined && writeEvent !== undefined) {
      const controller = new AbortController();
      const lastEventId = (call.ctx as { request?: { headers?: Record<string, unknown> } }).request
        ?.headers?.['last-event-id'];
      const options = {
        input: input as never,
        ctx: call.ctx as never,
        response,
        ...({
          lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined,
          signal: controller.signal,
        } as object),
      } as never;
      const { trace } = call;
      const source =
        trace === undefined
          ? handler(options)
          : trace.stream('handler', owner, () => handler(options), controller.signal);
      if (typeof (source as AsyncIterable<unknown> | null)?.[Symbol.asyncIterator] !== 'function') {
        controller.abort();
        throw new OutputMismatchError(
          `${owner} is declared .output(eventStream()) and returned ${unsendableKind(source) ?? String(source)}: make the handler an async function* that yields its events (docs/events.md)`,
        );
      }
      const answer: EventsAnswer = {
        source: source as AsyncIterable<unknown>,
        serialize:
          trace === undefined
            ? (value: unknown) => writeEvent(value, call.ctx)
            : (value: unknown) => trace.step('event', owner, () => writeEvent(value, call.ctx)),
        keepAlive: events.keepAlive,
        signal: controller.signal,
        abort: () => controller.abort(),
      };
      return withResponse(
        { status: 200, body: '', location: undefined, version: undefined, events: answer },
        response,
      );
    }
    const result =
      call.trace === undefined
        ? handler({ input: input as never, ctx: call.ctx as never, response })
        : call.trace.step('handler', owner, () =>
            handler({ input: input as never, ctx: call.ctx as never, response }),
          );
    return result instanceof Promise
      ? result.then((value) => withResponse(answer(call, value, response), response))
      : withResponse(answer(call, result, response), response);
  };
  // A write that keeps no versions cannot honour If-Match: refused before the handler runs,
  // after the guards, the input and the steps had their say (a 401 or 404 comes first).
  const handle: Step<unknown> =
    versioning !== undefined || !isWrite
      ? run
      : (call, input) => {
          if (call.ifMatch !== undefined && parseIfMatch(call.ifMatch) !== '*') throw unversionedRoute();
          return run(call, input);
        };
  const afterInput = inputMiddlewares.length === 0 ? handle : chain<unknown>(inputMiddlewares, handle);

  const checkedInput = (result: Validation<unknown>): unknown => {
    if (!result.ok) throw new ValidationError(result.errors);
    return result.value;
  };
  /**
   * Assembles and validates the input, then hands it to `then`; synchronous unless reading the
   * body or validating waits. `then` takes the call rather than closing over it: no function is
   * made per request.
   */
  const checkInput = <R>(
    call: Call,
    input: unknown,
    then: (call: Call, value: unknown) => R,
  ): R | Promise<R> => {
    refuseNul(input);
    if (inputSchema === undefined) return then(call, input);
    const pending = validate(inputSchema, input);
    if (pending instanceof Promise) return pending.then((result) => then(call, checkedInput(result)));
    return then(call, checkedInput(pending));
  };
  const readInput = <R>(call: Call, then: (call: Call, value: unknown) => R): R | Promise<R> => {
    const { body } = call;
    if (body instanceof DeferredBody)
      return body.read().then((read) => checkInput(call, assembleUpload(call, read), then));
    return checkInput(call, assemble(call, body), then);
  };
  const validated = (call: Call): Reply | Promise<Reply> => {
    const { trace } = call;
    if (trace === undefined) return readInput(call, afterInput) as Reply | Promise<Reply>;
    // Traced, the validation's span ends before the handler's begins.
    const input = trace.step('validation', owner, () => readInput(call, boxed));
    if (input instanceof Checked) return afterInput(call, input.value);
    return input.then((checked) => afterInput(call, checked.value));
  };
  let execute: (call: Call) => Reply | Promise<Reply> = validated;
  if (middlewares.length > 0) {
    const chained = chain(middlewares, validated);
    execute = (call) => chained(call, undefined);
  }
  let guarded = execute;
  if (guards.length > 0) {
    guarded = (call) => {
      const passing = runGuards(guards, call.ctx, owner, options, call.trace);
      return passing instanceof Promise ? passing.then(() => execute(call)) : execute(call);
    };
  }
  let invoke = guarded;
  if (versioning !== undefined) {
    // A read's If-Match is the adapter's to compare with the tag it computes.
    invoke = (call) => {
      (call.ctx as { precondition?: unknown }).precondition = preconditionOf(
        isWrite ? call.ifMatch : undefined,
        owner,
      );
      return guarded(call);
    };
  }
  return (call) => {
    try {
      return invoke(call);
    } catch (error) {
      return Promise.reject(error);
    }
  };
}
