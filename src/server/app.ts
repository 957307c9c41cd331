/**
 * The Fastify adapter. It registers one native Fastify route per procedure (no catch-all
 * dispatcher) from the core's route table, and wires the pieces beside it: problem+json errors
 * (problems.ts), 404/405 (not-found.ts), health (health.ts), rate limits (src/http/rate-limit.ts),
 * listening and shutdown (lifecycle.ts). See docs/architecture.md.
 */

import type { ServerResponse } from 'node:http';
import type {
  FastifyInstance,
  FastifyRequest,
  InjectOptions,
  LightMyRequestResponse,
  onRequestAsyncHookHandler,
  onSendAsyncHookHandler,
} from 'fastify';
import { serverSettingsFromEnv } from '../config/server.js';
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
import { compressionThreshold } from '../http/compression.js';
import { CookieSigner } from '../http/cookies.js';
import { CorsPolicy } from '../http/cors.js';
import { trustedOriginsOf } from '../http/csrf.js';
import { bytesTag, entityTag, entityTagsReady, ifMatchHolds, matchingTag } from '../http/entity-tags.js';
import { createFetchHandler } from '../http/fetch.js';
import { healthRoutes } from '../http/health.js';
import { closingRefusal, problemAnswer } from '../http/problems.js';
import { whenBodyEnds } from '../http/pulled-stream.js';
import { RateLimits, type RouteLimiter } from '../http/rate-limit.js';
import { type NativeServe, type NativeServer, refusedOnWorkers, runtime } from '../http/runtime.js';
import { Spools } from '../http/spool.js';
import { uploadContentReady } from '../http/upload-content.js';
import { registerAppRoute } from './app-route.js';
import { registerCors } from './cors.js';
import { createServer } from './fastify.js';
import { encoded, nodeCodings } from './http-cache.js';
import {
  closeGracefully,
  drain,
  exitOnSignals,
  Lifecycle,
  type Listening,
  type ListenOptions,
  type Phase,
} from './lifecycle.js';
import { appLogger, workersLogger } from './logger.js';
import { MethodIndex } from './not-found.js';
import {
  type AppOptions,
  checkAppOptions,
  checkMountOptions,
  type MaybePromise,
  type MountOptions,
} from './options.js';
import { answerClientError, problemCodeOf, sendProblem } from './problems.js';
import { type IdempotencyRuntime, procedureOf, registerProcedureRoute } from './procedure-route.js';
import { newRequestId } from './request-id.js';
import { traceRequests } from './tracing.js';

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

/** A route as observers see it: the same object for every answer of that route. */
export interface ObservedRoute {
  /** `collection.name`, on the routes of procedures. */
  readonly procedure: string | undefined;
  /** The route's path template (`/api/posts/:id`). */
  readonly path: string;
}

/** One answer the app sent ({@link App.observe}). */
export interface Answer {
  /** Undefined when no route matched (a 404 or 405 of the app). */
  readonly route: ObservedRoute | undefined;
  readonly method: string;
  readonly status: number;
  /** The problem code of a problem+json answer; undefined for a success. */
  readonly problem: string | undefined;
  /** From the request's arrival to the answer, in seconds. */
  readonly seconds: number;
}

/**
 * Routes that are not procedures (health, the docs UI, routes added on `app.server`) answer with
 * `X-Request-Id` too; a hook on those routes only, so procedures pay nothing for it.
 */
function tagOtherRoutesWithRequestId(server: FastifyInstance): void {
  const tag: onSendAsyncHookHandler = async (request, reply, payload) => {
    if (!reply.hasHeader('x-request-id')) reply.header('x-request-id', request.id);
    return payload;
  };
  server.addHook('onRoute', (route) => {
    if (route.config?.procedure !== undefined) return;
    const existing = route.onSend === undefined ? [] : [route.onSend].flat();
    route.onSend = [...existing, tag];
  });
}

/**
 * A limited route's `onRequest` hook: counted before anything else of the route runs, once a
 * closing app has refused (src/http/problems.ts), as `app.fetch` does.
 */
function rateLimitHooks(
  limiter: RouteLimiter | undefined,
  lifecycle: Lifecycle,
): onRequestAsyncHookHandler[] {
  if (limiter === undefined) return [];
  return [
    async (request, reply) => {
      if (lifecycle.arrivedWhileClosing(request.raw)) throw closingRefusal();
      const pending = limiter.check(request.ip);
      const headers = pending instanceof Promise ? await pending : pending;
      if (headers !== undefined) reply.headers(headers);
    },
  ];
}

