/**
 * The app (docs/architecture.md): the route table, settings resolved once, the lifecycle, the
 * observers and the plugins' hooks, the same on every runtime. It serves through `app.fetch`
 * (src/http/fetch.ts) and, on Node, through the Fastify adapter `createApp` gives it
 * (src/server/fastify-adapter.ts); `createApp` lives beside each entry point
 * (src/server/create-app.ts for Node, src/server/create-app-fetch.ts for Bun, Deno and Workers).
 */

import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { type Logger, pino } from 'pino';
import { ContextPipeline, type ContextResolver } from '../core/context.js';
import { entityTagDocumentation, idempotencyDocumentation } from '../core/documentation.js';
import { ProceedConfigError } from '../core/errors.js';
import { replaysByKey } from '../core/idempotency.js';
import { normalizePrefix } from '../core/naming.js';
import type { Collection } from '../core/procedure.js';
import type { RequestInfo } from '../core/request-context.js';
import { type DocumentationSource, type Mount, type MountedRoute, RouteTable } from '../core/route-table.js';
import { uploadPlanOf } from '../core/uploads.js';
import {
  type AppRoute,
  type AppRouteMethod,
  type AppRouteOptions,
  appRoute,
  type RouteHandler,
} from '../http/app-routes.js';
import { createFetchHandler } from '../http/fetch.js';
import { healthRoutes } from '../http/health.js';
import type { Answer } from '../http/observed.js';
import type { IdempotencyRuntime } from '../http/procedure-call.js';
import { RateLimits } from '../http/rate-limit.js';
import { type NativeServe, type NativeServer, runtime } from '../http/runtime.js';
import { Spools } from '../http/spool.js';
import { fetchCoreOf } from './app-fetch.js';
import type { AdapterFactory, FastifyAdapter } from './fastify-adapter.js';
import { FetchEntry, type FetchHandler } from './fetch-entry.js';
import {
  drain,
  exitOnSignals,
  Lifecycle,
  type Listening,
  type ListenOptions,
  type Phase,
} from './lifecycle.js';
import { listenNatively, stopNatively } from './native-listen.js';
import {
  type AppOptions,
  checkAppOptions,
  checkMountOptions,
  type MaybePromise,
  type MountOptions,
} from './options.js';
import { type AppSettings, resolveSettings } from './settings.js';
import { checkAtStartUp } from './start-up-checks.js';

export type { Answer, ObservedRoute } from '../http/observed.js';
export type { AppOptions } from './options.js';

/** A plugin: called once with the app and its options. */
export type Plugin<O> = (app: App, options: O) => MaybePromise<void>;

/**
 * A plugin's options as a function of the app's context type: `options` may read `this['ctx']`.
 * `authPlugin` uses it so that its `userLoader` must return the context's user.
 *
 * @example
 * interface AuthOptionsFor extends PluginOptionsKind {
 *   readonly options: AuthPluginOptions<UserOf<this['ctx']>>;
 * }
 */
export interface PluginOptionsKind {
  readonly ctx: unknown;
  readonly options: unknown;
}

/** A plugin whose options depend on the context type of the app it is registered on. */
export type ContextualPlugin<K extends PluginOptionsKind> = Plugin<K['options']> & {
  /** Type-level only: never set at run time. */
  readonly '~options'?: K;
};

/** The options `app.register(plugin, …)` takes on an app whose context is `TCtx`. */
export type PluginOptions<P, TCtx> = P extends { readonly '~options'?: infer K extends PluginOptionsKind }
  ? (K & { readonly ctx: TCtx })['options']
  : P extends (app: never, options: infer O) => unknown
    ? O
    : never;

