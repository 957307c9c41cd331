/**
 * The Fastify adapter. It registers one native Fastify route per procedure (no catch-all
 * dispatcher), turns every error into problem+json, answers unknown routes with 404 and known
 * paths with the wrong method with 405 + `Allow`, and owns listening and graceful shutdown.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type InjectOptions,
  type LightMyRequestResponse,
  type RawServerDefault,
} from 'fastify';
import FindMyWay from 'find-my-way';
import { type ErrorCode, ProceedConfigError, ProceedError, toProblem } from '../core/errors.js';
import { compileRoute } from '../core/execute.js';
import { normalizePrefix } from '../core/naming.js';
import type { BaseContext, Collection, RequestInfo } from '../core/procedure.js';
import { planRoutes, type RouteEntry, routeKey } from '../core/routes.js';
import { type LoggerSetting, loggerOptions } from './logger.js';

type MaybePromise<T> = T | Promise<T>;
type Context = BaseContext & Record<string, unknown>;

/** Adds to the context of every request; plugins use it (the auth plugin sets `user`). */
export type ContextResolver = (ctx: BaseContext & Record<string, unknown>) => MaybePromise<void>;

export interface HealthOptions {
  /** Throws or returns false when the app cannot serve (say, the database is unreachable). */
  check?: () => MaybePromise<boolean | undefined>;
}

export interface AppOptions<TCtx extends object> {
  /**
   * Builds the app's part of each request's context (a database handle, services, …). `TCtx`
   * may be the whole context type: `request` is added by Proceed, optional parts (such as the
   * `user` the auth plugin sets) may be left out.
   */
  context?: (request: RequestInfo) => MaybePromise<Omit<TCtx, 'request'>>;
  /** `false` silences logs; `true` or omitted: JSON in production, readable otherwise. */
  logger?: LoggerSetting;
  /** Bodies above this many bytes are refused with 413. Default 1 MiB. */
  bodyLimit?: number;
  /** How long shutdown waits for in-flight requests, in ms. Default 10,000. */
  shutdownTimeout?: number;
  /** Readiness check behind `GET {prefix}/health`. */
  health?: HealthOptions;
  /** Trust `X-Forwarded-*` from a proxy in front (Fastify's `trustProxy`). Default false. */
  trustProxy?: boolean | string | string[];
  /**
   * Show internal error messages in 500 answers. Default off, in every environment: such a
   * message can hold SQL and its parameters (a password hash, say). The log always has it.
   */
  exposeErrors?: boolean;
}

export interface MountOptions {
  /** Default `/api`. */
  prefix?: string;
}

export interface MountedRoute extends RouteEntry {
  readonly prefix: string;
}

/**
 * A problem some routes answer because of a plugin rather than their own procedure (a bad token
 * is refused on every route; rate-limited routes answer 429). The OpenAPI generator documents it.
 */
export interface DeclaredProblem {
  readonly code: ErrorCode;
  /** Routes as the start-up log writes them (`POST /api/auth/login`); absent: every procedure route. */
  readonly routes?: readonly string[];
}

/** A plugin: called once with the app and its options. */
export type Plugin<O> = (app: App, options: O) => MaybePromise<void>;

export interface ListenOptions {
  /** Default 3030. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Close gracefully on SIGTERM and SIGINT, then exit 0. Default true. */
  handleSignals?: boolean;
  /** Log one line per route before listening. Default true (`--workers` logs them once, not per worker). */
  logRoutes?: boolean;
}

/** On every answer: JSON, and never sniffed as anything else. */
const fixedHeaders = {
  'content-type': 'application/json; charset=utf-8',
  'x-content-type-options': 'nosniff',
} as const;

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

function requestIdOf(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && requestIdPattern.test(incoming) ? incoming : randomUUID();
}

