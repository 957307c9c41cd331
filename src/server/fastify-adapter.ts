/**
 * The Fastify adapter (docs/architecture.md): the app served by Fastify's server on Node's http
 * module. It only converts: every request that no route added on `app.server` takes goes to the
 * app's pipeline, the same one `app.fetch` and `proceedjs/node` use (src/server/node-http.ts reads
 * the request and writes the answer), so every HTTP rule is decided once, in src/http/. It goes
 * straight there, or through Fastify's not-found handler when an app-wide hook of Fastify's must
 * run first (docs/deployment.md, "Fastify: the escape hatch"). What only a Node server has
 * (connection limits and timeouts, listening, graceful close) is set up here; Fastify's own
 * routes, hooks and plugins stay the escape hatch (`app.server`). `createApp` from `proceedjs`
 * gives an app this adapter on Node; on Bun, Deno and Workers the app has none.
 */
import { lookup } from 'node:dns/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  InjectOptions,
  LightMyRequestResponse,
  onSendAsyncHookHandler,
} from 'fastify';
import type { Logger } from 'pino';
import type { MountedRoute } from '../core/route-table.js';
import type { PipelineHandler } from '../http/fetch.js';
import type { Answer } from '../http/observed.js';
import { corsOfFastify } from './cors.js';
import { createServer } from './fastify.js';
import { closeGracefully, type Lifecycle } from './lifecycle.js';
import { hostAndPort, PipelineOnNode } from './node-http.js';
import { FastifyRoutes } from './not-found.js';
import { handedToPipeline, handToPipeline } from './pipeline-route.js';
import { answerClientError, problemCodeOf, sendProblem } from './problems.js';
import type { AppSettings } from './settings.js';
import { routeUpgrades } from './sockets.js';

/** What the adapter is given of the app, once, as the app is made. */
export interface AdapterHost {
  readonly settings: AppSettings;
  /** The app's logger (a disabled one when it logs nothing). */
  readonly log: Logger;
  readonly lifecycle: Lifecycle;
  /** The app's pipeline: every request of the app's own routes goes to it. */
  readonly handle: PipelineHandler;
  /** Makes the pipeline (once the app's start-up steps ran), so the first request waits for nothing. */
  pipeline(): Promise<unknown>;
  /** The app's own start-up steps (its checks, its plugins' `onReady`), run as Fastify gets ready. */
  prepare(): Promise<void>;
  /** The app's own closing steps, run as Fastify closes. */
  closed(): Promise<void>;
}

/** Makes the adapter of an app. */
export type AdapterFactory = (host: AdapterHost) => FastifyAdapter;

/**
 * What `createApp` of `proceedjs` gives an app on Node: the Fastify adapter, made when the app
 * first asks for `app.server`, and `app.inject()` through the pipeline for an app without it.
 */
export interface NodeAdapters {
  readonly fastify: AdapterFactory;
  inject(host: AdapterHost, request: InjectOptions | string): Promise<LightMyRequestResponse>;
}

/** What Fastify answers itself (its routes, a hook's answer) carries `X-Request-Id` too, as the app's answers do. */
const tagWithRequestId: onSendAsyncHookHandler = async (request, reply, payload) => {
  if (!reply.hasHeader('x-request-id')) reply.header('x-request-id', request.id);
  return payload;
};

/** Headers of a hook's that describe a body Fastify would have sent, not the pipeline's answer. */
const bodyHeaders = new Set(['content-length', 'transfer-encoding', 'content-encoding']);

/** The hooks that run for requests, which Fastify then runs for the app's routes too. */
const requestHooks = new Set([
  'onRequest',
  'preParsing',
  'preValidation',
  'preHandler',
  'preSerialization',
  'onSend',
  'onResponse',
  'onError',
  'onTimeout',
  'onRequestAbort',
]);

interface UserHooks {
  /** Whether an app's hook on the root instance runs for every request. */
  readonly every: boolean;
  /** Fastify's own `addHook`, for the adapter's hooks. */
  readonly addHook: FastifyInstance['addHook'];
}

/**
 * Notes the request hooks added on the root instance (or by a plugin that shares it); those of
 * an encapsulated plugin run for its own routes alone, which Fastify serves anyway.
 */
