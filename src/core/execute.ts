/**
 * Runs one call of a procedure, transport-neutral: guards, middlewares, input assembly,
 * coercion, validation, the handler and serialization. Adapters only translate requests in and
 * replies out.
 */
import type { Call, CompileOptions, Invoke, KeyedLimiter, Reply } from './call.js';
import { ProceedError } from './errors.js';
import { inputReader } from './input-assembly.js';
import { parseIfMatch, preconditionOf, unversionedRoute } from './precondition.js';
import type { AnyMiddleware } from './procedure.js';
import { eventStreamer, replyMaker } from './reply.js';
import { ResponseControl } from './response.js';
import type { RouteEntry } from './routes.js';
import { runGuards } from './run-guards.js';
import { socketer } from './socket-reply.js';
import type { MiddlewareResult } from './steps.js';

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

/**
 * Counts the call against the route's keyed limits before what follows the input runs. A rule
 * that counts failures gets its count back unless the call failed by the caller's doing (a 4xx):
 * a success, or the server's own failure (an outage's 503, a 500), is no wrong password.
 */
function limitedBy(limiter: KeyedLimiter, next: Step<unknown>): Step<unknown> {
  return async (call, input) => {
    const giveBack = await limiter.count(call.ctx, input);
    if (giveBack === undefined) return next(call, input);
    let reply: Reply;
    try {
      reply = await next(call, input);
    } catch (error) {
      if (!(error instanceof ProceedError) || error.status >= 500) giveBack();
      throw error;
    }
    giveBack();
    return reply;
  };
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

/** Compiles a route once: coercer, validator and serializers are built here, not per request. */
export function compileRoute(route: RouteEntry, options: CompileOptions = {}): Invoke {
  const { definition } = route;
  const { handler, guards, middlewares, inputMiddlewares } = definition;
  const owner = `${route.collection}.${route.name}`;
  const { versioning } = definition;
  const isWrite = route.method !== 'GET';

  // The handler's step, synchronous unless the handler or serializer is not: each avoided
  // promise is a microtask less per request (docs/architecture.md, "A request").
  const answer = replyMaker(route);
  const streams = eventStreamer(route, options) ?? socketer(route, options);
  const { successStatuses } = route;
  const run = (call: Call, input: unknown): Reply | Promise<Reply> => {
    const response = new ResponseControl<never>(successStatuses);
    if (streams !== undefined) return withResponse(streams(call, input, response), response);
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
  const middlewaresThenHandler =
    inputMiddlewares.length === 0 ? handle : chain<unknown>(inputMiddlewares, handle);
  const afterInput =
    options.keyedLimiter === undefined
      ? middlewaresThenHandler
      : limitedBy(options.keyedLimiter, middlewaresThenHandler);

  const readInput = inputReader(route);
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