export type { UserOf } from '../core/guards.js';

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
export class App<TCtx extends object = object> {
  /** Every route, mount and documented fact: what the OpenAPI generator and the CLI read. */
  readonly routeTable = new RouteTable();
  readonly #options: AppOptions<TCtx>;
  readonly #context: ContextPipeline;
  readonly #settings: AppSettings;
  readonly #rateLimits: RateLimits;
  readonly #closers: Array<() => MaybePromise<void>> = [];
  readonly #observers: Array<(answer: Answer) => void> = [];
  #ready = false;
  readonly #listeners: Array<(listening: Listening) => MaybePromise<void>> = [];
  readonly #lifecycle = new Lifecycle();
  /** Where uploads spool their large files; removed at close for requests that never ended. */
  readonly #spools = new Spools();
  #idempotency: IdempotencyRuntime | undefined;
  #userSource: string | undefined;
  #signalsInstalled = false;
  readonly #log: Logger;
  /** The Fastify adapter, on Node; undefined where the app serves through app.fetch alone. */
  readonly #adapter: FastifyAdapter | undefined;
  /** What runs as the app gets ready, in order; each leaves once it succeeded. */
  readonly #readyTasks: Array<() => MaybePromise<void>> = [];
  /** What runs as the app closes, in order. */
  readonly #closeTasks: Array<() => MaybePromise<void>> = [];

