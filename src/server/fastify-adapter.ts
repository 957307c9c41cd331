/**
 * The Fastify adapter (docs/architecture.md): the app served by Fastify on Node's http module,
 * one native Fastify route per procedure (no catch-all dispatcher), the app's other routes as
 * Fastify routes, and what only a Node server has (connection limits and timeouts, listening,
 * graceful close). `createApp` from `proceedjs` gives an app this adapter on Node; on Bun, Deno
 * and Workers the app has none and serves through `app.fetch`, and `app.server` is not there.
 */
import type { Server, ServerResponse } from 'node:http';
import type {
  FastifyInstance,
  FastifyRequest,
  InjectOptions,
  LightMyRequestResponse,
  onRequestAsyncHookHandler,
  onSendAsyncHookHandler,
} from 'fastify';
import type { ContextPipeline } from '../core/context.js';
import type { MountedRoute } from '../core/route-table.js';
import type { AppRoute } from '../http/app-routes.js';
import type { Answer, ObservedRoute } from '../http/observed.js';
import { closingRefusal } from '../http/problems.js';
import type { IdempotencyRuntime } from '../http/procedure-call.js';
import type { RouteLimiter } from '../http/rate-limit.js';
import type { Spools } from '../http/spool.js';
import { registerAppRoute } from './app-route.js';
import { registerCors } from './cors.js';
import { createServer } from './fastify.js';
import { closeGracefully, type Lifecycle } from './lifecycle.js';
import { MethodIndex } from './not-found.js';
import { answerClientError, problemCodeOf, sendProblem } from './problems.js';
import { type ProcedureRouteOptions, procedureOf, registerProcedureRoute } from './procedure-route.js';
import type { AppSettings } from './settings.js';
import { routeUpgrades } from './sockets.js';
import { traceRequests } from './tracing.js';

/** What the adapter is given of the app, once, as the app is made. */
export interface AdapterHost {
  readonly settings: AppSettings;
  readonly lifecycle: Lifecycle;
  readonly context: ContextPipeline;
  readonly idempotency: () => IdempotencyRuntime | undefined;
  readonly userSource: () => string | undefined;
  /** Where uploads spool their large files. */
  readonly spools: Spools;
  /** The app's own start-up steps (its checks, its plugins' `onReady`), run as Fastify gets ready. */
  prepare(): Promise<void>;
  /** The app's own closing steps, run as Fastify closes. */
  closed(): Promise<void>;
}

/** Makes the adapter of an app: `createApp` passes it on Node. */
export type AdapterFactory = (host: AdapterHost) => FastifyAdapter;

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

const observedRoute = Symbol('proceed.observedRoute');

/** The request's route as observers see it, made once per route. */
function observedRouteOf(request: FastifyRequest): ObservedRoute | undefined {
  const path = request.routeOptions.url;
  if (path === undefined) return undefined;
  const config = request.routeOptions.config as { [observedRoute]?: ObservedRoute };
  config[observedRoute] ??= Object.freeze({ procedure: procedureOf(request), path });
  return config[observedRoute];
}

export class FastifyAdapter {
  /** The Fastify instance: the documented escape hatch for what Proceed does not do itself. */
  readonly server: FastifyInstance;
  readonly #host: AdapterHost;
  /** What every procedure route is registered with. */
  readonly #procedureOptions: ProcedureRouteOptions;

