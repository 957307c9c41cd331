/**
 * A procedure's answer, decided once for every adapter (docs/architecture.md, "One home per HTTP
 * rule"): from the compiled call's reply and what the request asked for, the status, the headers
 * in the order every adapter sends them, the `Set-Cookie` lines and a body that is empty, text,
 * bytes, a file or event frames. It owns the rules of the answer: the route's fixed headers, the
 * request id, `Idempotency-Replayed`, `Location`, the handler's headers and cookies (its `Vary`
 * added to, never replacing, what the answer varies on), the entity tag and the 304 with the
 * `Vary` the 200 would carry, compression, a file's plan (range, 304, HEAD), and an event stream's
 * first frame and HEAD. Adapters only turn it into their own response.
 */
import { ProceedError } from '../core/errors.js';
import type { EventsAnswer } from '../core/events.js';
import type { ByteRange, FileAnswer } from '../core/files.js';
import { assignOwn } from '../core/objects.js';
import type { RequestLog } from '../core/request-context.js';
import type { MountedRoute } from '../core/route-table.js';
import type { SocketAnswer } from '../core/sockets.js';
import { type CodingChoice, taggedWithCoding, worthCompressing } from './compression.js';
import { type CookieSigner, setCookieLines } from './cookies.js';
import { crossSiteRefusal } from './csrf.js';
import { dropStream, eventFrames, eventStreamHeaders, startingWith } from './events.js';
import { fileTag, planFile } from './files.js';
import { asksForWebSocket, handshakeRefusal } from './handshake.js';
import { jsonHeaders } from './json.js';
import { holderOf, type OpenSockets, type SocketPlace } from './open-sockets.js';
import { problemAnswer } from './problems.js';
import {
  type Answered,
  crossSiteRequest,
  type ProcedureCall,
  type ProcedureCallOptions,
  procedureCall,
} from './procedure-call.js';
import { runtime } from './runtime.js';
import { SocketSession } from './sockets.js';

/** Response headers by lower-case name, one value each (`Set-Cookie` lines are apart). */
export type HeaderValues = Record<string, string>;

/** What an answer sends after its headers. */
export type AnswerBody =
  /** Nothing, and nothing would have been: 204, 304. */
  | { readonly kind: 'none' }
  /** Nothing, for a HEAD: the headers (a file's `Content-Length` among them) are the GET's. */
  | { readonly kind: 'head' }
  | { readonly kind: 'text'; readonly text: string }
  /** The text, compressed. */
  | { readonly kind: 'bytes'; readonly bytes: Uint8Array }
  /** A file's bytes, or one range of them: the adapter reads them as it sends. */
  | { readonly kind: 'file'; readonly file: FileAnswer; readonly range: ByteRange | undefined }
  /** Event-stream frames, the first already made; `abort` ends the handler's stream. */
  | {
      readonly kind: 'events';
      readonly frames: AsyncGenerator<string, void, undefined>;
      readonly abort: () => void;
    }
  /** A WebSocket to open: the adapter completes the handshake and hands the socket to the session. */
  | { readonly kind: 'socket'; readonly session: SocketSession; readonly frameLimit: number };

/** A procedure's answer, before any adapter writes it. */
export interface ProcedureAnswer {
  readonly status: number;
  readonly headers: HeaderValues;
  /** One `Set-Cookie` line each. */
  readonly cookies: readonly string[];
  readonly body: AnswerBody;
}

/** What the answer reads of its request. */
export interface AnsweredRequest {
  readonly method: string;
  readonly id: string;
  /** The client's address (a trusted proxy's forwarded one). */
  readonly ip: string;
  /** One value of a request header (a repeated one joined with ", "); lower-case name. */
  header(name: string): string | undefined;
  /** The origin a browser names for this server (scheme, host, port), for the cross-site check. */
  ownOrigin(): string;
  /** Calls `listener` once the client leaves, or the answer ended (an event stream's end then). */
  onGone(listener: () => void): void;
  /** The app's logger for this request (its lines carry its `reqId`); made when first read. */
  readonly log: RequestLog;
}

/** How answers are compressed: bodies of `above` bytes or more, in a coding the client takes. */
export interface AnswerCompression {
  readonly above: number;
  readonly codings: CodingChoice<string>;
  /** The body in `coding`; on the thread pool when large (src/server/http-cache.ts). */
  encode(body: string, coding: string, size: number): Uint8Array | Promise<Uint8Array>;
}

