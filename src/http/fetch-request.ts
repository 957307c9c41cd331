/**
 * A Fetch `Request` as each part of `app.fetch` reads it (src/http/fetch.ts): the exchange that
 * carries it through, and the views the core, the answer, a route's handler and the tracer take.
 */

import { parse as parseQuery } from 'fast-querystring';
import type { RequestInfo, RequestLog } from '../core/request-context.js';
import type { RouteRequest } from './app-routes.js';
import { type ProxyTrust, peerAddressOf } from './client-address.js';
import { type CookieSigner, RequestCookies } from './cookies.js';
import type { HeaderRecord } from './fetch-core.js';
import { asksForWebSocket } from './handshake.js';
import type { ObservedRoute } from './observed.js';
import type { AnsweredRequest } from './procedure-answer.js';
import type { RateLimitHeaders } from './rate-limit.js';
import { runtime } from './runtime.js';
import type { PipelineRequest, RequestHeaders, SentAnswer } from './sent.js';
import type { RequestTrace, TracedRequest } from './tracing.js';

/**
 * One request on its way through: what the handler reads, and headers any answer carries. The
 * client's address and the parsed URL are worked out only when something asks for them.
 */
/** What the request line names of a request beside its address. */
interface LineFields {
  host: string;
  version: string | undefined;
  port: number | undefined;
}

export class Exchange {
  readonly request: PipelineRequest;
  /** Read once: each read of a `Request`'s field is a call into the runtime. */
  readonly method: string;
  readonly id: string;
  /** The path, as the runtime normalized it, and the query string with its `?` (or ''). */
  readonly path: string;
  readonly search: string;
  params: Record<string, string | undefined> = {};
  /** The request's trace, when the app traces. */
  trace: RequestTrace | undefined;
  /** Its answer streams: the trace ends with the stream, not with the headers. */
  streaming = false;
  /** What the runtime passed beside the request (Bun's server, Deno's handler info). */
  argument: unknown;
  /** The rate-limit headers, on the answer whatever it is (as on Node). */
  limitHeaders: RateLimitHeaders | undefined;
  /**
   * The app was draining or closing when the request arrived: its answer closes the connection,
   * so that a keep-alive client reconnects, through the load balancer, to another instance. A
   * request already under way when draining began keeps its connection, as its pipelined
   * followers are answered (a 503 once the app closes).
   */
  arrivedDraining = false;
  /**
   * For a refused upload: `close` when its body is left unread (the answer closes the
   * connection), `keep` when the rest is read and dropped (the connection may stay open).
   */
  connection: 'close' | 'keep' | undefined;
  readonly #proxy: ProxyTrust;
  #ip: string | undefined;
  #lineFields: LineFields | undefined;
  #url: URL | undefined;
  #headers: HeaderRecord | undefined;

  constructor(request: PipelineRequest, id: string, proxy: ProxyTrust) {
    this.request = request;
    this.method = request.method;
    this.id = id;
    this.#proxy = proxy;
    const { url } = request;
    const start = pathStart(url);
    const query = start === -1 ? -1 : url.indexOf('?', start);
    this.path = start === -1 ? '/' : query === -1 ? url.slice(start) : url.slice(start, query);
    this.search = query === -1 ? '' : url.slice(query);
  }

  /** The address of the peer: the client, or the proxy in front of it. */
  get peer(): string {
    return peerAddressOf(this.request, this.argument);
  }

  get ip(): string {
    this.#ip ??= this.#proxy.clientAddress(this.peer, this.request.headers.get('x-forwarded-for'));
    return this.#ip;
  }

  /** The origin the client named: the server's own, to the cross-site check. */
  get origin(): string {
    return this.#proxy.origin(this.url, () => this.peer, this.request.headers);
  }

  /**
   * What the request line names of the request beside its address: the `Host` header as sent (a
   * request made in code carries it in its URL), `Accept-Version` and the peer's port. Read once; a
   * WebSocket's handshake reads it before the upgrade, after which Deno's request can no longer be read.
   */
  get lineFields(): LineFields {
    this.#lineFields ??= {
      host: this.header('host') ?? this.url.host,
      version: this.header('accept-version'),
      port: runtime.peerPort(this.request, this.argument),
    };
    return this.#lineFields;
  }

  get url(): URL {
    if (this.#url === undefined) {
      const { url } = this.request;
      this.#url = url.charCodeAt(0) === 47 ? new URL(url, unnamedOrigin) : new URL(url);
    }
    return this.#url;
  }

  /** Every header, as Node gives them: made once, when first asked for (a read asks for one or two). */
  get headers(): HeaderRecord {
    this.#headers ??= headerRecord(this.request.headers);
    return this.#headers;
  }

  header(name: string): string | undefined {
    return this.request.headers.get(name) ?? undefined;
  }
}

export interface RouteHandler {
  /** The same object for every answer of the route, as observers expect. */
  observed: ObservedRoute;
  serve(exchange: Exchange): SentAnswer | Promise<SentAnswer>;
  /** A CORS preflight's answer: no route answers it, so no route is observed or traced. */
  preflight?: true;
}

/** A request as the core sees it, read from a Fetch `Request`. */
export class FetchRequestInfo implements RequestInfo {
  readonly id: string;
  readonly method: string;
  readonly url: string;
  readonly #exchange: Exchange;
  readonly params: Readonly<Record<string, string>>;
  readonly opensSocket: boolean;
  readonly opensStream: boolean;
  readonly #signer: CookieSigner;
  readonly #logOf: (id: string) => RequestLog;
  #cookies: RequestCookies | undefined;
  #log: RequestLog | undefined;

