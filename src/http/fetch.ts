/**
 * `app.fetch(request)`: the app's procedures as a Fetch-API handler, `(Request) => Response`,
 * for Bun, Deno, Cloudflare Workers and anything else that speaks it (docs/deployment.md,
 * "Fetch runtimes"). It serves the same route table with the same rules as the Node server:
 * this module only reads a `Request` and writes a `Response`; the rules live beside it in
 * `src/http/` and `src/core/`.
 */
import { ProceedError } from '../core/errors.js';
import type { ByteRange, FileAnswer } from '../core/files.js';
import type { IdempotencySettings } from '../core/idempotency.js';
import { pathTemplate } from '../core/naming.js';
import type { BaseContext, RequestInfo } from '../core/request-context.js';
import type { MountedRoute } from '../core/route-table.js';
import { type UploadOptions, uploadPlanOf } from '../core/uploads.js';
import { type AppRoute, type RouteRequest as AppRouteRequest, routeAnswerHeaders } from './app-routes.js';
import { clientAddressResolver, peerAddressOf, type TrustProxy } from './client-address.js';
import type { CodingChoice } from './compression.js';
import { type CookieSigner, RequestCookies } from './cookies.js';
import type { CorsPolicy } from './cors.js';
import { webBody } from './files.js';
import { forbiddenKeyOf, isJsonBody, notJsonBody } from './json.js';
import { lingeringBytes, lingeringMilliseconds, lingersOn, readOnAndDrop } from './lingering.js';
import { routeMethods, unmatchedProblem } from './not-found.js';
import type { Answer, ObservedRoute } from './observed.js';
import { closingRefusal, problemAnswer } from './problems.js';
import { type AnsweredRequest, type ProcedureAnswer, procedureRoute } from './procedure-answer.js';
import { pulledStream } from './pulled-stream.js';
import type { RateLimitHeaders, RateLimits } from './rate-limit.js';
import { requestIdFrom } from './request-id.js';
import { Router } from './router.js';
import { runtime } from './runtime.js';
import type { Spools } from './spool.js';
import { framesInTrace, type RequestTrace, type RequestTracing, type TracedRequest } from './tracing.js';
import { disposingAfter, UploadBody, uploadRefusal, webBodySource } from './uploads.js';
import { decodes, malformedUrl, maxParamLength, paramTooLong } from './url.js';

type MaybePromise<T> = T | Promise<T>;
type HeaderRecord = Record<string, string | string[] | undefined>;

/** What a fetch handler needs of an app: its routes and the settings of each rule. */
export interface FetchCore {
  readonly routes: readonly MountedRoute[];
  /** The app's routes beside its procedures: health, the docs UI, the user's own. */
  readonly appRoutes: readonly AppRoute[];
  buildContext(request: RequestInfo): MaybePromise<BaseContext>;
  readonly userSource: () => string | undefined;
  readonly entityTags: boolean;
  readonly requestIds: boolean;
  readonly exposeErrors: boolean;
  readonly bodyLimit: number;
  /** Bodies of `above` bytes or more are compressed, by `encode`; undefined: never. */
  readonly compression:
    | {
        readonly above: number;
        readonly codings: CodingChoice<string>;
        encode(body: string, coding: string, size: number): Uint8Array | Promise<Uint8Array>;
      }
    | undefined;
  readonly cookieSigner: CookieSigner;
  readonly csrfTrusted: ReadonlySet<string> | undefined;
  /** The app's upload limits, and where large files wait (undefined on Workers: in memory). */
  readonly uploads: UploadOptions | undefined;
  readonly spools: Spools | undefined;
  readonly idempotency: () => { settings: IdempotencySettings; creates: boolean } | undefined;
  /** Traces each request; undefined: nothing is traced (docs/observability.md). */
  readonly tracing: RequestTracing | undefined;
  /** Calls the listener when the app begins closing (open event streams end then); returns its removal. */
  readonly onClosing: (listener: () => void) => () => void;
  /** Ready for traffic: not draining or closing (readiness answers 503 otherwise). */
  readonly serving: () => boolean;
  /** Closing: a request that arrives now is refused with 503 (draining still serves it). */
  readonly closing: () => boolean;
  readonly rateLimits: RateLimits;
  /** The app's CORS rules; undefined: no CORS. */
  readonly cors: CorsPolicy | undefined;
  readonly trustProxy: TrustProxy;
  readonly entityTag: (body: string, version?: string) => string;
  /** The opaque part of a file's tag, from its bytes in memory (src/http/files.ts). */
  readonly bytesTag: (bytes: Uint8Array) => string;
  readonly matchingTag: (ifNoneMatch: string | undefined, tag: string) => string | undefined;
  readonly ifMatchHolds: (ifMatch: string, tag: string) => boolean;
  readonly newRequestId: () => string;
  readonly log: { error(object: object, message: string): void; warn(object: object, message: string): void };
  readonly observe: ((answer: Answer) => void) | undefined;
  /** One line per request at `info`, as on Node; undefined when the app logs nothing. */
  readonly requestLog:
    | {
        /** Whether a line would be written now (the level may change while the app runs). */
        enabled(): boolean;
        write(entry: RequestLogEntry): void;
      }
    | undefined;
}

