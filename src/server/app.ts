/**
 * The app (docs/architecture.md): the route table, settings resolved once, the lifecycle, the
 * observers and the plugins' hooks, the same on every runtime, every request answered by one
 * pipeline (src/http/fetch.ts) under each adapter (`createApp`: src/server/create-app*.ts).
 */

import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { type Logger, pino } from 'pino';
import { ContextPipeline } from '../core/context.js';
import { entityTagDocumentation } from '../core/documentation.js';
import { ProceedConfigError } from '../core/errors.js';
import { normalizePrefix } from '../core/naming.js';
import type { Collection } from '../core/procedure.js';
import type { RequestInfo } from '../core/request-context.js';
import type { Mount, MountedRoute } from '../core/route-table.js';
import { uploadPlanOf } from '../core/uploads.js';
import {
  type AppRoute,
  type AppRouteMethod,
  type AppRouteOptions,
  appRoute,
  type RouteHandler,
} from '../http/app-routes.js';
import { type AppPipeline, createPipeline } from '../http/fetch.js';
import { healthRoutes } from '../http/health.js';
import { logOfRequest, type ProblemAnswer, problemAnswer } from '../http/problems.js';
import { RateLimits } from '../http/rate-limit.js';
import { Spools } from '../http/spool.js';
import { type OperationTrace, type TracedOperation, untracedOperation } from '../http/tracing.js';
import { AppAdapter } from './app-adapter.js';
import { AppExtensions } from './app-extensions.js';
import { fetchCoreOf } from './app-fetch.js';
import { AppHooks } from './app-hooks.js';
import { AppListener } from './app-listen.js';
import { isLoadingForInspection } from './entry-context.js';
import type { AdapterHost, NodeAdapters } from './fastify-adapter.js';
import { FetchEntry, type FetchHandler } from './fetch-entry.js';
import { drain, Lifecycle, type ListenOptions, type Phase } from './lifecycle.js';
import {
  type AppOptions,
  checkAppOptions,
  checkMountOptions,
  type MaybePromise,
  type MountOptions,
} from './options.js';
import type { PluginOptions, PluginOptionsKind } from './plugin-options.js';
import { type CalledAnswer, type CallingRequest, ProcedureCalls } from './procedure-calls.js';
import { type AppSettings, flag, resolveSettings } from './settings.js';
import { checkAtStartUp } from './start-up-checks.js';

export type { UserOf } from '../core/guards.js';
export type { Answer, ObservedRoute } from '../http/observed.js';
export type { AppOptions } from './options.js';
export type { PluginOptions, PluginOptionsKind } from './plugin-options.js';

/** A plugin: called once with the app and its options. */
export type Plugin<O> = (app: App, options: O) => MaybePromise<void>;

/** A plugin whose options depend on the context type of the app it is registered on. */
export type ContextualPlugin<K extends PluginOptionsKind> = Plugin<K['options']> & {
  /** Type-level only: never set at run time. */
  readonly '~options'?: K;
};

/** The largest body any route takes: a runtime's own cap must let it through to the route's limits. */
const largestBody = (routes: readonly MountedRoute[], settings: AppSettings): number =>
  Math.max(
    settings.bodyLimit,
    ...routes.map((route) => uploadPlanOf(route, settings.uploads)?.limits.total ?? 0),
  );

/**
 * A Proceed application: its procedures and routes, its settings, its lifecycle and its
 * observers, the same on every runtime (docs/architecture.md). It serves through `app.fetch`
 * everywhere and, on Node, through its Fastify adapter (`app.listen`, `app.inject`, `app.server`).
 *
 * @example
 * const app = createApp<{ db: Db }>({ context: () => ({ db }) });
 * app.mount([posts, users]);
 * await app.listen({ port: 3030 });
 */
export class App<TCtx extends object = object> extends AppExtensions {
  readonly #settings: AppSettings;
  readonly #rateLimits: RateLimits;
  readonly #lifecycle = new Lifecycle();
  /** Where uploads spool their large files; removed at close for requests that never ended. */
  readonly #spools = new Spools();
  readonly #log: Logger;
  /** The Fastify adapter, on Node made when the app first asks for `app.server`. */
  readonly #adapter: AppAdapter;