function fastifyErrorCode(error: FastifyError): ProceedError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ProceedError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ProceedError('PAYLOAD_TOO_LARGE', 'The request body is larger than the server accepts');
    case 'FST_ERR_BAD_URL':
      return new ProceedError('VALIDATION_FAILED', 'The URL is malformed (bad percent-encoding)');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ProceedError('VALIDATION_FAILED', 'A path parameter is longer than 500 characters');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ProceedError('INVALID_JSON', error.message);
  }
  const status = error.statusCode;
  if (status === undefined || status < 400 || status >= 500) return undefined;
  if (status === 400 && error instanceof SyntaxError) return new ProceedError('INVALID_JSON', error.message);
  if (status === 413) return new ProceedError('PAYLOAD_TOO_LARGE', error.message);
  if (status === 415) return new ProceedError('UNSUPPORTED_MEDIA_TYPE', error.message);
  if (status === 429) return new ProceedError('RATE_LIMITED', error.message);
  if (status === 404) return new ProceedError('ROUTE_NOT_FOUND', error.message);
  return new ProceedError('VALIDATION_FAILED', error.message);
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
  readonly #options: AppOptions<TCtx>;
  readonly #resolvers: ContextResolver[] = [];
  readonly #closers: Array<() => MaybePromise<void>> = [];
  readonly #routes: MountedRoute[] = [];
  readonly #taken = new Map<string, string>();
  readonly #mounts: Array<{ prefix: string; collections: readonly Collection[] }> = [];
  readonly #declaredProblems: DeclaredProblem[] = [];
  readonly #known = FindMyWay();
  readonly #exposeErrors: boolean;
  #healthPrefixes = new Set<string>();
  #signalsInstalled = false;

  constructor(options: AppOptions<TCtx> = {}) {
    this.#options = options;
    this.#exposeErrors = options.exposeErrors ?? false;
    this.server = Fastify<RawServerDefault>({
      ...loggerOptions(options.logger),
      bodyLimit: options.bodyLimit ?? 1024 * 1024,
      genReqId: requestIdOf,
      trustProxy: options.trustProxy ?? false,
      routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
      return503OnClosing: true,
      // Errors the router meets before any route runs (a malformed URL, an over-long parameter).
      frameworkErrors: (error, request, reply) => this.#sendError(error, request, reply),
      forceCloseConnections: 'idle',
    });
    this.server.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) {
        if (this.#known.hasRoute(method as never, route.url)) continue;
        this.#known.on(method as never, route.url, () => undefined);
      }
    });
    // JSON is the only body format; Fastify's default text/plain parser would let text through.
    this.server.removeContentTypeParser('text/plain');
    // Many clients send `Content-Type: application/json` on every request: an empty body with it
    // is no body (a DELETE, a POST /publish), not malformed JSON. Anything else parses as before,
    // prototype-poisoning checks included.
    const parseJson = this.server.getDefaultJsonParser('error', 'error');
    this.server.removeContentTypeParser('application/json');
    this.server.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      if (text === '') done(null, undefined);
      else parseJson(request, text, done);
    });
    this.server.setErrorHandler((error, request, reply) => this.#sendError(error, request, reply));
    this.server.setNotFoundHandler((request, reply) => this.#notFound(request, reply));
    this.server.addHook('onClose', async () => {
      for (const close of this.#closers.reverse()) await close();
    });
  }

  /** Every route mounted so far, in order. */
  get routes(): readonly MountedRoute[] {
    return this.#routes;
  }

  /** Every mount: its prefix and collections (the OpenAPI generator reads these). */
  get mounts(): ReadonlyArray<{ prefix: string; collections: readonly Collection[] }> {
    return this.#mounts;
  }

  /** One line per route, procedures and health checks alike: `GET /api/posts/:id`. */
  routeLines(): string[] {
    const health = [...this.#healthPrefixes].map((prefix) => `GET ${prefix}/health`);
    return [...this.#routes.map((route) => `${route.method} ${route.path}`), ...health];
  }

  /** The shared logger (pino). */
  get log(): FastifyInstance['log'] {
    return this.server.log;
  }

  /**
   * Mounts collections under a prefix, one Fastify route per procedure. Throws at once, naming
   * the procedure, for unroutable names and for routes that collide.
   */
  mount(collections: readonly Collection[], options: MountOptions = {}): this {
    const prefix = normalizePrefix(options.prefix ?? '/api');
    const entries = planRoutes(collections, prefix, this.#taken);
    this.#mounts.push({ prefix, collections });
    if (!this.#healthPrefixes.has(prefix)) {
      this.#healthPrefixes.add(prefix);
      this.#registerHealth(prefix);
    }
    for (const entry of entries) {
      this.#register(entry);
      this.#routes.push({ ...entry, prefix });
    }
    return this;
  }

  /**
   * Registers a plugin (the auth and docs plugins have this shape).
   *
   * @example
   * await app.register(authPlugin, { secret, userLoader });
   */
  async register<O>(plugin: Plugin<O>, options: O): Promise<this> {
    await plugin(this as unknown as App, options);
    return this;
  }

  /**
   * Records that routes answer a problem because of a plugin, for the documentation.
   *
   * @example
   * app.declareProblem('INVALID_TOKEN'); // every procedure route
   * app.declareProblem('RATE_LIMITED', ['POST /api/auth/login']);
   */
  declareProblem(code: ErrorCode, routes?: readonly string[]): this {
    this.#declaredProblems.push(routes === undefined ? { code } : { code, routes: [...routes] });
    return this;
  }

  /** Every problem declared with {@link declareProblem}. */
  get declaredProblems(): readonly DeclaredProblem[] {
    return this.#declaredProblems;
  }

  /** Adds a step that extends every request's context, after the app's own `context`. */
  extendContext(resolver: ContextResolver): this {
    this.#resolvers.push(resolver);
    return this;
  }

  /** Runs when the app closes, last registered first (close a database pool here). */
  onClose(close: () => MaybePromise<void>): this {
    this.#closers.push(close);
    return this;
  }

  /** Waits until every plugin is loaded; `inject` and `listen` call it for you. */
  async ready(): Promise<void> {
    await this.server.ready();
  }

  /** Sends a request without a socket (tests). */
  inject(request: InjectOptions | string): Promise<LightMyRequestResponse> {
    return this.server.inject(request);
  }

  /** Listens, logs one line per route, and (by default) shuts down gracefully on SIGTERM/SIGINT. */
  async listen(options: ListenOptions = {}): Promise<string> {
    await this.server.ready();
    if (options.logRoutes !== false) for (const line of this.routeLines()) this.log.info(line);
    const address = await this.server.listen({
      port: options.port ?? 3030,
      host: options.host ?? '127.0.0.1',
    });
    if (options.handleSignals !== false) this.#installSignals();
    return address;
  }

  /**
   * Stops accepting connections, waits for in-flight requests (at most `shutdownTimeout`), then
   * runs the `onClose` steps.
   */
  async close(): Promise<void> {
    const timeout = this.#options.shutdownTimeout ?? 10_000;
    const timer = setTimeout(() => {
      this.log.warn(`Requests still running after ${timeout} ms; closing their connections`);
      this.server.server.closeAllConnections();
    }, timeout);
    timer.unref();
    try {
      await this.server.close();
    } finally {
      clearTimeout(timer);
    }
  }

  #installSignals(): void {
    if (this.#signalsInstalled) return;
    this.#signalsInstalled = true;
    const stop = (signal: NodeJS.Signals) => {
      this.log.info(`${signal} received: shutting down`);
      this.close().then(
        () => process.exit(0),
        (error: unknown) => {
          this.log.error({ err: error }, 'Shutdown failed');
          process.exit(1);
        },
      );
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  }

  /** Synchronous unless the app's context or a plugin's resolver is: no promise per request otherwise. */
  #context(request: FastifyRequest): Context | Promise<Context> {
    const info: RequestInfo = {
      id: request.id,
      method: request.method,
      url: request.url,
      ip: request.ip,
      headers: request.headers,
      params: request.params as Record<string, string>,
    };
    const made = this.#options.context?.(info);
    if (made instanceof Promise)
      return made.then((value) => this.#resolve({ ...value, request: info } as Context));
    return this.#resolve({ ...made, request: info } as Context);
  }

  #resolve(ctx: Context): Context | Promise<Context> {
    const resolvers = this.#resolvers;
    for (let index = 0; index < resolvers.length; index++) {
      const pending = resolvers[index]?.(ctx);
      if (pending instanceof Promise) return this.#resolveFrom(ctx, pending, index + 1);
    }
    return ctx;
  }

  async #resolveFrom(ctx: Context, pending: Promise<void>, next: number): Promise<Context> {
    await pending;
    const resolvers = this.#resolvers;
    for (let index = next; index < resolvers.length; index++) await resolvers[index]?.(ctx);
    return ctx;
  }

  #register(entry: RouteEntry): void {
    const invoke = compileRoute(entry);
    const headers = { ...entry.definition.headers, ...fixedHeaders };
    this.server.route({
      method: entry.method,
      url: entry.path,
      handler: async (request, reply) => {
        const made = this.#context(request);
        const ctx = made instanceof Promise ? await made : made;
        const result = await invoke({
          ctx,
          params: request.params as Record<string, string>,
          query: request.query as Record<string, unknown> | undefined,
          body: request.body,
        });
        reply.code(result.status).headers(headers).header('x-request-id', request.id);
        if (result.location !== undefined) reply.header('location', result.location);
        return result.body;
      },
    });
  }

  #registerHealth(prefix: string): void {
    const path = `${prefix}/health`;
    const owner = this.#taken.get(routeKey('GET', path));
    if (owner !== undefined)
      throw new ProceedConfigError(`Procedure "${owner}" takes GET ${path}, the health route`);
    this.#taken.set(routeKey('GET', path), 'the health route');
    this.server.get(path, async (_request, reply) => {
      const check = this.#options.health?.check;
      let healthy = true;
      try {
        healthy = check === undefined || (await check()) !== false;
      } catch (error) {
        this.log.warn({ err: error }, 'Health check failed');
        healthy = false;
      }
      if (!healthy) throw new ProceedError('UNAVAILABLE', 'The service is not ready');
      reply.headers(fixedHeaders);
      return '{"status":"ok"}';
    });
  }

  #sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const known =
      error instanceof ProceedError ? error : (fastifyErrorCode(error as FastifyError) ?? (error as Error));
    const problem = toProblem(known, this.#exposeErrors);
    if (problem.unexpected) request.log.error({ err: error }, 'Unexpected error');
    return reply
      .code(problem.status)
      .headers(problem.headers)
      .header('x-request-id', request.id)
      .header('content-type', 'application/problem+json; charset=utf-8')
      .header('x-content-type-options', 'nosniff')
      .send(JSON.stringify(problem.body));
  }

  #notFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const path = request.url.split('?', 1)[0] ?? '/';
    // A route for this very method exists and sent us here (say, a static file that is missing): 404.
    const ownRoute = this.#known.find(request.method as 'GET', path) !== null;
    const allowed = ownRoute
      ? []
      : (['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).filter(
          (method) => method !== request.method && this.#known.find(method, path) !== null,
        );
    if (allowed.length > 0) {
      return this.#sendError(
        new ProceedError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${path}`, {
          headers: { allow: allowed.join(', ') },
        }),
        request,
        reply,
      );
    }
    return this.#sendError(
      new ProceedError('ROUTE_NOT_FOUND', `No route matches ${request.method} ${path}`),
      request,
      reply,
    );
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