/** What the request log writes of a request. */
export interface RequestLogEntry {
  id: string;
  method: string;
  url: string;
  host: string | undefined;
  ip: string;
  status: number;
  milliseconds: number;
}

/**
 * One request on its way through: what the handler reads, and headers any answer carries. The
 * client's address and the parsed URL are worked out only when something asks for them.
 */
class Exchange {
  readonly request: Request;
  readonly id: string;
  /** The path, as the runtime normalized it, and the query string with its `?` (or ''). */
  readonly path: string;
  readonly search: string;
  params: Record<string, string | undefined> = {};
  /** The request's trace, when the app traces. */
  trace: RequestTrace | undefined;
  /** Its answer streams: the trace ends with the stream, not with the headers. */
  streaming = false;
  /** The rate-limit headers, on the answer whatever it is (as on Node). */
  limitHeaders: RateLimitHeaders | undefined;
  /**
   * For a refused upload: `close` when its body is left unread (the answer closes the
   * connection), `keep` when the rest is read and dropped (the connection may stay open).
   */
  connection: 'close' | 'keep' | undefined;
  readonly #address: () => string;
  #ip: string | undefined;
  #url: URL | undefined;

  constructor(request: Request, id: string, address: () => string) {
    this.request = request;
    this.id = id;
    this.#address = address;
    const { url } = request;
    const start = pathStart(url);
    const query = start === -1 ? -1 : url.indexOf('?', start);
    this.path = start === -1 ? '/' : query === -1 ? url.slice(start) : url.slice(start, query);
    this.search = query === -1 ? '' : url.slice(query);
  }

  get ip(): string {
    this.#ip ??= this.#address();
    return this.#ip;
  }

  get url(): URL {
    this.#url ??= new URL(this.request.url);
    return this.#url;
  }
}

interface RouteHandler {
  /** The same object for every answer of the route, as observers expect. */
  observed: ObservedRoute;
  serve(exchange: Exchange): Promise<Response>;
}

/** A request as the core sees it, read from a Fetch `Request`. */
class FetchRequestInfo implements RequestInfo {
  readonly id: string;
  readonly method: string;
  readonly url: string;
  readonly headers: HeaderRecord;
  readonly #exchange: Exchange;
  readonly params: Readonly<Record<string, string>>;
  readonly #signer: CookieSigner;
  #cookies: RequestCookies | undefined;