/** The refusal of what needs Fastify running: Workers refuse the code Fastify compiles. */
const fastifyOnWorkers = (what: string) => refusedOnWorkers(what, "needs the app's Fastify server");

/** On Workers, a route added on `app.server` is refused where it is added, not lost. */
function refuseFastifyRoutes(server: FastifyInstance): void {
  server.addHook('onRoute', (route) => {
    throw fastifyOnWorkers(`The route ${String(route.method)} ${route.url} on app.server`);
  });
}

const observedRoute = Symbol('proceed.observedRoute');

/** The request's route as observers see it, made once per route. */
function observedRouteOf(request: FastifyRequest): ObservedRoute | undefined {
  const path = request.routeOptions.url;
  if (path === undefined) return undefined;
  const config = request.routeOptions.config as { [observedRoute]?: ObservedRoute };
  config[observedRoute] ??= Object.freeze({ procedure: procedureOf(request), path });
  return config[observedRoute];
}

/**
 * A Proceed application on Fastify.
 *
 * @example
 * const app = createApp<{ db: Db }>({ context: () => ({ db }) });
 * app.mount([posts, users]);
 * await app.listen({ port: 3030 });
 */
export class App<TCtx extends object = object> {
  /** The Fastify instance underneath, for plugins that add their own routes. */
  readonly server: FastifyInstance;
  /** Every route, mount and documented fact: what the OpenAPI generator and the CLI read. */
  readonly routeTable = new RouteTable();
  readonly #options: AppOptions<TCtx>;
  readonly #context: ContextPipeline;
  readonly #rateLimits: RateLimits;
  #methods: MethodIndex;
  readonly #cors: CorsPolicy | undefined;
  readonly #closers: Array<() => MaybePromise<void>> = [];
  readonly #observers: Array<(answer: Answer) => void> = [];
  #ready = false;
  readonly #listeners: Array<(listening: Listening) => MaybePromise<void>> = [];
  readonly #lifecycle = new Lifecycle();
  readonly #drainDelay: number;
  readonly #keepAlive: number;
  readonly #compressAbove: number | undefined;
  readonly #cookieSigner: CookieSigner;
  /** Where uploads spool their large files; removed at close for requests that never ended. */
  readonly #spools = new Spools();
  /** Origins that may write with cookies; undefined when the app turned the check off. */
  readonly #csrfTrusted: ReadonlySet<string> | undefined;
  #idempotency: IdempotencyRuntime | undefined;
  #userSource: string | undefined;
  #signalsInstalled = false;
  /** The app's own logger on Workers; Fastify's everywhere else. */
  readonly #log: FastifyInstance['log'] | undefined;
  /** On Workers, where Fastify never starts, what its onReady and onClose hooks would run. */
  readonly #workersReady: Array<() => MaybePromise<void>> = [];
  readonly #workersClose: Array<() => MaybePromise<void>> = [];