  /** Use {@link createApp}: it gives the app the adapter of the runtime it runs on. */
  constructor(options: AppOptions<TCtx> = {}, adapter?: AdapterFactory) {
    checkAppOptions(options);
    this.#options = options;
    this.#context = new ContextPipeline(options.context as ((request: RequestInfo) => object) | undefined);
    const settings = resolveSettings(options as AppOptions<object>);
    this.#settings = settings;
    this.#log = settings.logger ?? pino({ enabled: false });
    if (options.cors !== undefined)
      this.routeTable.documentCors({
        origins: options.cors.origins,
        credentials: options.cors.credentials === true,
      });
    if (settings.entityTags) this.document(entityTagDocumentation);
    this.#rateLimits = new RateLimits(
      {
        log: this.#log,
        onClose: (task) => this.#closeTasks.push(task),
        onReady: (task) => this.#readyTasks.push(task),
      },
      options.rateLimit,
    );
    this.#readyTasks.push(() => this.#prepare());
    this.#closeTasks.push(async () => {
      for (const close of this.#closers.reverse()) await close();
      await this.#spools.disposeAll();
    });
    this.#adapter = adapter?.({
      settings,
      lifecycle: this.#lifecycle,
      context: this.#context,
      procedureOptions: {
        entityTags: settings.entityTags,
        requestIds: settings.requestIds,
        compressAbove: settings.compressAbove,
        exposeErrors: settings.exposeErrors,
        idempotency: () => this.#idempotency,
        userSource: () => this.userSource,
        cookieSigner: settings.cookieSigner,
        csrfTrusted: settings.csrfTrusted,
        uploads: settings.uploads,
        spools: this.#spools,
        traced: settings.tracing !== undefined,
        bodyLimit: settings.bodyLimit,
      },
      prepare: () => this.#runReadyTasks(),
      closed: () => this.#runCloseTasks(),
    });
  }

  /**
   * The Fastify instance of the Node adapter: the documented escape hatch for what Proceed does
   * not do itself (a Fastify plugin, a hook). Its routes are Fastify's: they serve through
   * `app.listen` and `app.inject` on Node, not through `app.fetch`; {@link App.route} adds a route
   * every adapter serves. Apps on Bun, Deno and Workers have no Fastify.
   */
  get server(): FastifyInstance {
    if (this.#adapter !== undefined) return this.#adapter.server;
    throw new ProceedConfigError(
      `app.server is the Fastify instance of the Node adapter, and this app has none: on ${runtime.name} it serves through app.fetch; add routes with app.route() (docs/routes.md)`,
    );
  }

  /** Each task leaves the list once it succeeded: a start-up that failed runs the rest again. */
  async #runReadyTasks(): Promise<void> {
    while (this.#readyTasks.length > 0) {
      await this.#readyTasks[0]?.();
      this.#readyTasks.shift();
    }
  }

  async #runCloseTasks(): Promise<void> {
    for (const task of this.#closeTasks.splice(0)) await task();
  }

  /** The app's own checks and preparations, once every plugin is loaded. */
  async #prepare(): Promise<void> {
    this.#ready = true;
    await checkAtStartUp(this.routes, {
      entityTags: this.#settings.entityTags,
      uploads: this.#settings.uploads,
      userSource: this.userSource,
      hasIdempotencyStore: this.#idempotency !== undefined,
    });
  }

  readonly #entry = new FetchEntry(() => this.#createFetchHandler());

  /**
   * The app as a Fetch-API handler, for Bun, Deno and Cloudflare Workers
   * (docs/deployment.md, "Fetch runtimes"): `export default { fetch: app.fetch }`. The first call
   * readies the app (its plugins, its checks); it then serves the same routes with the same
   * rules as the Node server, without Fastify in the way. `runtime` is what the runtime passes
   * beside the request (Bun's server, Deno's handler info) or `{ ip }`: where the client's address
   * comes from (docs/deployment.md, "The client's address").
   */
  readonly fetch: FetchHandler = this.#entry.fetch;

  /**
   * Counts the requests received and not yet answered (a stream until it ends or its client
   * leaves), the same way on every adapter: on Node as the server hands each request over, through
   * `app.fetch` on Bun, Deno and Workers. Off until a plugin asks (the metrics plugin does): it
   * costs a listener per request. Returns the reader of the count.
   */
  countRequestsInFlight(): () => number {
    if (!this.#entry.counting) this.#adapter?.countRequests(this.#entry.arrived, this.#entry.answered);
    return this.#entry.countInFlight();
  }

  async #createFetchHandler(): Promise<FetchHandler> {
    if (this.#adapter === undefined) await this.#runReadyTasks();
    else {
      await this.#adapter.ready();
      const foreign = this.#adapter.foreignRoutes;
      if (foreign.length > 0)
        this.#log.warn(
          `app.fetch does not serve the routes added on app.server, which are Fastify's (${foreign.join(', ')}): add them with app.route() to serve them through app.fetch too (docs/routes.md)`,
        );
    }
    return createFetchHandler(
      fetchCoreOf(this.#settings, {
        routes: this.routes,
        appRoutes: this.#appRoutes,
        context: this.#context,
        lifecycle: this.#lifecycle,
        rateLimits: this.#rateLimits,
        spools: this.#spools,
        log: this.#log,
        userSource: () => this.userSource,
        idempotency: () => this.#idempotency,
        observe: this.#observers.length === 0 ? undefined : (answer) => this.#tellObservers(answer),
      }),
    );
  }

  /** Tells every observer of one answer; one observer's mistake costs neither the others nor the request. */
  #tellObservers(answer: Answer): void {
    for (const observer of this.#observers) {
      try {
        observer(answer);
      } catch (error) {
        this.#log.error({ err: error }, 'An observer of answers failed');
      }
    }
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
   * procedure, for unroutable names and for routes that collide.
   */
  mount(collections: readonly Collection[], options: MountOptions = {}): this {
    checkMountOptions(options);
    const prefix = normalizePrefix(options.prefix ?? '/api');
    const plan = this.routeTable.plan(collections, prefix);
    // Everything that can refuse a route (its rate-limit rules, say) runs before the table changes.
    const limiters = plan.routes.map((route) => this.#rateLimits.limiterFor(route));
    plan.commit();
    if (plan.newHealth)
      for (const route of healthRoutes(prefix, {
        serving: () => this.#lifecycle.phase === 'serving',
        rateLimits: this.#rateLimits,
        check: this.#settings.healthCheck,
        log: this.#log,
      }))
        this.#addRoute(route);
    this.#adapter?.mount(plan.routes, limiters);
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
    if (this.#ready)
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
    this.#adapter?.addRoute(route);
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
    if (this.#idempotency !== undefined)
      throw new ProceedConfigError('An idempotency store is registered twice on this app');
    this.#idempotency = idempotency;
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
    return this.#userSource ?? (this.#options.userFromContext === true ? "the app's context" : undefined);
  }

  /** Adds a step that extends every request's context, after the app's own `context`. */
  extendContext(resolver: ContextResolver): this {
    this.#context.add(resolver);
    return this;
  }

  /**
   * Runs once every plugin is loaded and every route mounted, before the app serves (the docs
   * plugin builds its document here). One that throws makes `ready`, `listen` and the first
   * `fetch` fail with its error.
   */
  onReady(task: () => MaybePromise<void>): this {
    if (this.#ready)
      throw new ProceedConfigError('app.onReady() after the app is ready: add it as plugins load');
    this.#readyTasks.push(task);
    return this;
  }

  /** Runs when the app closes, last registered first (close a database pool here). */
  onClose(close: () => MaybePromise<void>): this {
    this.#closers.push(close);
    return this;
  }

  /**
   * Runs once the app listens, in order, told where (the metrics plugin opens its own port on
   * the same interface here). One that throws makes `listen` fail: the app closes and the error
   * is thrown from `listen`.
   */
  onListen(listener: (listening: Listening) => MaybePromise<void>): this {
    this.#listeners.push(listener);
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
    if (this.#ready)
      throw new ProceedConfigError('app.observe() after the app is ready: add observers as plugins load');
    if (this.#observers.length === 0) this.#adapter?.observe((answer) => this.#tellObservers(answer));
    this.#observers.push(listener);
    return this;
  }

  /** Waits until every plugin is loaded; `inject`, `listen` and the first `fetch` call it for you. */
  async ready(): Promise<void> {
    if (this.#adapter === undefined) await this.#entry.handler();
    else await this.#adapter.ready();
  }

  /** Sends a request without a socket (tests), through the Node adapter. Elsewhere, send a `Request` to `app.fetch`. */
  inject(request: InjectOptions | string): Promise<LightMyRequestResponse> {
    if (this.#adapter === undefined)
      return Promise.reject(
        new ProceedConfigError(
          `app.inject() needs the Node adapter, which this app has not on ${runtime.name}: send a Request to app.fetch instead`,
        ),
      );
    return this.#adapter.inject(request);
  }

  /**
   * Listens, logs one line per route, and (by default) shuts down gracefully on SIGTERM/SIGINT.
   * On Bun and Deno it serves `app.fetch` with the runtime's own server (docs/deployment.md,
   * "Fetch runtimes").
   */
  async listen(options: ListenOptions = {}): Promise<string> {
    if (!runtime.listens)
      throw new ProceedConfigError(
        "app.listen() on Cloudflare Workers: Workers listen for you; export the app's fetch instead (export default { fetch: app.fetch })",
      );
    if (runtime.serve !== undefined) return this.#listenNatively(runtime.serve, options);
    const adapter = this.#adapter;
    if (adapter === undefined)
      throw new ProceedConfigError(
        'app.listen() on Node needs the Node adapter: make the app with createApp from proceedjs',
      );
    await adapter.ready();
    if (options.logRoutes !== false) for (const line of this.routeLines()) this.#log.info(line);
    const host = options.host ?? '127.0.0.1';
    const { address, port } = await adapter.listen(options.port ?? 3030, host);
    await this.#listening({ host, port }, options);
    return address;
  }

  /** Tells the app's listeners where it listens (closing it if one fails), then takes the signals. */
  async #listening(listening: Listening, options: ListenOptions): Promise<void> {
    try {
      for (const listener of this.#listeners) await listener(listening);
    } catch (error) {
      await this.close();
      throw error;
    }
    if (options.handleSignals !== false && !this.#signalsInstalled) {
      this.#signalsInstalled = true;
      exitOnSignals(this.#log, () => this.shutdown());
    }
  }

  #nativeServer: NativeServer | undefined;

  async #listenNatively(serve: NativeServe, options: ListenOptions): Promise<string> {
    if (this.#nativeServer !== undefined) throw new ProceedConfigError('This app is listening already');
    // Readies the app and refuses what app.fetch does not apply, before the port opens.
    await this.#entry.handler();
    if (options.logRoutes !== false) for (const line of this.routeLines()) this.#log.info(line);
    const host = options.host ?? '127.0.0.1';
    const { server, address } = await listenNatively(serve, {
      port: options.port ?? 3030,
      host,
      fetch: this.fetch,
      bodyLimit: Math.max(
        this.#settings.bodyLimit,
        ...this.routes.map((route) => uploadPlanOf(route, this.#settings.uploads)?.limits.total ?? 0),
      ),
      keepAlive: this.#settings.timeouts.keepAlive,
      exposeErrors: this.#settings.exposeErrors,
      log: this.#log,
    });
    this.#nativeServer = server;
    await this.#listening({ host, port: server.port }, options);
    return address;
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
  async close(): Promise<void> {
    const timeout = this.#settings.shutdownTimeout;
    const native = this.#nativeServer;
    if (native !== undefined) {
      this.#nativeServer = undefined;
      // New requests get a 503 from app.fetch; those in flight finish, up to the timeout.
      this.#lifecycle.beginClosing();
      await stopNatively(native, timeout, this.#log);
    }
    if (this.#adapter !== undefined) return this.#adapter.close(timeout);
    this.#lifecycle.beginClosing();
    await this.#runCloseTasks();
  }
}