  constructor(
    exchange: Exchange,
    method: string,
    params: Record<string, string>,
    signer: CookieSigner,
    logOf: (id: string) => RequestLog,
    /** The kind of the route's output (`socket`, `events`, …), when it has one. */
    outputKind?: string,
  ) {
    this.id = exchange.id;
    this.method = method;
    this.url = `${exchange.path}${exchange.search}`;
    this.#exchange = exchange;
    this.params = params;
    this.#signer = signer;
    this.#logOf = logOf;
    this.opensSocket =
      outputKind === 'socket' && method === 'GET' && asksForWebSocket(exchange.header('upgrade'));
    this.opensStream = outputKind === 'events' && method === 'GET';
  }

  get headers(): HeaderRecord {
    return this.#exchange.headers;
  }

  /** Made when first read: most requests log nothing but their own line. */
  get log(): RequestLog {
    this.#log ??= this.#logOf(this.id);
    return this.#log;
  }

  header(name: string): string | undefined {
    return this.#exchange.header(name);
  }

  get ip(): string {
    return this.#exchange.ip;
  }

  cookie(name: string, options?: { signed?: boolean }): string | undefined {
    this.#cookies ??= new RequestCookies(this.#exchange.header('cookie'), this.#signer);
    return this.#cookies.get(name, options);
  }

  /** `JSON.stringify` and loggers see the headers and the address too, as on Node. */
  toJSON(): Omit<RequestInfo, 'cookie' | 'header' | 'log'> {
    const { id, method, url, ip, headers, params } = this;
    return { id, method, url, ip, headers, params };
  }
}

/** Headers as Node gives them: lower-case names, a repeated one joined with ", ". */
export function headerRecord(headers: RequestHeaders): HeaderRecord {
  const record: HeaderRecord = {};
  headers.forEach((value, name) => {
    record[name] = value;
  });
  return record;
}

/**
 * The query string as Fastify parses it on Node, with the same parser (fast-querystring): a
 * repeated key becomes an array, and the record has no prototype (`?constructor=a` is a key like
 * any other).
 */
export function queryRecord(search: string): Record<string, string | string[]> {
  if (search === '' || search === '?') return Object.create(null);
  return parseQuery(search.slice(1)) as Record<string, string | string[]>;
}

/**
 * Where the path of a `Request`'s URL starts (-1: it has none). The URL is already parsed and
 * serialized: the path starts at the first '/' after the authority, its query at the first '?'
 * after that (a fragment is never part of it). Bun gives the path alone when it had no host to
 * put before it (an HTTP/1.0 request without `Host`).
 */
export function pathStart(url: string): number {
  return url.charCodeAt(0) === 47 ? 0 : url.indexOf('/', url.indexOf('//') + 2);
}

/** The origin a URL without one is read against: the request named no host (HTTP/1.0). */
const unnamedOrigin = 'http://localhost';

/** A Fetch request as the tracer reads it. */
export class FetchTracedRequest implements TracedRequest {
  readonly method: string;
  readonly path: string;
  readonly scheme: string;
  readonly #headers: RequestHeaders;

  constructor(request: PipelineRequest) {
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

/** A request as a route's handler reads it, over a Fetch `Request`. */
export class FetchRouteRequest implements RouteRequest {
  readonly method: string;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly id: string;
  readonly #exchange: Exchange;
  readonly #bytes: Uint8Array;
  readonly #logOf: (id: string) => RequestLog;
  #query: URLSearchParams | undefined;
  #log: RequestLog | undefined;

  constructor(exchange: Exchange, bytes: Uint8Array, logOf: (id: string) => RequestLog) {
    this.#exchange = exchange;
    this.#bytes = bytes;
    this.#logOf = logOf;
    this.method = exchange.request.method;
    this.path = exchange.path;
    this.params = exchange.params as Record<string, string>;
    const headers = headerRecord(exchange.request.headers) as Record<string, string | undefined>;
    // On the wire the authority is the Host header; a Request made in code carries it in its URL.
    headers.host ??= exchange.url.host;
    this.headers = headers;
    this.id = exchange.id;
  }

  get query(): URLSearchParams {
    this.#query ??= new URLSearchParams(this.#exchange.search);
    return this.#query;
  }

  get ip(): string {
    return this.#exchange.ip;
  }

  get origin(): string {
    return this.#exchange.origin;
  }

  /** Made when first read: most routes never log. */
  get log(): RequestLog {
    this.#log ??= this.#logOf(this.id);
    return this.#log;
  }

  /** Read before the handler runs, as on Node. */
  body(): Promise<Uint8Array> {
    return Promise.resolve(this.#bytes);
  }
}

/** A request as the answer reads it, over a Fetch `Request`. */
export class FetchAnsweredRequest implements AnsweredRequest {
  readonly method: string;
  readonly id: string;
  readonly #logOf: (id: string) => RequestLog;
  #log: RequestLog | undefined;
  readonly #exchange: Exchange;
  readonly #request: PipelineRequest;

  get ip(): string {
    return this.#exchange.ip;
  }

  /** Made when a problem or a socket logs (rarely): lines with the request's id. */
  get log(): RequestLog {
    this.#log ??= this.#logOf(this.id);
    return this.#log;
  }

  constructor(exchange: Exchange, logOf: (id: string) => RequestLog) {
    this.method = exchange.method;
    this.id = exchange.id;
    this.#logOf = logOf;
    this.#exchange = exchange;
    this.#request = exchange.request;
  }

  header(name: string): string | undefined {
    return this.#exchange.header(name);
  }

  ownOrigin(): string {
    return this.#exchange.origin;
  }

  /** Runtimes abort the request's signal when its client leaves: at once if it has left already. */
  onGone(listener: () => void): void {
    const { signal } = this.#request;
    if (signal?.aborted === true) listener();
    else signal?.addEventListener('abort', listener, { once: true });
  }
}