  constructor(options: AppOptions<TCtx> = {}) {
    checkAppOptions(options);
    this.#options = options;
    this.#context = new ContextPipeline(options.context as ((request: RequestInfo) => object) | undefined);
    const exposeErrors = options.exposeErrors ?? false;
    const requestIds = options.requestIds ?? true;
    const settings = serverSettingsFromEnv(process.env, {
      ...(options.timeouts === undefined ? {} : { timeouts: options.timeouts }),
      ...(options.drainDelay === undefined ? {} : { drainDelay: options.drainDelay }),
      ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
    });
    this.#drainDelay = settings.drainDelay;
    this.#keepAlive = settings.timeouts.keepAlive;
    // On Workers, Fastify never serves: the app logs through a logger of its own.
    const traceFields = options.tracing?.logFields;
    this.#log = !runtime.runsFastify ? workersLogger(options.logger, traceFields) : undefined;
    this.server = createServer({
      logger: !runtime.runsFastify ? undefined : appLogger(options.logger, traceFields),
      requestIds,
      bodyLimit: options.bodyLimit ?? 1024 * 1024,
      trustProxy: options.trustProxy ?? false,
      timeouts: settings.timeouts,
      frameworkErrors: (error, request, reply) =>
        sendProblem(error, request, reply, exposeErrors, requestIds),
      clientErrorHandler: answerClientError,
      traceFields,
    });
    if (!runtime.runsFastify) refuseFastifyRoutes(this.server);
    else if (options.tracing !== undefined) traceRequests(this.server, this.server.server, options.tracing);
    this.#lifecycle.watch(this.server.server, settings.maxConnections, this.log);
    if (requestIds) tagOtherRoutesWithRequestId(this.server);
    const methods = new MethodIndex(this.server);
    this.#methods = methods;
    this.#cors = options.cors === undefined ? undefined : new CorsPolicy(options.cors);
    if (this.#cors !== undefined && runtime.runsFastify) registerCors(this.server, this.#cors, methods);
    if (options.cors !== undefined)
      this.routeTable.documentCors({
        origins: options.cors.origins,
        credentials: options.cors.credentials === true,
      });
    if (options.entityTags ?? true) this.document(entityTagDocumentation);
    // On Workers, Cloudflare compresses at its edge for what the client accepts (docs/deployment.md).
    this.#compressAbove = runtime.compresses ? compressionThreshold(options.compression) : undefined;
    this.#cookieSigner = new CookieSigner(options.cookies?.secrets);
    this.#csrfTrusted = options.csrf === false ? undefined : trustedOriginsOf(options.csrf, options.cors);
    this.#rateLimits = new RateLimits(
      {
        log: this.log,
        onClose: (task) => this.#whenClosed(task),
        onReady: (task) => this.#whenReady(task),
      },
      options.rateLimit,
    );
    this.server.setErrorHandler((error, request, reply) =>
      sendProblem(error, request, reply, exposeErrors, requestIds),
    );
    this.server.setNotFoundHandler((request, reply) =>
      sendProblem(methods.problemFor(request), request, reply, exposeErrors, requestIds),
    );
    this.#whenReady(() => this.#prepare());
    this.#whenClosed(async () => {
      for (const close of this.#closers.reverse()) await close();
      await this.#spools.disposeAll();
    });
  }

  /** Runs `task` as the app gets ready: in Fastify's onReady, or on Workers before the first request. */
  #whenReady(task: () => MaybePromise<void>): void {
    if (!runtime.runsFastify) this.#workersReady.push(task);
    else this.server.addHook('onReady', async () => task());
  }

  /** Runs `task` as the app closes: in Fastify's onClose, or on Workers in {@link App.close}. */
  #whenClosed(task: () => MaybePromise<void>): void {
    if (!runtime.runsFastify) this.#workersClose.push(task);
    else this.server.addHook('onClose', async () => task());
  }

  /** The app's own checks and preparations, once every plugin is loaded. */
  async #prepare(): Promise<void> {
    this.#ready = true;
    // Tags are hashed on every GET unless turned off; versioned answers and files keep theirs anyway.
    const tagsAnyway = this.routes.some(
      ({ definition }) => definition.versioning !== undefined || definition.output?.kind === 'download',
    );
    if ((this.#options.entityTags ?? true) || tagsAnyway) await entityTagsReady();
    // file-type, an optional peer, is loaded only for routes that check uploads by content.
    await uploadContentReady(
      this.routes
        .filter((route) => uploadPlanOf(route, this.#options.uploads)?.checkContent)
        .map((route) => `${route.collection}.${route.name}`),
    );
    this.#refuseGuardsWithoutUser();
    if (this.#idempotency !== undefined) return;
    const needy = this.routes.filter((route) => route.definition.idempotent);
    if (needy.length > 0)
      throw new ProceedConfigError(
        `${needy.map((route) => `${route.collection}.${route.name}`).join(', ')} ${needy.length === 1 ? 'is' : 'are'} .idempotent(), but the app has no idempotency store: register idempotencyPlugin from proceedjs/idempotency`,
      );
  }

  #fetchHandler: Promise<(request: Request, runtime?: unknown) => Promise<Response>> | undefined;

  /**
   * The app as a Fetch-API handler, for Bun, Deno and Cloudflare Workers
   * (docs/deployment.md, "Fetch runtimes"): `export default { fetch: app.fetch }`. The first call
   * readies the app (its plugins, its checks); it then serves the same routes with the same
   * rules as the Node server, without Fastify in the way. `runtime` is what the runtime passes
   * beside the request (Bun's server, Deno's handler info) or `{ ip }`: where the client's address
   * comes from (docs/deployment.md, "The client's address").
   */
  readonly fetch = (request: Request, runtime?: unknown): Promise<Response> => {
    const answer = this.#fetchHandlerPromise().then((handle) => handle(request, runtime));
    return this.#countsInFlight ? this.#countedUntilSent(answer) : answer;
  };

  #inFlight = 0;
  #countsInFlight = false;

  /**
   * Counts the requests received and not yet answered (a stream until it ends or its client
   * leaves), the same way on every adapter: on Node as the server hands each request over, through
   * `app.fetch` on Bun, Deno and Workers. Off until a plugin asks (the metrics plugin does): it
   * costs a listener per request. Returns the reader of the count.
   */
  countRequestsInFlight(): () => number {
    if (!this.#countsInFlight) {
      this.#countsInFlight = true;
      if (runtime.runsFastify) {
        const answered = () => {
          this.#inFlight--;
        };
        this.server.server.on('request', (_request: unknown, response: ServerResponse) => {
          this.#inFlight++;
          response.once('close', answered);
        });
      }
    }
    return () => this.#inFlight;
  }

  #countedUntilSent(answer: Promise<Response>): Promise<Response> {
    this.#inFlight++;
    const answered = () => {
      this.#inFlight--;
    };
    return answer.then(
      (response) => {
        const ends = whenBodyEnds(response.body);
        if (ends === undefined) answered();
        else void ends.then(answered);
        return response;
      },
      (error: unknown) => {
        answered();
        throw error;
      },
    );
  }

  #fetchHandlerPromise(): Promise<(request: Request, runtime?: unknown) => Promise<Response>> {
    if (this.#fetchHandler === undefined) {
      const created = this.#createFetchHandler();
      this.#fetchHandler = created;
      // A start-up that failed is tried again by the next request, not remembered forever.
      created.catch(() => {
        if (this.#fetchHandler === created) this.#fetchHandler = undefined;
      });
    }
    return this.#fetchHandler;
  }

  async #createFetchHandler(): Promise<(request: Request, runtime?: unknown) => Promise<Response>> {
    // Each task leaves the list once it succeeded: a start-up that failed runs them again.
    if (!runtime.runsFastify)
      while (this.#workersReady.length > 0) {
        await this.#workersReady[0]?.();
        this.#workersReady.shift();
      }
    else await this.server.ready();
    const options = this.#options;
    const observers = this.#observers;
    const log = this.log;
    return createFetchHandler({
      routes: this.routes,
      appRoutes: this.#appRoutes,
      buildContext: (request) => this.#context.build(request),
      userSource: () => this.userSource,
      entityTags: options.entityTags ?? true,
      requestIds: options.requestIds ?? true,
      exposeErrors: options.exposeErrors ?? false,
      bodyLimit: options.bodyLimit ?? 1024 * 1024,
      compression:
        this.#compressAbove === undefined
          ? undefined
          : {
              above: this.#compressAbove,
              codings: nodeCodings,
              encode: encoded,
            },
      cookieSigner: this.#cookieSigner,
      csrfTrusted: this.#csrfTrusted,
      uploads: options.uploads,
      // Workers have no disk: there an upload's files stay in memory, under its limits.
      spools: runtime.spoolsToDisk ? this.#spools : undefined,
      idempotency: () => this.#idempotency,
      tracing: options.tracing,
      serving: () => this.#lifecycle.phase === 'serving',
      onClosing: this.#lifecycle.onClosing,
      closing: () => this.#lifecycle.phase === 'closing',
      cors: this.#cors,
      rateLimits: this.#rateLimits,
      trustProxy: options.trustProxy ?? false,
      requestLog:
        options.logger === false
          ? undefined
          : ({ id, method, url, host, ip, status, milliseconds }) => {
              if (!(log as unknown as { isLevelEnabled(level: string): boolean }).isLevelEnabled('info'))
                return;
              log.info(
                {
                  reqId: id,
                  // Shaped as Fastify's request serializer reads a request, so the line is Node's.
                  req: { method, url, host, ip: ip === '' ? undefined : ip, headers: {} },
                  res: { statusCode: status },
                  responseTime: milliseconds,
                },
                'request completed',
              );
            },
      otherRoutes: {
        has: (method, path) => this.#methods.allows(method, path),
        serve: (request, exchange) => this.#injected(request, exchange),
      },
      entityTag,
      bytesTag,
      matchingTag,
      ifMatchHolds,
      newRequestId,
      log,
      observe:
        observers.length === 0
          ? undefined
          : (answer) => {
              for (const observer of observers) {
                try {
                  observer(answer as Answer);
                } catch (error) {
                  log.error({ err: error }, 'An observer of answers failed');
                }
              }
            },
    });
  }

  /**
   * A request for one of the app's Fastify routes that are not procedures (the docs UI, routes
   * added on `app.server`), answered by Fastify in memory: on a Fetch runtime they serve as on
   * Node, with their own hooks, logs and observers.
   */
  async #injected(
    request: Request,
    { id, ip, body }: { id: string; ip: string; body: Uint8Array | undefined },
  ): Promise<Response> {
    const url = new URL(request.url);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    if (this.#options.requestIds ?? true) headers['x-request-id'] = id;
    const answer = await this.server.inject({
      method: request.method as 'GET',
      url: `${url.pathname}${url.search}`,
      headers,
      ...(body === undefined ? {} : { payload: Buffer.from(body) }),
      ...(ip === '' ? {} : { remoteAddress: ip }),
    });
    const answerHeaders = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      // The runtime frames the body and manages the connection itself.
      if (value === undefined || ['transfer-encoding', 'connection', 'keep-alive'].includes(name)) continue;
      if (Array.isArray(value)) for (const each of value) answerHeaders.append(name, each);
      else answerHeaders.set(name, String(value));
    }
    const empty = request.method === 'HEAD' || answer.statusCode === 204 || answer.statusCode === 304;
    return new Response(empty ? null : new Uint8Array(answer.rawPayload), {
      status: answer.statusCode,
      headers: answerHeaders,
    });
  }

  /** A guard that needs a signed-in user cannot pass where nothing sets `ctx.user`. */
  #refuseGuardsWithoutUser(): void {
    if (this.userSource !== undefined) return;
    const needy = this.routes.filter((route) =>
      route.definition.guards.some((guard) => guard.requiresUser === true),
    );
    const [first] = needy;
    if (first === undefined) return;
    const guard = first.definition.guards.find((each) => each.requiresUser === true)?.name ?? '';
    const others =
      needy.length > 1 ? ` (and ${needy.length - 1} more route${needy.length > 2 ? 's' : ''})` : '';
    throw new ProceedConfigError(
      `${first.collection}.${first.name} (${first.method} ${first.path}) has guard "${guard}", which needs a signed-in user, but nothing on this app sets ctx.user${others}: register authPlugin from proceedjs/auth (await app.register(authPlugin, { userLoader })); if your context sets user itself, createApp({ userFromContext: true }); if a plugin of yours sets it, call app.providesUser('yourPlugin') there`,
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
  get log(): FastifyInstance['log'] {
    return this.#log ?? this.server.log;
  }

  /**
   * Mounts collections under a prefix, one Fastify route per procedure. Throws at once, naming
   * the procedure, for unroutable names and for routes that collide.
   */
  mount(collections: readonly Collection[], options: MountOptions = {}): this {
    checkMountOptions(options);
    const prefix = normalizePrefix(options.prefix ?? '/api');
    const plan = this.routeTable.plan(collections, prefix);
    // Everything that can refuse a route (its rate-limit rules, say) runs before the table changes.
    const hooks = plan.routes.map((route) =>
      rateLimitHooks(this.#rateLimits.limiterFor(route), this.#lifecycle),
    );
    plan.commit();
    if (plan.newHealth)
      for (const route of healthRoutes(prefix, {
        serving: () => this.#lifecycle.phase === 'serving',
        rateLimits: this.#rateLimits,
        check: this.#options.health?.check,
        log: this.log,
      }))
        this.#addRoute(route);
    // On Workers, app.fetch serves the route table alone: Fastify never starts there.
    if (!runtime.runsFastify) return this;
    plan.routes.forEach((route, index) => {
      registerProcedureRoute(this.server, route, this.#context, this.#lifecycle, hooks[index] ?? [], {
        entityTags: this.#options.entityTags ?? true,
        requestIds: this.#options.requestIds ?? true,
        compressAbove: this.#compressAbove,
        exposeErrors: this.#options.exposeErrors ?? false,
        idempotency: () => this.#idempotency,
        userSource: () => this.userSource,
        cookieSigner: this.#cookieSigner,
        csrfTrusted: this.#csrfTrusted,
        uploads: this.#options.uploads,
        spools: this.#spools,
        traced: this.#options.tracing !== undefined,
        bodyLimit: this.#options.bodyLimit ?? 1024 * 1024,
      });
    });
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
    if (runtime.runsFastify) registerAppRoute(this.server, route, this.#options.bodyLimit ?? 1024 * 1024);
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
    this.#whenReady(task);
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
    if (this.#observers.length === 0) {
      const observers = this.#observers;
      const log = this.log;
      this.server.addHook('onResponse', (request, reply, done) => {
        const answer: Answer = {
          route: observedRouteOf(request),
          method: request.method,
          status: reply.statusCode,
          problem: problemCodeOf(reply),
          // Fastify times every request once an onResponse hook exists: arrival to answer.
          seconds: reply.elapsedTime / 1000,
        };
        for (const observer of observers) {
          // One observer's mistake costs neither the others nor the request's own hooks.
          try {
            observer(answer);
          } catch (error) {
            log.error({ err: error }, 'An observer of answers failed');
          }
        }
        done();
      });
    }
    this.#observers.push(listener);
    return this;
  }

  /** Waits until every plugin is loaded; `inject`, `listen` and the first `fetch` call it for you. */
  async ready(): Promise<void> {
    if (!runtime.runsFastify) await this.#fetchHandlerPromise();
    else await this.server.ready();
  }

  /** Sends a request without a socket (tests). On Workers, send a `Request` to `app.fetch`. */
  inject(request: InjectOptions | string): Promise<LightMyRequestResponse> {
    if (!runtime.runsFastify) return Promise.reject(fastifyOnWorkers('app.inject()'));
    return this.server.inject(request);
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
    await this.server.ready();
    if (options.logRoutes !== false) for (const line of this.routeLines()) this.log.info(line);
    const host = options.host ?? '127.0.0.1';
    const address = await this.server.listen({ port: options.port ?? 3030, host, backlog: 4096 });
    await this.#listening({ host, port: Number(new URL(address).port) }, options);
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
      exitOnSignals(this.server, () => this.shutdown());
    }
  }

  #nativeServer: NativeServer | undefined;

  async #listenNatively(serve: NativeServe, options: ListenOptions): Promise<string> {
    if (this.#nativeServer !== undefined) throw new ProceedConfigError('This app is listening already');
    // Readies the app and refuses what app.fetch does not apply, before the port opens.
    await this.#fetchHandlerPromise();
    if (options.logRoutes !== false) for (const line of this.routeLines()) this.log.info(line);
    const host = options.host ?? '127.0.0.1';
    const server = await serve({
      port: options.port ?? 3030,
      host,
      fetch: this.fetch,
      // The runtime's own cap must let the largest upload through to the app's limits.
      bodyLimit: Math.max(
        this.#options.bodyLimit ?? 1024 * 1024,
        ...this.routes.map((route) => uploadPlanOf(route, this.#options.uploads)?.limits.total ?? 0),
      ),
      keepAlive: this.#keepAlive,
      failed: (error) => {
        const problem = problemAnswer(error, {
          exposeErrors: this.#options.exposeErrors ?? false,
          log: this.log,
        });
        return new Response(problem.body, { status: problem.status, headers: problem.headers });
      },
    });
    this.#nativeServer = server;
    const address = `http://${host.includes(':') ? `[${host}]` : host}:${server.port}`;
    this.log.info(`Server listening at ${address} (${runtime.name}, app.fetch)`);
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
    await drain(this.server, this.#lifecycle, this.#drainDelay);
    await this.close();
  }

  /**
   * Stops accepting connections, waits for in-flight requests (at most `shutdownTimeout`), then
   * runs the `onClose` steps. No drain: see {@link App.shutdown}.
   */
  async close(): Promise<void> {
    if (!runtime.runsFastify) {
      this.#lifecycle.beginClosing();
      for (const task of this.#workersClose.splice(0)) await task();
      return;
    }
    const timeout = this.#options.shutdownTimeout ?? 10_000;
    const native = this.#nativeServer;
    if (native !== undefined) {
      this.#nativeServer = undefined;
      // New requests get a 503 from app.fetch; those in flight finish, up to the timeout.
      this.#lifecycle.beginClosing();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), timeout);
      });
      const stopped = await Promise.race([native.stop(false).then(() => 'stopped' as const), late]);
      clearTimeout(timer);
      if (stopped === 'late') {
        this.log.warn(`Requests still running after ${timeout} ms; closing their connections`);
        await native.stop(true);
      }
    }
    return closeGracefully(this.server, this.#lifecycle, timeout);
  }
}

/**
 * Creates an app. The type argument is what `context` adds to every request's context.
 *
 * @example
 * const app = createApp<{ db: Db }>({ context: () => ({ db }) }).mount([posts]);
 */
export function createApp<TCtx extends object = object>(options: AppOptions<TCtx> = {}): App<TCtx> {
  return new App(options);
}