  constructor(
    exchange: Exchange,
    method: string,
    headers: HeaderRecord,
    params: Record<string, string>,
    signer: CookieSigner,
  ) {
    this.id = exchange.id;
    this.method = method;
    this.url = `${exchange.path}${exchange.search}`;
    this.#exchange = exchange;
    this.headers = headers;
    this.params = params;
    this.#signer = signer;
  }

  get ip(): string {
    return this.#exchange.ip;
  }

  cookie(name: string, options?: { signed?: boolean }): string | undefined {
    this.#cookies ??= new RequestCookies(this.headers.cookie, this.#signer);
    return this.#cookies.get(name, options);
  }
}

/** Headers as Node gives them: lower-case names, a repeated one joined with ", ". */
function headerRecord(headers: Headers): HeaderRecord {
  const record: HeaderRecord = {};
  headers.forEach((value, name) => {
    record[name] = value;
  });
  return record;
}

/** The query string as Fastify parses it: a repeated key becomes an array. */
function queryRecord(search: string): Record<string, string | string[]> {
  // No prototype: `?constructor=a` is a key like any other.
  const query: Record<string, string | string[]> = Object.create(null);
  if (search === '' || search === '?') return query;
  for (const [key, value] of new URLSearchParams(search)) {
    const previous = query[key];
    if (previous === undefined) query[key] = value;
    else if (Array.isArray(previous)) previous.push(value);
    else query[key] = [previous, value];
  }
  return query;
}

/** The body, read up to the limit: 413 as soon as it passes it, whatever `Content-Length` said. */
async function readBytes(request: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > limit) {
    // Read on and dropped before the answer, so a client still sending it reads the 413, and a
    // runtime that breaks a connection answered mid-body (workerd) is not given one
    // (src/http/lingering.ts).
    const bytes = lingeringBytes(limit);
    if (request.body !== null && lingersOn(request.headers.get('content-length'), bytes))
      await readOnAndDrop(request.body.getReader(), bytes, lingeringMilliseconds);
    throw tooLarge();
  }
  try {
    // A declared length frames the body: the runtime reads exactly that much, natively, without
    // the stream a bridge such as @hono/node-server builds only when `body` is asked for.
    if (declared >= 0 && !request.headers.has('transfer-encoding')) {
      const bytes = new Uint8Array(await request.arrayBuffer());
      // A Request built in-process is not held to its Content-Length by any wire.
      if (bytes.byteLength > limit) throw tooLarge();
      return bytes;
    }
    return await readStream(request, limit);
  } catch (error) {
    if (error instanceof ProceedError) throw error;
    // The client went away, or sent a body its framing cannot carry.
    throw new ProceedError('BAD_REQUEST', 'The request body could not be read');
  }
}

