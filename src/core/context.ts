/**
 * The per-request context pipeline, transport-neutral: the app's own `context` function, then
 * each plugin's resolver in order. Synchronous unless one of them is: no promise per request
 * otherwise. An adapter builds the {@link RequestInfo} and hands the result to `compileRoute`.
 */
import type { BaseContext, RequestInfo } from './request-context.js';

type MaybePromise<T> = T | Promise<T>;

/** A request's context while it is being built: the base plus whatever the app adds. */
export type RequestContext = BaseContext & Record<string, unknown>;

/** Adds to the context of every request; plugins use it (the auth plugin sets `user`). */
export type ContextResolver = (ctx: RequestContext) => MaybePromise<void>;

/**
 * A request's context: what the app's `context` made, then `request`. Not `{ ...made, request }`:
 * V8 makes that object slowly, and then every key a plugin adds to it (`user`, `auth`) slowly
 * too (src/core/objects.ts).
 */
function contextOf(request: RequestInfo, made: object | undefined): RequestContext {
  const ctx = { request, ...made } as RequestContext;
  // What the app's context returned never replaces the request.
  ctx.request = request;
  return ctx;
}

/** Builds each request's context. */
export class ContextPipeline {
  readonly #create: ((request: RequestInfo) => MaybePromise<object>) | undefined;
  readonly #resolvers: ContextResolver[] = [];

  constructor(create?: (request: RequestInfo) => MaybePromise<object>) {
    this.#create = create;
  }

  /** Adds a step after the app's own `context` and the steps added before it. */
  add(resolver: ContextResolver): void {
    this.#resolvers.push(resolver);
  }

  /** The context of one request. */
  build(request: RequestInfo): RequestContext | Promise<RequestContext> {
    const made = this.#create?.(request);
    if (made instanceof Promise) return made.then((value) => this.#resolve(contextOf(request, value)));
    return this.#resolve(contextOf(request, made));
  }

  #resolve(ctx: RequestContext): RequestContext | Promise<RequestContext> {
    const resolvers = this.#resolvers;
    for (let index = 0; index < resolvers.length; index++) {
      const pending = resolvers[index]?.(ctx);
      if (pending instanceof Promise) return this.#resolveFrom(ctx, pending, index + 1);
    }
    return ctx;
  }

  async #resolveFrom(ctx: RequestContext, pending: Promise<void>, next: number): Promise<RequestContext> {
    await pending;
    const resolvers = this.#resolvers;
    for (let index = next; index < resolvers.length; index++) await resolvers[index]?.(ctx);
    return ctx;
  }
}