export interface ProcedureAnswerOptions extends ProcedureCallOptions {
  readonly requestIds: boolean;
  readonly exposeErrors: boolean;
  readonly cookieSigner: CookieSigner;
  /** Origins that may write with cookies; undefined when the app turned the check off. */
  readonly csrfTrusted: ReadonlySet<string> | undefined;
  readonly compression: AnswerCompression | undefined;
  readonly matchingTag: (ifNoneMatch: string | undefined, tag: string) => string | undefined;
  /** The opaque part of a file's tag, from its bytes in memory (src/http/files.ts). */
  readonly bytesTag: (bytes: Uint8Array) => string;
  /** Calls the listener when the app begins closing (open event streams end then). */
  readonly onClosing: (listener: () => void) => () => void;
  /** The app's open WebSockets, against its limit. */
  readonly sockets: OpenSockets;
  /** The app's open event streams, against each client's limit. */
  readonly streams: OpenSockets;
}

/** One procedure's route as every adapter serves it: the call, and its answer. */
export interface ProcedureRoute {
  readonly call: ProcedureCall;
  /**
   * 403 for a write that carries cookies from a site the app does not trust (docs/procedures.md,
   * "Cross-site requests"); `ownOrigin` is the origin a browser names for this server, worked
   * out only when the request has cookies.
   */
  refuseCrossSite(
    method: string,
    headers: Readonly<Record<string, string | string[] | undefined>>,
    ownOrigin: () => string,
  ): void;
  /**
   * The answer to `request` from the call's reply: synchronous unless an event stream waits for
   * its first frame or a large body is compressed on the thread pool. When it fails, nothing of
   * the reply is left open: a file is let go, a stream's handler returned.
   */
  answer(request: AnsweredRequest, result: Answered): ProcedureAnswer | Promise<ProcedureAnswer>;
}

const utf8 = new TextEncoder();
const utf8Length = (text: string) => utf8.encode(text).byteLength;

function appendVary(headers: HeaderValues, value: string): void {
  const before = headers.vary;
  headers.vary = before === undefined || before === '' ? value : `${before}, ${value}`;
}

export function procedureRoute(route: MountedRoute, options: ProcedureAnswerOptions): ProcedureRoute {
  return new RouteAnswers(route, options);
}

/** A procedure's route: its compiled call, and the answers made from its replies. */
class RouteAnswers implements ProcedureRoute {
  readonly call: ProcedureCall;
  readonly #options: ProcedureAnswerOptions;
  /** As the request log and the metrics name it (`posts.getPost`). */
  readonly #procedure: string;
  readonly #isRead: boolean;
  /** Reads never change anything: only writes are checked for another site's cookies. */
  readonly #checksCrossSite: boolean;
  readonly #fixedHeaders: HeaderValues;
  /** No body to type on a 204; a file types its own. */
  readonly #untypedHeaders: HeaderValues;
  /** An event stream is typed by its frames. */
  readonly #eventHeaders: HeaderValues;

  constructor(route: MountedRoute, options: ProcedureAnswerOptions) {
    this.call = procedureCall(route, options);
    this.#procedure = `${route.collection}.${route.name}`;
    this.#options = options;
    this.#isRead = route.method === 'GET';
    this.#checksCrossSite = options.csrfTrusted !== undefined && !this.#isRead;
    this.#fixedHeaders = { ...route.definition.headers, ...jsonHeaders };
    const { 'content-type': _json, ...untypedHeaders } = this.#fixedHeaders;
    this.#untypedHeaders = untypedHeaders;
    this.#eventHeaders = { ...untypedHeaders, ...eventStreamHeaders };
  }