/** A body of unknown length, read up to the limit. */
async function readStream(request: Request, limit: number): Promise<Uint8Array> {
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await readOnAndDrop(reader, lingeringBytes(limit) - size, lingeringMilliseconds);
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

const tooLarge = () =>
  new ProceedError('PAYLOAD_TOO_LARGE', 'The request body is larger than the server accepts');

/** A JSON body: undefined when empty; 400 when malformed or holding a forbidden key. */
function parseJson(text: string): unknown {
  if (text === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ProceedError('INVALID_JSON', `Body is not valid JSON: ${(error as Error).message}`);
  }
  const refused = forbiddenKeyOf(parsed);
  if (refused !== undefined) throw refused;
  return parsed;
}

/** Whether a request carries a body: said by its headers, else by the runtime. */
function sendsBody(headers: HeaderRecord, request: Request): boolean {
  const length = headers['content-length'];
  if (length !== undefined) return length !== '0';
  return headers['transfer-encoding'] !== undefined || request.body !== null;
}

/** Builds the handler once the app is ready; every request then costs a lookup and the route. */
export function createFetchHandler(
  core: FetchCore,
): (request: Request, argument?: unknown) => Promise<Response> {
  const clientAddress = clientAddressResolver(core.trustProxy);
  // Parameters of any length match here, so that one too long is a 400 (as on Node), not a 404.
  const router = new Router<RouteHandler>();
  let count = 0;
  const requestIdOf = (headers: Headers): string => {
    if (!core.requestIds) return String(++count);
    return requestIdFrom(headers.get('x-request-id'), core.newRequestId);
  };

  const problemResponse = (
    error: unknown,
    id: string,
    head: boolean,
    limitHeaders: RateLimitHeaders | undefined,
    connection: 'close' | 'keep' | undefined,
  ): { response: Response; code: string } => {
    const problem = problemAnswer(error, { exposeErrors: core.exposeErrors, log: core.log });
    const headers: Record<string, string> = { ...limitHeaders, ...problem.headers };
    if (connection === 'close') headers.connection = 'close';
    // The rest of the body is read: a client still writing it reads the answer, then goes on.
    else if (connection === 'keep') delete headers.connection;
    // Cloudflare's edge owns the connection; a Worker's Connection header only confuses a proxy.
    if (!runtime.namesConnections) delete headers.connection;
    if (core.requestIds) headers['x-request-id'] = id;
    const response = new Response(head ? null : problem.body, { status: problem.status, headers });
    return { response, code: problem.code };
  };

  for (const route of core.routes) {
    const handler = procedureHandler(core, route);
    router.on(route.method === 'GET' ? ['GET', 'HEAD'] : route.method, route.path, handler);
  }
  for (const route of core.appRoutes)
    router.on(
      route.method === 'GET' ? ['GET', 'HEAD'] : route.method,
      route.path,
      appRouteHandler(core, route),
    );

  const unmatched = (method: string, path: string): ProceedError =>
    unmatchedProblem(method, path, (each) => router.find(each, path) !== null);

  const handle = async (
    request: Request,
    argument: unknown,
    trace: RequestTrace | undefined,
  ): Promise<Response> => {
    // The line's fields (the client's address, the host) are worked out only when it is written.
    const logged = core.requestLog?.enabled() === true;
    const timed = core.observe !== undefined || logged;
    const started = timed ? performance.now() : 0;
    const id = requestIdOf(request.headers);
    const head = request.method === 'HEAD';
    let response: Response;
    let route: ObservedRoute | undefined;
    let problem: string | undefined;
    const exchange = new Exchange(request, id, () =>
      clientAddress(peerAddressOf(request, argument), request.headers.get('x-forwarded-for')),
    );
    exchange.trace = trace;
    try {
      const { path } = exchange;
      const preflight =
        core.cors !== undefined && request.method === 'OPTIONS' && decodes(path)
          ? core.cors.preflight(
              request.headers.get('origin'),
              request.headers.get('access-control-request-method'),
              routeMethods.filter((each) => router.find(each, path) !== null),
            )
          : undefined;
      const found = preflight === undefined ? router.find(request.method, path) : null;
      let handler: RouteHandler;
      if (preflight !== undefined) {
        handler = {
          observed: { procedure: undefined, path },
          serve: async () => new Response(null, { status: 204, headers: preflight }),
        };
      } else if (found !== null) {
        for (const value of Object.values(found.params))
          if (value !== undefined && value.length > maxParamLength) throw paramTooLong();
        handler = found.handler;
        exchange.params = found.params;
      } else {
        throw decodes(path) ? unmatched(request.method, path) : malformedUrl();
      }
      route = preflight !== undefined ? undefined : handler.observed;
      if (trace !== undefined && route !== undefined)
        trace.routed(pathTemplate(route.path), route.procedure, id);
      response = await handler.serve(exchange);
    } catch (error) {
      ({ response, code: problem } = problemResponse(
        error,
        id,
        head,
        exchange.limitHeaders,
        exchange.connection,
      ));
      if (response.status >= 500) trace?.failed(error);
    }
    // Draining: keep-alive clients reconnect, through the load balancer, to another instance.
    // An upload body left unread closes its connection too (Cloudflare's edge owns it on Workers).
    if (
      !core.serving() ||
      (exchange.connection === 'close' && runtime.namesConnections && problem === undefined)
    )
      response.headers.set('connection', 'close');
    if (core.cors !== undefined) {
      // Every answer depends on Origin: caches must keep them apart.
      const vary = response.headers.get('vary');
      response.headers.set('vary', vary === null ? 'Origin' : `Origin, ${vary}`);
      // A preflight carries its own; any other OPTIONS is a problem without them, as on Node.
      if (request.method !== 'OPTIONS') {
        const cors = core.cors.answerHeaders(request.headers.get('origin'));
        if (cors !== undefined)
          for (const [name, value] of Object.entries(cors)) response.headers.set(name, value);
      }
    }
    if (head && response.body !== null) response = new Response(null, response);
    if (timed) {
      const milliseconds = performance.now() - started;
      core.observe?.({
        route,
        method: request.method,
        status: response.status,
        problem,
        seconds: milliseconds / 1000,
      });
      if (logged)
        core.requestLog?.write({
          id,
          method: request.method,
          url: `${exchange.path}${exchange.search}`,
          host: exchange.url.host,
          ip: exchange.ip,
          status: response.status,
          milliseconds,
        });
    }
    if (trace?.recording === true && !exchange.streaming) trace.end(response.status);
    return response;
  };

  const { tracing } = core;
  if (tracing === undefined) return (request, argument) => handle(request, argument, undefined);
  return (request, argument) => {
    const trace = tracing.begin(new FetchTracedRequest(request));
    return trace.run(() => handle(request, argument, trace));
  };
}

/**
 * Where the path of a `Request`'s URL starts (-1: it has none). The URL is already parsed and
 * serialized: the path starts at the first '/' after the authority, its query at the first '?'
 * after that (a fragment is never part of it).
 */
function pathStart(url: string): number {
  return url.indexOf('/', url.indexOf('//') + 2);
}

/** A Fetch request as the tracer reads it. */
class FetchTracedRequest implements TracedRequest {
  readonly method: string;
  readonly path: string;
  readonly scheme: string;
  readonly #headers: Headers;

  constructor(request: Request) {
    this.method = request.method;
    this.#headers = request.headers;
    const { url } = request;
    const start = pathStart(url);
    const query = start === -1 ? -1 : url.indexOf('?', start);
    this.path = start === -1 ? '/' : query === -1 ? url.slice(start) : url.slice(start, query);
    this.scheme = request.url.startsWith('https:') ? 'https' : 'http';
  }

  header(name: string): string | undefined {
    return this.#headers.get(name) ?? undefined;
  }
}

/** A route of the app beside its procedures, served as Fastify serves it on Node. */
function appRouteHandler(core: FetchCore, route: AppRoute): RouteHandler {
  const limit = route.bodyLimit ?? core.bodyLimit;
  return {
    observed: { procedure: undefined, path: route.path },
    async serve(exchange) {
      const answered = route.handler(new FetchRouteRequest(exchange, limit));
      const answer = answered instanceof Promise ? await answered : answered;
      const headers = routeAnswerHeaders(answer);
      if (core.requestIds) headers['x-request-id'] = exchange.id;
      return new Response((answer.body ?? null) as BodyInit | null, {
        status: answer.status ?? 200,
        headers,
      });
    },
  };
}

/** A request as a route's handler reads it, over a Fetch `Request`. */
class FetchRouteRequest implements AppRouteRequest {
  readonly method: string;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly id: string;
  readonly #exchange: Exchange;
  readonly #limit: number;
  #query: URLSearchParams | undefined;

  constructor(exchange: Exchange, limit: number) {
    this.#exchange = exchange;
    this.#limit = limit;
    this.method = exchange.request.method;
    this.path = exchange.path;
    this.params = exchange.params as Record<string, string>;
    this.headers = headerRecord(exchange.request.headers) as Record<string, string | undefined>;
    this.id = exchange.id;
  }

  get query(): URLSearchParams {
    this.#query ??= new URLSearchParams(this.#exchange.search);
    return this.#query;
  }

  get ip(): string {
    return this.#exchange.ip;
  }

  body(): Promise<Uint8Array> {
    const { request } = this.#exchange;
    if (request.method === 'GET' || request.method === 'HEAD') return Promise.resolve(new Uint8Array(0));
    return readBytes(request, this.#limit);
  }
}

/** One procedure's route: the same steps, in the same order, as its Node route. */
function procedureHandler(core: FetchCore, route: MountedRoute): RouteHandler {
  const procedure = procedureRoute(route, core);
  // Any body sent to a write is read and checked, as on Node, even where the input ignores it.
  const readsBody = route.method !== 'GET';
  const limiter = core.rateLimits.limiterFor(route);
  const upload = uploadPlanOf(route, core.uploads);

  return {
    observed: { procedure: `${route.collection}.${route.name}`, path: route.path },
    async serve(exchange) {
      const { request } = exchange;
      if (core.closing()) throw closingRefusal();
      // Counted before anything else of the route runs, as on Node: a flood costs a lookup.
      if (limiter !== undefined) {
        const checked = limiter.check(exchange.ip);
        exchange.limitHeaders = checked instanceof Promise ? await checked : checked;
      }
      const headers = headerRecord(request.headers);
      const params = exchange.params as Record<string, string>;
      let body: unknown;
      let uploaded: UploadBody | undefined;
      if (upload !== undefined) {
        const source = webBodySource(request, lingeringBytes(upload.limits.total));
        const refusal = uploadRefusal(upload, headers);
        if (refusal !== undefined) {
          exchange.connection = source.readsRest ? 'keep' : 'close';
          await source.cancel();
          throw refusal;
        }
        // Read when the call reaches its input, after the guards (src/core/uploads.ts).
        uploaded = new UploadBody(upload, headers, source, core.spools);
        body = uploaded;
      } else if (readsBody && (headers['content-type'] !== undefined || sendsBody(headers, request))) {
        if (!isJsonBody(headers)) throw notJsonBody();
        let text: string;
        try {
          text = new TextDecoder('utf-8', { fatal: true }).decode(await readBytes(request, core.bodyLimit));
        } catch (error) {
          if (error instanceof ProceedError) throw error;
          throw new ProceedError('INVALID_JSON', 'Body is not valid UTF-8');
        }
        body = parseJson(text);
      }
      let answer: ProcedureAnswer;
      try {
        // After the body, as on Node: a malformed body is a 400 whoever sent it.
        procedure.refuseCrossSite(request.method, headers, () => exchange.url.origin);
        const made = core.buildContext(
          new FetchRequestInfo(exchange, request.method, headers, params, core.cookieSigner),
        );
        const ctx = made instanceof Promise ? await made : made;
        const call = {
          ctx: ctx as BaseContext & { user?: unknown },
          params,
          query: queryRecord(exchange.search),
          body,
          ifMatch: headers['if-match'] as string | undefined,
          trace: exchange.trace?.steps,
        };
        const ran = procedure.call.run(call, headers['idempotency-key']);
        const result = ran instanceof Promise ? await ran : ran;
        // An answer made without the input (a step that answered itself) left the body unread.
        if (uploaded !== undefined && !uploaded.started)
          exchange.connection = uploaded.readsRest ? 'keep' : 'close';
        const answered = procedure.answer(new FetchAnsweredRequest(exchange, headers, core.log), result);
        answer = answered instanceof Promise ? await answered : answered;
      } catch (error) {
        // A body left unread closes the connection; one read to its end (and dropped) need not.
        if (uploaded !== undefined) {
          exchange.connection = uploaded.readsRest ? 'keep' : 'close';
          await uploaded.dispose();
        }
        throw error;
      }
      if (exchange.limitHeaders !== undefined) Object.assign(answer.headers, exchange.limitHeaders);
      const init = { status: answer.status, headers: withCookies(answer.headers, answer.cookies) };
      const sent = answer.body;
      // The files of an upload go once the answer is made, or, when it sends a file (which may
      // be one of them), once that is sent or abandoned.
      if (uploaded !== undefined && sent.kind !== 'file') await uploaded.dispose();
      switch (sent.kind) {
        case 'none':
        case 'head':
          return new Response(null, init);
        case 'text':
          return new Response(sent.text, init);
        case 'bytes':
          return new Response(sent.bytes as BodyInit, init);
        case 'events':
          return new Response(eventBody(exchange, sent.frames, sent.abort), init);
        case 'file':
          return new Response(await fileBody(sent.file, sent.range, uploaded), init);
      }
    },
  };
}

/** A request as the answer reads it, over a Fetch `Request`. */
class FetchAnsweredRequest implements AnsweredRequest {
  readonly method: string;
  readonly id: string;
  readonly log: FetchCore['log'];
  readonly #headers: HeaderRecord;
  readonly #signal: AbortSignal | undefined;

  constructor(exchange: Exchange, headers: HeaderRecord, log: FetchCore['log']) {
    this.method = exchange.request.method;
    this.id = exchange.id;
    this.log = log;
    this.#headers = headers;
    this.#signal = exchange.request.signal;
  }

  header(name: string): string | undefined {
    return this.#headers[name] as string | undefined;
  }

  /** Runtimes abort the request's signal when its client leaves. */
  onGone(listener: () => void): void {
    this.#signal?.addEventListener('abort', listener, { once: true });
  }
}

/** An event stream's frames, pulled as the client reads; the trace ends with the stream. */
function eventBody(
  exchange: Exchange,
  frames: AsyncGenerator<string, void, undefined>,
  abort: () => void,
): ReadableStream<Uint8Array> {
  const { trace } = exchange;
  if (trace === undefined) return pulledStream(frames, abort);
  const recording = trace.recording;
  exchange.streaming = recording;
  return pulledStream(framesInTrace(frames, trace, recording ? () => trace.end(200) : undefined), () => {
    abort();
    // Cancelled before its first read, a generator never runs its finally.
    if (recording) trace.end(200);
  });
}

/**
 * A file's bytes as the runtime sends them: a `Blob` where a stream would lose its length (Bun);
 * an upload's own file is streamed and the upload's files go once it is sent or abandoned.
 */
async function fileBody(
  file: FileAnswer,
  range: ByteRange | undefined,
  uploaded: UploadBody | undefined,
): Promise<BodyInit> {
  const { blob } = file.source;
  if (uploaded === undefined)
    return !runtime.streamsKeepLength && blob !== undefined
      ? blob(range)
      : (webBody(file.source.read(range)) as BodyInit);
  // Cancelled before its first read, a generator never runs its finally: onCancel disposes.
  return pulledStream(
    disposingAfter(chunksOf(file.source.read(range)), () => uploaded.dispose()),
    () => void uploaded.dispose().catch(() => undefined),
  );
}

/** Bytes in memory, a stream or an iterable, as an iterable. */
function chunksOf(
  bytes: Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
): AsyncIterable<Uint8Array> {
  if (bytes instanceof Uint8Array)
    return (async function* () {
      yield bytes;
    })();
  return bytes as AsyncIterable<Uint8Array>;
}

/** The headers of an answer: the record as it is, or pairs when `Set-Cookie` repeats. */
function withCookies(headers: Record<string, string>, cookies: readonly string[]): HeadersInit {
  if (cookies.length === 0) return headers;
  return [...Object.entries(headers), ...cookies.map((line): [string, string] => ['set-cookie', line])];
}