  constructor(host: AdapterHost) {
    this.#host = host;
    const { settings } = host;
    this.#procedureOptions = {
      entityTags: settings.entityTags,
      requestIds: settings.requestIds,
      compressAbove: settings.compressAbove,
      exposeErrors: settings.exposeErrors,
      idempotency: host.idempotency,
      userSource: host.userSource,
      cookieSigner: settings.cookieSigner,
      csrfTrusted: settings.csrfTrusted,
      uploads: settings.uploads,
      spools: host.spools,
      traced: settings.tracing !== undefined,
      bodyLimit: settings.bodyLimit,
    };
    const { requestIds, exposeErrors } = settings;
    const server = createServer({
      logger: settings.logger,
      requestIds,
      bodyLimit: settings.bodyLimit,
      trustProxy: settings.trustProxy,
      timeouts: settings.timeouts,
      frameworkErrors: (error, request, reply) =>
        sendProblem(error, request, reply, exposeErrors, requestIds),
      clientErrorHandler: answerClientError,
      traceFields: settings.tracing?.logFields,
    });
    this.server = server;
    if (settings.tracing !== undefined) traceRequests(server, server.server, settings.tracing);
    host.lifecycle.watch(server.server, settings.maxConnections, server.log);
    if (requestIds) tagOtherRoutesWithRequestId(server);
    const methods = new MethodIndex(server);
    if (settings.cors !== undefined) registerCors(server, settings.cors, methods);
    server.setErrorHandler((error, request, reply) =>
      sendProblem(error, request, reply, exposeErrors, requestIds),
    );
    server.setNotFoundHandler((request, reply) =>
      sendProblem(methods.problemFor(request), request, reply, exposeErrors, requestIds),
    );
    server.addHook('onRoute', (route) => {
      const methods = [route.method].flat().filter((method) => method !== 'HEAD');
      const procedure = (route.config as { procedure?: string } | undefined)?.procedure;
      if (procedure === undefined && !this.#own.has(route.url))
        for (const method of methods) this.#foreign.push(`${method} ${route.url}`);
    });
    server.addHook('onReady', () => host.prepare());
    server.addHook('onClose', () => host.closed());
  }

  /** One native route per procedure; `limiters` are the routes' rate limits, in the same order. */
  mount(routes: readonly MountedRoute[], limiters: readonly (RouteLimiter | undefined)[]): void {
    const host = this.#host;
    // Node destroys upgrade requests no one listens for: only an app with sockets takes them.
    if (!this.#routesUpgrades && routes.some((route) => route.definition.output?.kind === 'socket')) {
      this.#routesUpgrades = true;
      routeUpgrades(this.server.server);
    }
    routes.forEach((route, index) => {
      registerProcedureRoute(
        this.server,
        route,
        host.context,
        host.lifecycle,
        rateLimitHooks(limiters[index], host.lifecycle),
        this.#procedureOptions,
      );
    });
  }

  addRoute(route: AppRoute): void {
    this.#own.add(route.path);
    registerAppRoute(this.server, route, this.#host.settings.bodyLimit);
  }

  #routesUpgrades = false;

  /** Paths of the app's own routes; any other route is one added on `app.server`. */
  readonly #own = new Set<string>();
  readonly #foreign: string[] = [];

  /**
   * Routes added on `app.server` (Fastify plugins, `app.server.get(…)`): Fastify's own, which
   * `app.fetch` does not serve.
   */
  get foreignRoutes(): readonly string[] {
    return this.#foreign;
  }

  /** Tells `observe` of every answer, once it has left (one hook for all observers). */
  observe(observe: (answer: Answer) => void): void {
    this.#host.lifecycle.observeUpgrade = (request, reply) =>
      observe({
        route: observedRouteOf(request),
        method: request.method,
        status: 101,
        problem: undefined,
        seconds: reply.elapsedTime / 1000,
      });
    this.server.addHook('onResponse', (request, reply, done) => {
      observe({
        route: observedRouteOf(request),
        method: request.method,
        status: reply.statusCode,
        problem: problemCodeOf(reply),
        // Fastify times every request once an onResponse hook exists: arrival to answer.
        seconds: reply.elapsedTime / 1000,
      });
      done();
    });
  }

  /** Calls `arrived` as the server hands a request over, `answered` once its answer is sent or abandoned. */
  countRequests(arrived: () => void, answered: () => void): void {
    // Before Fastify's own listener: a handler that reads the count counts its own request.
    this.server.server.prependListener('request', (_request: unknown, response: ServerResponse) => {
      arrived();
      response.once('close', answered);
    });
  }

  async ready(): Promise<void> {
    await this.server.ready();
  }

  inject(request: InjectOptions | string): Promise<LightMyRequestResponse> {
    return this.server.inject(request);
  }

  /** Listens on Node's http module; resolves to the address and the port bound. */
  async listen(port: number, host: string): Promise<{ address: string; port: number }> {
    const address = await this.server.listen({ port, host, backlog: 4096 });
    return { address, port: Number(new URL(address).port) };
  }

  /** The http server underneath, for what follows its connections. */
  get httpServer(): Server {
    return this.server.server;
  }

  close(timeout: number): Promise<void> {
    return closeGracefully(this.server, this.#host.lifecycle, timeout);
  }
}

/** The adapter `createApp` gives an app on Node. */
export const fastifyAdapter: AdapterFactory = (host) => new FastifyAdapter(host);