function noteUserHooks(server: FastifyInstance): UserHooks {
  const addHook = server.addHook;
  const noted = { every: false, addHook };
  server.addHook = function addUserHook(this: FastifyInstance, name: string, ...rest: unknown[]) {
    if (this === server && requestHooks.has(name)) noted.every = true;
    return (addHook as (...args: unknown[]) => FastifyInstance).call(this, name, ...rest);
  } as FastifyInstance['addHook'];
  return noted;
}

export class FastifyAdapter {
  /** The Fastify instance: the documented escape hatch for what Proceed does not do itself. */
  readonly server: FastifyInstance;
  readonly #host: AdapterHost;
  readonly #pipeline: PipelineOnNode;

  constructor(host: AdapterHost) {
    this.#host = host;
    const { settings } = host;
    const { requestIds, exposeErrors } = settings;
    const server = createServer({
      logger: settings.logger,
      requestIds,
      countRequest: settings.countRequest,
      bodyLimit: settings.bodyLimit,
      trustProxy: settings.trustProxy,
      timeouts: settings.timeouts,
      // A URL the router cannot read: the pipeline answers it as it answers any other.
      frameworkErrors: (_error, request, reply) => this.#toPipeline(request, reply),
      clientErrorHandler: answerClientError,
      traceFields: settings.tracing?.logFields,
    });
    this.server = server;
    this.#userHooks = noteUserHooks(server);
    this.#fastifyRoutes = new FastifyRoutes(server);
    this.#pipeline = new PipelineOnNode(
      {
        handle: host.handle,
        lifecycle: host.lifecycle,
        exposeErrors,
        log: server.log as unknown as Logger,
        serverTakes: this.#fastifyRoutes.takes,
        sendTimeout: settings.timeouts.send,
      },
      'localhost',
    );
    host.lifecycle.watch(server.server, settings.maxConnections, server.log);
    this.#pipeline.watchFraming(server.server);
    // Hooks of every Fastify route; a request handed to the pipeline gets its headers there.
    if (requestIds) this.#ownHook('onSend', tagWithRequestId);
    if (settings.cors !== undefined) this.#ownHook('onRequest', corsOfFastify(settings.cors));
    server.setErrorHandler((error, request, reply) =>
      sendProblem(error, request, reply, exposeErrors, requestIds),
    );
    const toPipeline = this.#toPipeline;
    // Whatever no route of Fastify's takes is the pipeline's, from Fastify's not-found handler, set
    // in a scope whose parser reads nothing: the pipeline reads the body, under the route's limits.
    // (A catch-all route would clash with a wildcard route of the app's own, `@fastify/static`'s.)
    void server.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
      scope.setNotFoundHandler(toPipeline);
    });
    this.#dispatch(server);
    this.#ownHook('onReady', async () => {
      await host.prepare();
    });
    this.#ownHook('onClose', () => host.closed());
  }

  /** Hooks of the adapter's own, which do not make every request go through Fastify. */
  #ownHook(name: string, hook: unknown): void {
    (this.#userHooks.addHook as (name: string, hook: unknown) => void).call(this.server, name, hook);
  }

  readonly #userHooks: UserHooks;

  /**
   * From Fastify's not-found handler (and its router's errors) to the pipeline: the headers
   * Fastify's hooks set (a plugin's) are kept, under those of the pipeline's answer.
   */
  readonly #toPipeline = (request: FastifyRequest, reply: FastifyReply): void => {
    reply.hijack();
    const incoming = request.raw;
    handToPipeline(incoming);
    const raw = reply.raw;
    const held = reply.getHeaders();
    for (const name in held) {
      const value = held[name];
      if (value !== undefined && !bodyHeaders.has(name))
        raw.setHeader(name, value as string | string[] | number);
    }
    // The id Fastify gave the request (its hooks logged with it) is the pipeline's too.
    this.#pipeline.answer(incoming, raw, request.id);
  };

  /**
   * Node's requests go straight to the pipeline, unless a route added on `app.server` takes them
   * or the app added a hook on `app.server` that runs for every request (an `onRequest` of a
   * Fastify plugin, say): then Fastify takes every request, and its route for the rest hands them
   * to the pipeline after the hooks. Fastify's own work per request is paid only where it does
   * something (docs/deployment.md, "Fastify: the escape hatch").
   */
  #dispatch(server: FastifyInstance): void {
    const http = server.server;
    const [fastify] = http.listeners('request') as Array<
      (request: IncomingMessage, response: ServerResponse) => void
    >;
    if (fastify === undefined) return;
    http.removeListener('request', fastify);
    const routes = this.#fastifyRoutes;
    const pipeline = this.#pipeline;
    const answer = pipeline.answer;
    http.on('request', (request: IncomingMessage, response: ServerResponse) => {
      if (pipeline.refusesFraming(request, response)) return;
      if (this.#userHooks.every || (routes.any && routes.takesRequest(request))) fastify(request, response);
      else answer(request, response);
    });
  }

  /** The app's procedures are the pipeline's; an app with sockets takes upgrade requests. */
  mount(routes: readonly MountedRoute[]): void {
    // Node destroys upgrade requests no one listens for: only an app with sockets takes them.
    if (!this.#routesUpgrades && routes.some((route) => route.definition.output?.kind === 'socket')) {
      this.#routesUpgrades = true;
      routeUpgrades(this.server.server, this.#host.lifecycle);
    }
  }

  #routesUpgrades = false;

  readonly #fastifyRoutes: FastifyRoutes;

  /**
   * Says, once `app.fetch` is first called, which routes added on `app.server` (Fastify plugins,
   * `app.server.get(…)`) it does not serve: they are Fastify's own.
   */
  warnOfFetch(log: { warn(message: string): void }): void {
    void this.server.ready().then(
      () => {
        const routes = this.#fastifyRoutes.lines;
        if (routes.length > 0)
          log.warn(
            `app.fetch does not serve the routes added on app.server, which are Fastify's (${routes.join(', ')}): add them with app.route() to serve them through app.fetch too (docs/routes.md)`,
          );
      },
      () => undefined,
    );
  }

  /**
   * Tells `observe` of every answer of a route added on `app.server`, once it has left; the
   * pipeline tells of its own.
   */
  observe(observe: (answer: Answer) => void): void {
    this.#ownHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      if (!handedToPipeline(request.raw))
        observe({
          route: request.routeOptions.url === undefined ? undefined : observedRouteOf(request),
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

  /** Fastify's own start-up (its plugins, the app's start-up steps); then the pipeline. */
  async ready(): Promise<void> {
    await this.server.ready();
    await this.#host.pipeline();
  }

  inject(request: InjectOptions | string): Promise<LightMyRequestResponse> {
    return this.ready().then(() => this.server.inject(request));
  }

  /**
   * Listens on Node's http module; resolves to the address and the port bound. `localhost` binds
   * the one address it resolves to first, as Node's server binds it (`proceedjs/node`): given
   * `localhost`, Fastify would bind a second address (IPv6 beside IPv4) with a server of its own,
   * whose requests would miss the dispatch to the pipeline, the connection limit and the count
   * of requests in flight.
   */
  async listen(port: number, host: string): Promise<{ address: string; port: number }> {
    await this.ready();
    const bindTo = host === 'localhost' ? (await lookup(host)).address : host;
    const address = await this.server.listen({ port, host: bindTo, backlog: 4096 });
    const bound = Number(new URL(address).port);
    this.#pipeline.ownHost = hostAndPort(host, bound);
    return { address: host === 'localhost' ? `http://localhost:${bound}` : address, port: bound };
  }

  /** The http server underneath, for what follows its connections. */
  get httpServer(): Server {
    return this.server.server;
  }

  close(timeout: number): Promise<void> {
    return closeGracefully(this.server, this.#host.lifecycle, timeout);
  }
}

/** The route a request of a route added on `app.server` took, as observers see it, made once per route. */
const observedRoutes = new WeakMap<object, { procedure: undefined; path: string }>();
function observedRouteOf(request: FastifyRequest): { procedure: undefined; path: string } {
  const { config, url } = request.routeOptions;
  let route = observedRoutes.get(config);
  if (route === undefined) {
    route = Object.freeze({ procedure: undefined, path: url ?? '' });
    observedRoutes.set(config, route);
  }
  return route;
}

/** The adapter `createApp` gives an app on Node. */
export const fastifyAdapter: AdapterFactory = (host) => new FastifyAdapter(host);