  refuseCrossSite(
    method: string,
    headers: Readonly<Record<string, string | string[] | undefined>>,
    ownOrigin: () => string,
  ): void {
    const trusted = this.#options.csrfTrusted;
    // Only a request with cookies can be forged by another site: nothing else is looked at.
    if (!this.#checksCrossSite || trusted === undefined || headers.cookie === undefined) return;
    const refusal = crossSiteRefusal(method, headers, ownOrigin, trusted);
    if (refusal !== undefined) throw crossSiteRequest(refusal);
  }

  answer(request: AnsweredRequest, result: Answered): ProcedureAnswer | Promise<ProcedureAnswer> {
    if (result.events !== undefined) return this.#eventsAnswer(request, result, result.events);
    if (result.socket !== undefined) return this.#socketAnswer(request, result, result.socket);
    // A stale If-Match on a read is a 412 that must not carry the route's success headers.
    const tag = this.call.tagOf(result, request.header('if-match'));
    if (result.file !== undefined) return this.#fileAnswer(request, result, result.file);
    if (result.status === 204) {
      const { headers, cookies } = this.#headersOf(this.#untypedHeaders, request, result);
      return { status: 204, headers, cookies, body: { kind: 'none' } };
    }
    const { headers, cookies } = this.#headersOf(this.#fixedHeaders, request, result);
    if (!this.#isRead) {
      const written = this.call.writtenTagOf(result);
      if (written !== undefined) headers.etag = written;
    } else if (tag !== undefined) {
      // The tag the client holds, coding suffix included, names the representation it keeps.
      const held = this.#options.matchingTag(request.header('if-none-match'), tag);
      if (held !== undefined) {
        headers.etag = held;
        delete headers['content-type'];
        // A 304 says Vary as the 200 would.
        const { compression } = this.#options;
        if (compression !== undefined && utf8Length(result.body) >= compression.above)
          appendVary(headers, 'accept-encoding');
        return { status: 304, headers, cookies, body: { kind: 'none' } };
      }
      headers.etag = tag;
    }
    return this.#jsonAnswer(request, result.status, headers, cookies, result.body);
  }

  /** The headers every answer of the route carries, then the handler's own (its Vary added to). */
  #headersOf(
    base: HeaderValues,
    request: AnsweredRequest,
    result: Answered,
  ): { headers: HeaderValues; cookies: readonly string[] } {
    // Copied key by key: keys are added to it below (src/core/objects.ts).
    const headers: HeaderValues = assignOwn({}, base);
    if (this.#options.requestIds) headers['x-request-id'] = request.id;
    if (result.replayed === true) headers['idempotency-replayed'] = 'true';
    if (result.location !== undefined) headers.location = result.location;
    const control = result.response;
    if (control === undefined) return { headers, cookies: [] };
    for (const [name, value] of control.headers ?? []) {
      // Replacing Vary would let a cache mix answers that differ on what the route said.
      if (name === 'vary') appendVary(headers, value);
      else headers[name] = value;
    }
    return {
      headers,
      cookies:
        control.cookies === undefined ? [] : setCookieLines(control.cookies, this.#options.cookieSigner),
    };
  }

  async #eventsAnswer(
    request: AnsweredRequest,
    result: Answered,
    events: EventsAnswer,
  ): Promise<ProcedureAnswer> {
    if (request.method === 'HEAD') {
      dropStream(events);
      return { status: 200, ...this.#headersOf(this.#eventHeaders, request, result), body: { kind: 'head' } };
    }
    // Before the handler's body runs: a client past its share is refused, the source let go.
    const { streams, exposeErrors, onClosing } = this.#options;
    const client = holderOf(events.holder, request.ip);
    const refused = streams.refusal(client);
    if (refused !== undefined) {
      dropStream(events);
      throw refused;
    }
    const place = streams.take(client);
    place.opened();
    // The client leaving ends the stream at once, whatever the handler waits for.
    const abort = () => {
      place.release();
      events.abort();
    };
    request.onGone(abort);
    const problemBody = (error: unknown) => problemAnswer(error, { exposeErrors, log: request.log }).body;
    const frames = releasing(eventFrames(events, onClosing, problemBody, request.log), place);
    try {
      // An error before the first frame is thrown here: an ordinary problem answer.
      const first = await frames.next();
      const { headers, cookies } = this.#headersOf(this.#eventHeaders, request, result);
      return {
        status: 200,
        headers,
        cookies,
        body: { kind: 'events', frames: startingWith(first, frames), abort },
      };
    } catch (error) {
      // Nothing is sent: the handler is returned, its finally runs.
      await frames.return(undefined);
      throw error;
    }
  }

  /**
   * A WebSocket's handshake accepted: checked here, once, for every runtime. A socket is open to
   * any site's page (no CORS guards it), so one that carries cookies is refused across sites as
   * a write is (docs/sockets.md, "Security").
   */
  #socketAnswer(request: AnsweredRequest, result: Answered, socket: SocketAnswer): ProcedureAnswer {
    const upgrade = request.header('upgrade') ?? '';
    if (request.method !== 'GET' || !asksForWebSocket(upgrade))
      throw new ProceedError('UPGRADE_REQUIRED', 'This route opens a WebSocket: send a WebSocket handshake', {
        headers: { upgrade: 'websocket', connection: 'Upgrade' },
      });
    const refusal = handshakeRefusal((name) => request.header(name), runtime.namesConnections);
    if (refusal !== undefined)
      throw new ProceedError('BAD_REQUEST', refusal, { headers: { 'sec-websocket-version': '13' } });
    const trusted = this.#options.csrfTrusted;
    if (trusted !== undefined && request.header('cookie') !== undefined) {
      const refusal = crossSiteRefusal(
        'WEBSOCKET',
        {
          cookie: 'sent',
          'sec-fetch-site': request.header('sec-fetch-site'),
          origin: request.header('origin'),
        },
        () => request.ownOrigin(),
        trusted,
      );
      if (refusal !== undefined) throw crossSiteRequest(refusal);
    }
    const { sockets } = this.#options;
    const client = holderOf(socket.credentials?.holder, request.ip);
    const refused = sockets.refusal(client);
    if (refused !== undefined) throw refused;
    const session = new SocketSession(socket, {
      exposeErrors: this.#options.exposeErrors,
      log: request.log,
      procedure: this.#procedure,
      sockets,
      client,
      onClosing: this.#options.onClosing,
    });
    const { headers, cookies } = this.#headersOf(this.#untypedHeaders, request, result);
    return {
      status: 101,
      headers,
      cookies,
      body: { kind: 'socket', session, frameLimit: SocketSession.frameLimit(socket.limits) },
    };
  }

  #fileAnswer(request: AnsweredRequest, result: Answered, file: FileAnswer): ProcedureAnswer {
    try {
      const plan = planFile(
        file,
        {
          method: request.method,
          range: request.header('range'),
          ifMatch: request.header('if-match'),
          ifUnmodifiedSince: request.header('if-unmodified-since'),
          ifNoneMatch: request.header('if-none-match'),
          ifModifiedSince: request.header('if-modified-since'),
          ifRange: request.header('if-range'),
        },
        fileTag(file, this.#options.bytesTag),
        this.#untypedHeaders,
      );
      const { headers, cookies } = this.#headersOf(plan.headers, request, result);
      if (plan.sendsBody)
        return { status: plan.status, headers, cookies, body: { kind: 'file', file, range: plan.range } };
      file.source.discard();
      return {
        status: plan.status,
        headers,
        cookies,
        body: plan.status === 304 ? { kind: 'none' } : { kind: 'head' },
      };
    } catch (error) {
      file.source.discard();
      throw error;
    }
  }

  /** The JSON body, compressed when it is large enough and the client takes a coding. */
  #jsonAnswer(
    request: AnsweredRequest,
    status: number,
    headers: HeaderValues,
    cookies: readonly string[],
    text: string,
  ): ProcedureAnswer | Promise<ProcedureAnswer> {
    const { compression } = this.#options;
    if (compression === undefined || !worthCompressing(text, compression.above, utf8Length))
      return { status, headers, cookies, body: { kind: 'text', text } };
    // Another client may get another coding of this answer: caches must key on it.
    appendVary(headers, 'accept-encoding');
    const coding = compression.codings.of(request.header('accept-encoding'));
    if (coding === undefined) return { status, headers, cookies, body: { kind: 'text', text } };
    headers['content-encoding'] = coding;
    const tag = headers.etag;
    if (tag !== undefined) headers.etag = taggedWithCoding(tag, coding);
    const bytes = compression.encode(text, coding, utf8Length(text));
    return bytes instanceof Promise
      ? bytes.then((encoded) => ({ status, headers, cookies, body: { kind: 'bytes', bytes: encoded } }))
      : { status, headers, cookies, body: { kind: 'bytes', bytes } };
  }
}

/** A stream's frames that give back its place in the counts once they end, however they end. */
async function* releasing(
  frames: AsyncGenerator<string, void, undefined>,
  place: SocketPlace,
): AsyncGenerator<string, void, undefined> {
  try {
    yield* frames;
  } finally {
    place.release();
  }
}
