/**
 * What plugins extend an app with (docs/plugins.md), apart from its routes: documentation of the
 * answers they add, the idempotency store, who loads `ctx.user`, context steps, and the hooks
 * of its life (ready, close, listen) and of its answers. `App` (src/server/app.ts) serves.
 */

import type { ContextPipeline, ContextResolver } from '../core/context.js';
import { idempotencyDocumentation } from '../core/documentation.js';
import { ProceedConfigError } from '../core/errors.js';
import { replaysByKey } from '../core/idempotency.js';
import { type DocumentationSource, RouteTable } from '../core/route-table.js';
import type { Answer } from '../http/observed.js';
import type { IdempotencyRuntime } from '../http/procedure-call.js';
import { runtime } from '../http/runtime.js';
import type { AppHooks } from './app-hooks.js';
import type { Listening } from './lifecycle.js';
import type { MaybePromise } from './options.js';

export class AppExtensions {
  /** Every route, mount and documented fact: what the OpenAPI generator and the CLI read. */
  readonly routeTable = new RouteTable();
  protected readonly hooks: AppHooks;
  protected readonly contextPipeline: ContextPipeline;
  protected idempotencyRuntime: IdempotencyRuntime | undefined;

  /**
   * What `Bun.serve` calls for the app's WebSockets, beside `fetch` (docs/sockets.md):
   * `Bun.serve({ fetch: app.fetch, websocket: app.websocket })`. `app.listen()` passes it itself;
   * undefined on other runtimes, whose sockets need nothing more.
   */
  get websocket(): object | undefined {
    return runtime.socketHandlers;
  }
  /** Set once every plugin is loaded: past it, nothing may be added. */
  protected loaded = false;
  #userSource: string | undefined;
  readonly #userFromContext: boolean;

  /**
   * The app is only read (routes, OpenAPI, manifest), never served (`createApp({ inspect })`):
   * a plugin resolves nothing that serving needs.
   */
  readonly inspected: boolean;

  protected constructor(
    hooks: AppHooks,
    context: ContextPipeline,
    userFromContext: boolean,
    inspected: boolean,
  ) {
    this.hooks = hooks;
    this.contextPipeline = context;
    this.#userFromContext = userFromContext;
    this.inspected = inspected;
  }

  /**
   * Adds to the documentation of procedure routes what a plugin makes them answer: for every
   * route, or, given a function, for the routes it returns documentation for.
   *
   * @example
   * app.document({ problems: ['INVALID_TOKEN'], bearer: 'optional' });
   * app.document((route) => (route.method === 'GET' ? { problems: ['UNAVAILABLE'] } : undefined));
   */
  document(source: DocumentationSource): this {
    this.routeTable.document(source);
    return this;
  }

  /**
   * Where `Idempotency-Key`s live and which POSTs replay (`idempotencyPlugin` from
   * `proceedjs/idempotency` calls it): `.idempotent()` procedures, and with `creates` every
   * `create*` one.
   */
  useIdempotency(idempotency: IdempotencyRuntime): this {
    if (this.idempotencyRuntime !== undefined)
      throw new ProceedConfigError('An idempotency store is registered twice on this app');
    this.idempotencyRuntime = idempotency;
    const documentation = idempotencyDocumentation(idempotency.settings.ttl);
    this.document((route) => (replaysByKey(route, idempotency.creates) ? documentation : undefined));
    return this;
  }

  /**
   * Says that a plugin sets `ctx.user` (the auth plugin calls it), so guards that need a user may
   * run; `source` names what loads the user in the log line of a guard that finds a field missing.
   * Without a provider (or `createApp({ userFromContext: true })`), such a guard is a start-up error.
   */
  providesUser(source: string): this {
    this.#userSource = source;
    return this;
  }

  /** What loads `ctx.user`, as `providesUser` named it; `undefined` when nothing does. */
  get userSource(): string | undefined {
    return this.#userSource ?? (this.#userFromContext ? "the app's context" : undefined);
  }

  /** Adds a step that extends every request's context, after the app's own `context`. */
  extendContext(resolver: ContextResolver): this {
    this.contextPipeline.add(resolver);
    return this;
  }

  /**
   * Runs once every plugin is loaded and every route mounted, before the app serves (the docs
   * plugin builds its document here). One that throws makes `ready`, `listen` and the first
   * `fetch` fail with its error.
   */
  onReady(task: () => MaybePromise<void>): this {
    if (this.loaded)
      throw new ProceedConfigError('app.onReady() after the app is ready: add it as plugins load');
    this.hooks.onReady(task);
    return this;
  }

  /** Runs when the app closes, last registered first (close a database pool here). */
  onClose(close: () => MaybePromise<void>): this {
    this.hooks.onClose(close);
    return this;
  }

  /**
   * Runs once the app listens, in order, told where (the metrics plugin opens its own port on
   * the same interface here). One that throws makes `listen` fail: the app closes and the error
   * is thrown from `listen`.
   */
  onListen(listener: (listening: Listening) => MaybePromise<void>): this {
    this.hooks.listeners.push(listener);
    return this;
  }

  /**
   * Tells `listener` of every answer the app sends, procedures and other routes alike, once it
   * has left: the route, the status, the problem code and how long it took. Plugins watch the app
   * here (the metrics plugin counts with it) instead of through the adapter. Nothing is timed or
   * allocated per request before the first observer; observers must be added before the app is
   * ready, as plugins are.
   */
  observe(listener: (answer: Answer) => void): this {
    if (this.loaded)
      throw new ProceedConfigError('app.observe() after the app is ready: add observers as plugins load');
    this.hooks.observe(listener);
    return this;
  }
}
