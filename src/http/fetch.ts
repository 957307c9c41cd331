/**
 * `app.fetch(request)`: the app's procedures as a Fetch-API handler, `(Request) => Response`,
 * for Bun, Deno, Cloudflare Workers and anything else that speaks it (docs/deployment.md,
 * "Fetch runtimes"). It serves the same route table with the same rules as the Node server:
 * this module only reads a `Request` and writes a `Response`; the rules live beside it in
 * `src/http/` and `src/core/`.
 */
import { pathTemplate } from '../core/naming.js';
import { ProxyTrust } from './client-address.js';
import type { FetchCore } from './fetch-core.js';
import { Exchange, FetchTracedRequest, type RouteHandler } from './fetch-request.js';
import { appRouteHandler, procedureHandler } from './fetch-routes.js';
import { routeMethods, unmatchedProblem } from './not-found.js';
import type { ObservedRoute } from './observed.js';
import { logOfRequest, problemAnswer } from './problems.js';
import { requestIdFrom } from './request-id.js';
import { Router } from './router.js';
import { runtime } from './runtime.js';
import { type PipelineRequest, responseOf, SentAnswer } from './sent.js';
import type { RequestTrace } from './tracing.js';
import {
  decodes,
  hostRefusal,
  loggedUrl,
  malformedUrl,
  maxParamLength,
  paramTooLong,
  transferCodingRefusal,
} from './url.js';

export type { FetchCore, RequestLogEntry } from './fetch-core.js';

const noCookies: readonly string[] = [];
const clientClosedRequest = 499;
const utf8 = new TextEncoder();

/** The pipeline's neutral handler: what an adapter that writes its own answers calls. */
export type PipelineHandler = (
  request: PipelineRequest,
  argument?: unknown,
) => SentAnswer | Promise<SentAnswer>;

/** What a request's answer is finished with, once its route has answered. */
interface Completion {
  readonly exchange: Exchange;
  route: ObservedRoute | undefined;
  readonly trace: RequestTrace | undefined;
  readonly timed: boolean;
  readonly started: number;
  readonly logged: boolean;
}

/** The app's pipeline, as `app.fetch` (a `Response`) and as the neutral handler of another adapter. */
export interface AppPipeline {
  readonly fetch: (request: Request, argument?: unknown) => Promise<Response>;
  readonly handle: PipelineHandler;
}

/** Builds the pipeline once the app is ready; every request then costs a lookup and the route. */
export function createPipeline(core: FetchCore): AppPipeline {
  const pipeline = new FetchPipeline(core);
  const { tracing } = core;
  const handle: PipelineHandler =
    tracing === undefined
      ? (request, argument) => pipeline.handle(request, argument, undefined)
      : (request, argument) => {
          const trace = tracing.begin(new FetchTracedRequest(request));
          return trace.run(() => pipeline.handle(request, argument, trace));
        };
  const fetch = (request: Request, argument?: unknown): Promise<Response> => {
    const handled = handle(request, argument);
    return handled instanceof Promise ? handled.then(responseOf) : Promise.resolve(responseOf(handled));
  };
  return { handle, fetch };
}

/** The route table of `app.fetch` and what every request goes through around its route. */
class FetchPipeline {
  readonly #core: FetchCore;
  readonly #proxy: ProxyTrust;
  // Parameters of any length match here, so that one too long is a 400 (as on Node), not a 404.
  readonly #router = new Router<RouteHandler>();