  readonly #listener: AppListener;
  readonly #calls: ProcedureCalls;

  /** Use {@link createApp}: it gives the app the adapter of the runtime it runs on. */
  constructor(options: AppOptions<TCtx> = {}, adapters?: NodeAdapters) {
    checkAppOptions(options);
    const settings = resolveSettings(options as AppOptions<object>);
    const log = settings.logger ?? pino({ enabled: false });
    const hooks = new AppHooks(log);
    super(
      hooks,
      new ContextPipeline(options.context as ((request: RequestInfo) => object) | undefined),
      flag(options as AppOptions<object>, 'userFromContext', false),
      flag(options as AppOptions<object>, 'inspect', isLoadingForInspection()),
    );
    this.#settings = settings;
    this.#log = log;
    this.#lifecycle.limit(settings);
    if (options.cors !== undefined)
      this.routeTable.documentCors({
        origins: options.cors.origins,
        credentials: options.cors.credentials === true,
      });
    if (settings.entityTags) this.document(entityTagDocumentation);
    this.#rateLimits = new RateLimits(
      {
        log: this.#log,
        onClose: (task) => hooks.onFrameworkClose(task),
        onReady: (task) => hooks.onReady(task),
      },
      options.rateLimit,
    );
    this.#calls = new ProcedureCalls({
      context: this.contextPipeline,
      rateLimits: this.#rateLimits,
      cookieSigner: settings.cookieSigner,
      entityTags: settings.entityTags,
      userSource: () => this.userSource,
      idempotency: () => this.idempotencyRuntime,
      requestLogOf: (id) => log.child({ reqId: id }),
    });
    hooks.onReady(() => this.#prepare());
    hooks.onFrameworkClose(async () => {
      await hooks.runClosers();
      await this.#spools.disposeAll();
    });
    const host: AdapterHost = {
      settings,
      log,
      lifecycle: this.#lifecycle,
      handle: this.#entry.handle,
      pipeline: () => this.#entry.handler(),
      prepare: () => hooks.runReadyTasks(),
      closed: () => hooks.runCloseTasks(),
    };
    this.#adapter = new AppAdapter(adapters, host, {
      loaded: () => this.loaded,
      routes: () => this.routes,
      observer: () => (hooks.observed ? hooks.tellObservers : undefined),
      counter: () => (this.#entry.counting ? this.#entry : undefined),
    });
    hooks.whenObserved = () => this.#adapter.made?.observe(hooks.tellObservers);
    this.#listener = new AppListener({
      inspected: this.inspected,
      log: this.#log,
      settings,
      lifecycle: this.#lifecycle,
      adapter: () => this.#adapter.made,
      listeners: hooks.listeners,
      routeLines: () => this.routeLines(),
      fetch: this.fetch,
      entry: this.#entry,
      opensSockets: () => this.routes.some((route) => route.definition.output?.kind === 'socket'),
      readyToFetch: () => this.#entry.handler(),
      bodyLimit: () => largestBody(this.routes, settings),
      close: () => this.close(),
      shutdown: () => this.shutdown(),
      closed: () => hooks.runCloseTasks(),
    });
  }

  /**
   * A Fastify instance, on Node made (and Fastify loaded) when first asked for, before the app is
   * ready: the escape hatch for what Proceed does not do (docs/deployment.md, "Fastify: the escape
   * hatch"). {@link App.route} adds a route every adapter serves.
   */
  get server(): FastifyInstance {
    return this.#adapter.server();
  }

  /** The app's own checks and preparations, once every plugin is loaded. */
  async #prepare(): Promise<void> {
    this.loaded = true;
    await checkAtStartUp(this.routes, {
      entityTags: this.#settings.entityTags,
      uploads: this.#settings.uploads,
      userSource: this.userSource,
      hasIdempotencyStore: this.idempotencyRuntime !== undefined,
    });
  }
  readonly #entry = new FetchEntry(
    () => this.#createPipeline(),
    () => this.#adapter.made?.warnOfFetch(this.#log),
  );

  /**
   * The app as a Fetch-API handler for Bun, Deno and Workers (docs/deployment.md, "Fetch runtimes"):
   * `export default { fetch: app.fetch }`, the pipeline every adapter uses; the first call readies
   * the app. `runtime`: what the runtime passes beside the request, or `{ ip }` (the client's address).
   */
  readonly fetch: FetchHandler = this.#entry.fetch;

  /** Counts requests received and not yet answered (a stream until it ends), once a plugin asks. */
  countRequestsInFlight(): () => number {
    if (!this.#entry.counting) this.#adapter.made?.countRequests(this.#entry.arrived, this.#entry.answered);
    return this.#entry.countInFlight();
  }

  /** WebSockets and event streams open now, for the metrics (docs/metrics.md). */
  get openStreams(): { readonly sockets: number; readonly eventStreams: number } {
    return { sockets: this.#lifecycle.sockets.open, eventStreams: this.#lifecycle.streams.open };
  }

  async #createPipeline(): Promise<AppPipeline> {
    // On the Fastify adapter, Fastify's start-up runs the app's (src/server/fastify-adapter.ts).
    const adapter = this.#adapter.made;
    if (adapter === undefined) await this.hooks.runReadyTasks();
    else await adapter.server.ready();
    return createPipeline(
      fetchCoreOf(this.#settings, {
        routes: this.routes,
        appRoutes: this.#appRoutes,
        context: this.contextPipeline,
        lifecycle: this.#lifecycle,
        rateLimits: this.#rateLimits,
        spools: this.#spools,
        log: this.#log,
        userSource: () => this.userSource,
        idempotency: () => this.idempotencyRuntime,
        observe: this.hooks.observed ? this.hooks.tellObservers : undefined,
        onClose: (task) => this.hooks.onFrameworkClose(task),
      }),
    );
  }

  /** Every route mounted so far, in order. */
  get routes(): readonly MountedRoute[] {
    return this.routeTable.routes;
  }

  /** Every mount: its prefix and collections. */
  get mounts(): readonly Mount[] {
    return this.routeTable.mounts;
  }

  /** One line per route, procedures and health checks alike: `GET /api/posts/:id`. */
  routeLines(): string[] {
    return [...this.routeTable.lines(), ...this.#ownRoutes.map((route) => `${route.method} ${route.path}`)];
  }

  /** The shared logger (pino). */
  get log(): Logger {
    return this.#log;
  }

  /**
   * Mounts collections under a prefix, one route per procedure. Throws at once, naming the
   * procedure, for unroutable names, for routes that collide, and once the app is ready.
   */
  mount(collections: readonly Collection[], options: MountOptions = {}): this {
    checkMountOptions(options, this.loaded);
    const prefix = normalizePrefix(options.prefix ?? '/api');
    const plan = this.routeTable.plan(collections, prefix);
    // Everything that can refuse a route (its rate-limit rules, say) runs before the table changes.
    for (const route of plan.routes) this.#rateLimits.limiterFor(route);
    plan.commit();
    if (plan.newHealth)
      for (const route of healthRoutes(prefix, {
        serving: () => this.#lifecycle.phase === 'serving',
        rateLimits: this.#rateLimits,
        check: this.#settings.healthCheck,
        timeout: this.#settings.healthTimeout,
      }))
        this.#addRoute(route);
    this.#adapter.made?.mount(plan.routes);
    return this;
  }

  /**
   * Adds a route that is not a procedure (docs/routes.md): health checks, the docs UI and a
   * webhook are such routes. The handler reads a neutral request and returns a status, headers
   * and a body; every adapter serves it the same way, with the app's request ids, CORS, logs,
   * observers and problem answers. Add routes before the app is ready, as plugins load.
   *
   * @example
   * app.route('GET', '/version', () => ({ headers: { 'content-type': 'application/json' }, body: '{"version":"1.2.0"}' }));
   */
  route(method: AppRouteMethod, path: string, handler: RouteHandler, options: AppRouteOptions = {}): this {
    if (this.loaded)
      throw new ProceedConfigError(
        `app.route(${method} ${path}) after the app is ready: add routes as plugins load`,
      );
    const route = appRoute(method, path, handler, options);
    this.#ownRoutes.push(route);
    this.#addRoute(route);
    return this;
  }

  /** The app's routes beside its procedures: health checks and {@link App.route}'s. */
  readonly #appRoutes: AppRoute[] = [];
  /** Those added with {@link App.route}, listed with the procedures. */
  readonly #ownRoutes: AppRoute[] = [];

  #addRoute(route: AppRoute): void {
    this.#appRoutes.push(route);
  }

  /**
   * Registers a plugin (the auth and docs plugins have this shape).
   *
   * @example
   * await app.register(authPlugin, { secret, userLoader });
   */
  async register<P extends (app: App, options: never) => MaybePromise<void>>(
    plugin: P,
    // Read from the plugin alone, never widened by the literal: a misspelt key is a compile error.
    options: NoInfer<PluginOptions<P, TCtx>>,
  ): Promise<this> {
    await (plugin as unknown as Plugin<unknown>)(this as unknown as App, options);
    return this;
  }

  /**
   * Calls a mounted procedure with its whole input, path parameters included, for the request
   * that carried the call (an MCP tool call, docs/mcp.md): the same context, rate limit, guards,
   * validation, handler and view as its own route. Throws the problem its route would answer.
   */
  callProcedure(route: MountedRoute, request: CallingRequest, input: unknown): Promise<CalledAnswer> {
    return this.#calls.call(route, request, input);
  }

  /** The problem the app answers `error` with, as its routes do (`exposeErrors`; a 500 logged with `requestId`). */
  problemOf(error: unknown, requestId?: string): ProblemAnswer {
    const log = requestId === undefined ? this.#log : logOfRequest(this.#log, requestId);
    return problemAnswer(error, { exposeErrors: this.#settings.exposeErrors, log });
  }

  /**
   * Runs `work` as one operation of the request being handled (an MCP message, docs/mcp.md),
   * traced under a span `describe` names when the app traces the request (docs/observability.md).
   */
  traceOperation<T>(
    describe: () => TracedOperation,
    work: (trace: OperationTrace) => Promise<T>,
  ): Promise<T> {
    const traced = this.#settings.tracing;
    return traced?.operation === undefined ? work(untracedOperation) : traced.operation(describe, work);
  }

  /** Of `routes`, those whose guards let the caller of `request` through before any input. */
  callableBy(routes: readonly MountedRoute[], request: CallingRequest): Promise<MountedRoute[]> {
    return this.#calls.callableBy(routes, request);
  }

  /** Waits until every plugin is loaded; `inject`, `listen` and the first `fetch` call it for you. */
  async ready(): Promise<void> {
    const adapter = this.#adapter.made;
    if (adapter === undefined) await this.#entry.handler();
    else await adapter.ready();
  }

  /** Sends a request without a socket (tests), on Node: through Fastify if the app has it. Elsewhere, send a `Request` to `app.fetch`. */
  inject(request: InjectOptions | string): Promise<LightMyRequestResponse> {
    return this.#adapter.inject(request, () => this.ready());
  }

  /**
   * Listens, logs one line per route, and (by default) shuts down gracefully on SIGTERM/SIGINT.
   * On Bun and Deno it serves `app.fetch` with the runtime's own server (docs/deployment.md,
   * "Fetch runtimes").
   */
  listen(options: ListenOptions = {}): Promise<string> {
    return this.#listener.listen(options);
  }

  /** `serving`, `draining` (readiness answers 503, routes still serve) or `closing`. */
  get phase(): Phase {
    return this.#lifecycle.phase;
  }

  /**
   * What SIGTERM and SIGINT do: readiness answers 503 at once while every route keeps serving
   * for `drainDelay` ms, then {@link App.close}.
   */
  async shutdown(): Promise<void> {
    await drain(this.#log, this.#lifecycle, this.#settings.drainDelay);
    await this.close();
  }

  /**
   * Stops accepting connections, waits for in-flight requests (at most `shutdownTimeout`), then
   * runs the `onClose` steps. No drain: see {@link App.shutdown}.
   */
  close(): Promise<void> {
    return this.#listener.close();
  }
}