  constructor(core: FetchCore) {
    this.#core = core;
    this.#proxy = new ProxyTrust(core.trustProxy);
    for (const route of core.routes)
      this.#router.on(
        route.method === 'GET' ? ['GET', 'HEAD'] : route.method,
        route.path,
        procedureHandler(core, route),
      );
    for (const route of core.appRoutes)
      this.#router.on(
        route.method === 'GET' ? ['GET', 'HEAD'] : route.method,
        route.path,
        appRouteHandler(core, route),
      );
  }

  /** The id an adapter gave the request already (Fastify's), or the pipeline's rule for one. */
  #requestIdOf(request: PipelineRequest): string {
    if (request.givenId !== undefined) return request.givenId;
    if (!this.#core.requestIds) return this.#core.newRequestId();
    return requestIdFrom(request.headers.get('x-request-id'), this.#core.newRequestId);
  }

  #problemResponse(error: unknown, exchange: Exchange, id: string): { response: SentAnswer; code: string } {
    const core = this.#core;
    const problem = problemAnswer(error, {
      exposeErrors: core.exposeErrors,
      log: logOfRequest(core.log, id),
    });
    const headers: Record<string, string> = { ...exchange.limitHeaders, ...problem.headers };
    if (exchange.connection === 'close') headers.connection = 'close';
    // The rest of the body is read: a client still writing it reads the answer, then goes on.
    else if (exchange.connection === 'keep') delete headers.connection;
    // Cloudflare's edge owns the connection; a Worker's Connection header only confuses a proxy.
    if (!runtime.namesConnections) delete headers.connection;
    if (core.requestIds) headers['x-request-id'] = id;
    const response = new SentAnswer(problem.status, headers, noCookies, problem.body);
    return { response, code: problem.code };
  }

  /** Whether `method` is served on `path`: by a route of the app's, or of the server's own. */
  #takes(request: PipelineRequest, method: string, path: string): boolean {
    return this.#router.find(method, path) !== null || request.serverTakes?.(method, path) === true;
  }

  /** The route's handler for a request (a CORS preflight's own), or the problem of none. */
  #routed(exchange: Exchange, request: PipelineRequest): RouteHandler {
    const { method, path } = exchange;
    const core = this.#core;
    const router = this.#router;
    const preflight =
      core.cors !== undefined && method === 'OPTIONS' && decodes(path)
        ? core.cors.preflight(
            request.headers.get('origin'),
            request.headers.get('access-control-request-method'),
            routeMethods.filter((each) => this.#takes(request, each, path)),
          )
        : undefined;
    if (preflight !== undefined)
      return {
        observed: { procedure: undefined, path },
        serve: () => new SentAnswer(204, preflight, noCookies, null),
        preflight: true,
      };
    const found = router.find(method, path);
    if (found === null) {
      if (!decodes(path)) throw malformedUrl();
      // A route of the server's takes this very method and sent it here (a file that is missing): 404.
      const own = request.serverTakes?.(method, path) === true;
      throw unmatchedProblem(method, path, (each) => !own && this.#takes(request, each, path));
    }
    const { params } = found;
    for (const name in params) if ((params[name]?.length ?? 0) > maxParamLength) throw paramTooLong(name);
    exchange.params = params;
    return found.handler;
  }

  /** What every answer gets on its way out: the connection's fate, CORS, a HEAD's empty body. */
  #finished(exchange: Exchange, response: SentAnswer, problem: string | undefined): SentAnswer {
    // A WebSocket's handshake is the runtime's own answer, left as it is (Deno refuses another
    // once a header is set on it); no CORS applies to a socket.
    if (response.handshake !== undefined) return response;
    const { request, method } = exchange;
    const core = this.#core;
    const { headers } = response;
    // An upload body left unread closes its connection too (Cloudflare's edge owns it on Workers).
    // So does every answer while the app drains, those of requests that were at work when it
    // began included: the client's next request goes, through the load balancer, to another
    // instance. (Once it closes, an open connection stays to be told 503 with Retry-After.)
    if (
      exchange.arrivedDraining ||
      (runtime.namesConnections &&
        ((!core.serving() && !core.closing()) || (exchange.connection === 'close' && problem === undefined)))
    )
      headers.connection = 'close';
    if (core.cors !== undefined) {
      const origin = request.headers.get('origin');
      const cors = core.cors.answerHeaders(method, origin, headers.vary ?? null);
      for (const name in cors) headers[name] = cors[name] as string;
    }
    if (method === 'HEAD') {
      const { body } = response;
      // The length a GET would send, as Node's server says it (RFC 9110 9.3.2).
      if (typeof body === 'string') headers['content-length'] ??= String(utf8.encode(body).byteLength);
      else if (body instanceof Uint8Array) headers['content-length'] ??= String(body.byteLength);
      // The body a GET would send is let go (a stream closes its file or its source).
      else if (body instanceof ReadableStream) void body.cancel().catch(() => undefined);
      response.body = null;
    }
    return response;
  }

  /** Tells the observers and the request log of an answer, when either listens. */
  #observed(
    exchange: Exchange,
    route: ObservedRoute | undefined,
    status: number,
    problem: string | undefined,
    started: number,
    logged: boolean,
  ): void {
    const milliseconds = performance.now() - started;
    const { method, id } = exchange;
    // A client that left before its answer got none: 499 (nginx's "client closed request") in the
    // metrics and the log line, where the status the app made would count it a success. A 5xx
    // stays: the server failed whether or not anyone waited (an outage must show as one).
    const left = status >= 200 && leftBefore(exchange.request);
    if (left && status < 500) status = clientClosedRequest;
    this.#core.observe?.({ route, method, status, problem, seconds: milliseconds / 1000 });
    if (logged)
      this.#core.requestLog?.write({
        id,
        method,
        url: loggedUrl(`${exchange.path}${exchange.search}`),
        ...exchange.lineFields,
        ip: exchange.ip,
        status,
        milliseconds,
        completed: !left,
      });
  }

  /**
   * A request's answer: synchronous while its route is (a read whose handler answers at once),
   * else one promise of the route's own, continued with `then` (no async frame of its own).
   */
  handle(
    request: PipelineRequest,
    argument: unknown,
    trace: RequestTrace | undefined,
  ): SentAnswer | Promise<SentAnswer> {
    const core = this.#core;
    // The line's fields (the client's address, the host) are worked out only when it is written.
    const logged = core.requestLog?.enabled() === true;
    const timed = core.observe !== undefined || logged;
    const started = timed ? performance.now() : 0;
    const id = this.#requestIdOf(request);
    const exchange = new Exchange(request, id, this.#proxy);
    exchange.trace = trace;
    if (trace?.recording === true) trace.identified(id);
    exchange.argument = argument;
    exchange.arrivedDraining = !core.serving();
    // At debug, as on the Fastify adapter: an operator sees a request the moment it arrives.
    if (core.requestLog?.arrivals() === true)
      core.requestLog.arrived({
        id,
        method: exchange.method,
        url: loggedUrl(`${exchange.path}${exchange.search}`),
        ...exchange.lineFields,
        ip: exchange.ip,
      });
    const done: Completion = { exchange, route: undefined, trace, timed, started, logged };
    let served: SentAnswer | Promise<SentAnswer>;
    try {
      const hostRefused = hostRefusal(request.headers.get('host'));
      if (hostRefused !== undefined) throw hostRefused;
      const codingRefused = transferCodingRefusal(request.headers.get('transfer-encoding'));
      if (codingRefused !== undefined) {
        // The body's framing is in doubt: nothing more is read from this connection.
        exchange.connection = 'close';
        throw codingRefused;
      }
      const handler = this.#routed(exchange, request);
      const route = handler.preflight === true ? undefined : handler.observed;
      done.route = route;
      if (trace !== undefined && route !== undefined) trace.routed(pathTemplate(route.path), route.procedure);
      served = handler.serve(exchange);
    } catch (error) {
      return this.#failed(done, error);
    }
    return served instanceof Promise
      ? served.then(
          (response) => this.#completed(done, response, undefined),
          (error: unknown) => this.#failed(done, error),
        )
      : this.#completed(done, served, undefined);
  }

  #failed(done: Completion, error: unknown): SentAnswer {
    const { response, code } = this.#problemResponse(error, done.exchange, done.exchange.id);
    if (response.status >= 500) done.trace?.failed(error);
    return this.#completed(done, response, code);
  }

  #completed(done: Completion, answer: SentAnswer, problem: string | undefined): SentAnswer {
    const { exchange, trace } = done;
    const response = this.#finished(exchange, answer, problem);
    const status = response.sentStatus;
    if (done.timed) this.#observed(exchange, done.route, status, problem, done.started, done.logged);
    // A client that left got no answer: its span has no status (docs/observability.md), as the
    // log and the metrics count it 499 rather than what the app made.
    if (trace?.recording === true && !exchange.streaming)
      trace.end(status >= 200 && status < 500 && leftBefore(exchange.request) ? undefined : status);
    return response;
  }
}

/**
 * Whether the client left before its answer was made: as Node's server tells it, else as a Fetch
 * runtime does, by aborting the request's signal (Bun, a caller of `app.fetch` that gave up).
 * Not asked of a 101: Deno aborts an upgraded request's signal, its client still there.
 */
function leftBefore(request: PipelineRequest): boolean {
  return request.clientLeft ?? request.signal?.aborted === true;
}
