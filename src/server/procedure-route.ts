/** One native Fastify route per procedure: context, the compiled call, the reply. */
import { Readable } from 'node:stream';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestAsyncHookHandler,
  onSendHookHandler,
  preParsingHookHandler,
} from 'fastify';
import type { ContextPipeline } from '../core/context.js';
import { takesBody } from '../core/documentation.js';
import type { EventsAnswer } from '../core/events.js';
import type { Call } from '../core/execute.js';
import type { RequestInfo } from '../core/request-context.js';
import type { ResponseControl } from '../core/response.js';
import type { MountedRoute } from '../core/route-table.js';
import { type UploadOptions, type UploadPlan, uploadPlanOf } from '../core/uploads.js';
import { type CookieSigner, RequestCookies, setCookieLines } from '../http/cookies.js';
import { crossSiteRefusal } from '../http/csrf.js';
import { bytesTag, entityTag, ifMatchHolds } from '../http/entity-tags.js';
import { eventFrames, eventStreamHeaders, startingWith } from '../http/events.js';
import { fileTag, planFile } from '../http/files.js';
import { isJsonBody, notJsonBody } from '../http/json.js';
import { lingeringBytes } from '../http/lingering.js';
import { closingRefusal, problemAnswer } from '../http/problems.js';
import {
  type Answered,
  crossSiteRequest,
  type IdempotencyRuntime,
  procedureCall,
} from '../http/procedure-call.js';
import type { Spools } from '../http/spool.js';
import { framesInTrace, type RequestTrace } from '../http/tracing.js';
import { UploadBody, uploadRefusal } from '../http/uploads.js';
import { emptyBody, nodeBody } from './files.js';
import { compressed, varyOnCoding, withEntityTag } from './http-cache.js';
import type { Lifecycle } from './lifecycle.js';
import { lingerOnUnreadBody } from './lingering.js';
import { traceOf } from './tracing.js';
import { nodeBodySource } from './uploads.js';

/** On every answer: JSON, and never sniffed as anything else. */
export const jsonHeaders = {
  'content-type': 'application/json; charset=utf-8',
  'x-content-type-options': 'nosniff',
} as const;

/**
 * A request as the core sees it. The client's address is read when asked for: it costs a
 * system call, and behind a trusted proxy a walk of `X-Forwarded-For`, which most requests
 * never need.
 */
class FastifyRequestInfo implements RequestInfo {
  readonly id: string;
  readonly method: string;
  readonly url: string;
  readonly headers: RequestInfo['headers'];
  readonly params: RequestInfo['params'];
  readonly #request: FastifyRequest;
  readonly #signer: CookieSigner;
  #cookies: RequestCookies | undefined;

  constructor(request: FastifyRequest, signer: CookieSigner) {
    this.#request = request;
    this.#signer = signer;
    this.id = request.id;
    this.method = request.method;
    this.url = request.url;
    this.headers = request.headers;
    this.params = request.params as Record<string, string>;
  }

  get ip(): string {
    return this.#request.ip;
  }

  cookie(name: string, options?: { signed?: boolean }): string | undefined {
    this.#cookies ??= new RequestCookies(this.headers.cookie, this.#signer);
    return this.#cookies.get(name, options);
  }

  /** `JSON.stringify` and loggers see the address too, as they did a plain object. */
  toJSON(): Omit<RequestInfo, 'cookie'> {
    const { id, method, url, ip, headers, params } = this;
    return { id, method, url, ip, headers, params };
  }
}

/** A header Node may give as a list (an unknown one, repeated), as one value. */
const oneValue = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(', ') : value);

/** Refuses, before parsing, a body a procedure cannot take (a route hook of body-reading routes only). */
/** A closing app refuses before a body is parsed, as `app.fetch` does (src/http/problems.ts). */
const onlyJsonBodies =
  (lifecycle: Lifecycle): preParsingHookHandler =>
  (request, _reply, payload, done) => {
    if (lifecycle.arrivedWhileClosing(request.raw)) done(closingRefusal());
    else if (isJsonBody(request.headers)) done(null, payload);
    else done(notJsonBody());
  };

/**
 * Refuses, before anything reads it, an upload of the wrong media type or with a declared length
 * over the route's total (src/http/uploads.ts).
 */
const uploadsOnly =
  (plan: UploadPlan, lifecycle: Lifecycle): preParsingHookHandler =>
  (request, _reply, payload, done) => {
    if (lifecycle.arrivedWhileClosing(request.raw)) return done(closingRefusal());
    const refusal = uploadRefusal(plan, request.headers);
    if (refusal === undefined) done(null, payload);
    else done(refusal);
  };

/**
 * A body answered before it was read to its end (refused by a guard, or midway) is read on and
 * dropped, up to the route's own limit, so a client still sending it reads the answer; one
 * declared past that closes the connection (docs/uploads.md, "A refused body"). Only routes that
 * take a body have it: elsewhere Node's own discarding applies, bounded by the request timeout.
 */
function lingerUnlessRead(routeLimit: number): onSendHookHandler {
  const bytes = lingeringBytes(routeLimit);
  return (request, reply, payload, done) => {
    if (!request.raw.complete && !lingerOnUnreadBody(request.raw, bytes)) reply.header('connection', 'close');
    done(null, payload);
  };
}

/**
 * Upload routes live in a context of their own whose one parser leaves the body unread: the
 * call reads it when it reaches its input. A `@fastify/multipart` of the app's on `app.server`
 * keeps its own parser.
 */
function inUploadContext(server: FastifyInstance, register: (instance: FastifyInstance) => void): void {
  void server.register(async (uploads) => {
    uploads.removeAllContentTypeParsers();
    uploads.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    register(uploads);
  });
}

/** What the handler set: its headers, then one `Set-Cookie` line per cookie. */
function writeResponseControl(
  reply: FastifyReply,
  response: ResponseControl<never>,
  signer: CookieSigner,
): void {
  for (const [name, value] of response.headers ?? []) {
    // Vary adds to what CORS or compression said; replacing it would let a cache mix answers.
    const before = name === 'vary' ? reply.getHeader('vary') : undefined;
    reply.header(name, before === undefined ? value : `${String(before)}, ${value}`);
  }
  const { cookies } = response;
  if (cookies !== undefined) reply.header('set-cookie', setCookieLines(cookies, signer));
}

/** The origin a browser would name for this server: default ports dropped, as in `Origin`. */
function ownOrigin(request: FastifyRequest): string {
  try {
    return new URL(`${request.protocol}://${request.host}`).origin;
  } catch {
    return '';
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `collection.name`, on the routes of procedures. */
    procedure?: string;
  }
}

/** `collection.name` of the procedure a request was routed to; undefined for other routes. */
export function procedureOf(request: FastifyRequest): string | undefined {
  return request.routeOptions.config.procedure;
}

export type { IdempotencyRuntime } from '../http/procedure-call.js';

export function registerProcedureRoute(
  server: FastifyInstance,
  route: MountedRoute,
  context: ContextPipeline,
  lifecycle: Lifecycle,
  onRequest: readonly onRequestAsyncHookHandler[],
  options: {
    entityTags: boolean;
    requestIds: boolean;
    compressAbove: number | undefined;
    exposeErrors: boolean;
    idempotency: () => IdempotencyRuntime | undefined;
    userSource: () => string | undefined;
    cookieSigner: CookieSigner;
    csrfTrusted: ReadonlySet<string> | undefined;
    uploads: UploadOptions | undefined;
    spools: Spools;
    /** The app traces requests: each call carries its trace's step tracer. */
    traced: boolean;
    /** The most a JSON body may hold (`bodyLimit`). */
    bodyLimit: number;
  },
): void {
  const procedure = procedureCall(route, { ...options, entityTag, ifMatchHolds });
  const isRead = route.method === 'GET';
  const readsBody = takesBody(route);
  const { compressAbove, requestIds, cookieSigner, csrfTrusted, traced } = options;
  // Reads never change anything: only writes are checked for another site's cookies.
  const checksCrossSite = csrfTrusted !== undefined && !isRead;
  const headers = { ...route.definition.headers, ...jsonHeaders };
  // 204 No Content: the route's headers and nosniff, but no body to type; a file types its own.
  const { 'content-type': _bodyType, ...noContentHeaders } = headers;
  const fileHeaders = noContentHeaders;
  const eventHeaders = { ...noContentHeaders, ...eventStreamHeaders };
  const upload = uploadPlanOf(route, options.uploads);
  const register = (instance: FastifyInstance) =>
    instance.route({
      method: route.method,
      url: route.path,
      config: { procedure: `${route.collection}.${route.name}` },
      ...(onRequest.length === 0 ? {} : { onRequest: [...onRequest] }),
      ...(upload !== undefined
        ? { preParsing: uploadsOnly(upload, lifecycle), onSend: lingerUnlessRead(upload.limits.total) }
        : readsBody
          ? { preParsing: onlyJsonBodies(lifecycle), onSend: lingerUnlessRead(options.bodyLimit) }
          : {}),
      // The answer's own promise, not an async function's wrapping it: two microtasks less.
      handler:
        upload === undefined
          ? (request, reply) => answer(request, reply, request.body)
          : (request, reply) => {
              const body = new UploadBody(
                upload,
                request.headers,
                nodeBodySource(request.raw),
                options.spools,
              );
              // Once the answer is sent, or the client left: the spooled files go.
              reply.raw.once('close', () => {
                body
                  .dispose()
                  .catch((error: unknown) => request.log.error({ err: error }, 'Removing an upload failed'));
              });
              return answer(request, reply, body);
            },
    });
  // Synchronous while every step is, then continued with `then`: no async function's promise
  // and resumption per request where nothing waits (docs/architecture.md, "A request").
  const answer = (request: FastifyRequest, reply: FastifyReply, body: unknown): unknown => {
    if (lifecycle.phase !== 'serving') {
      if (lifecycle.arrivedWhileClosing(request.raw)) throw closingRefusal();
      // Keep-alive clients reconnect, through the load balancer, to another instance.
      reply.header('connection', 'close');
    }
    // Only a request with cookies can be forged by another site: nothing else is looked at.
    if (checksCrossSite && request.headers.cookie !== undefined) {
      const refusal = crossSiteRefusal(
        request.method,
        request.headers,
        () => ownOrigin(request),
        csrfTrusted,
      );
      if (refusal !== undefined) throw crossSiteRequest(refusal);
    }
    const requestTrace = traced ? traceOf(request.raw) : undefined;
    const made = context.build(new FastifyRequestInfo(request, cookieSigner));
    return made instanceof Promise
      ? made.then((ctx) => run(request, reply, body, ctx, requestTrace))
      : run(request, reply, body, made, requestTrace);
  };
  const run = (
    request: FastifyRequest,
    reply: FastifyReply,
    body: unknown,
    ctx: Call['ctx'],
    requestTrace: RequestTrace | undefined,
  ): unknown => {
    const call: Call = {
      ctx,
      params: request.params as Record<string, string>,
      query: request.query as Record<string, unknown> | undefined,
      body,
      ifMatch: request.headers['if-match'],
      trace: requestTrace?.steps,
    };
    const pending = procedure.run(call, request.headers['idempotency-key']);
    return pending instanceof Promise
      ? pending.then((result) => send(request, reply, call, result, requestTrace))
      : send(request, reply, call, pending, requestTrace);
  };
  const sendEvents = async (
    request: FastifyRequest,
    reply: FastifyReply,
    result: Answered,
    events: EventsAnswer,
    requestTrace: RequestTrace | undefined,
  ): Promise<unknown> => {
    // The client leaving ends the stream at once, whatever the handler waits for.
    reply.raw.once('close', events.abort);
    if (request.method === 'HEAD') {
      events.abort();
      reply.code(200).headers(eventHeaders);
      if (requestIds) reply.header('x-request-id', request.id);
      return reply.send(emptyBody());
    }
    const frames = eventFrames(
      events,
      lifecycle.onClosing,
      (error) => problemAnswer(error, { exposeErrors: options.exposeErrors, log: request.log }).body,
    );
    // An error before the first frame is thrown here: an ordinary problem answer.
    const first = await frames.next();
    try {
      reply.code(200).headers(eventHeaders);
      if (result.response !== undefined) writeResponseControl(reply, result.response, cookieSigner);
      if (requestIds) reply.header('x-request-id', request.id);
    } catch (error) {
      // Nothing is sent: the handler is returned, its finally runs.
      await frames.return(undefined);
      throw error;
    }
    const sent = startingWith(first, frames);
    return reply.send(
      Readable.from(requestTrace === undefined ? sent : framesInTrace(sent, requestTrace), {
        objectMode: false,
      }),
    );
  };
  const send = (
    request: FastifyRequest,
    reply: FastifyReply,
    call: Call,
    result: Answered,
    requestTrace: RequestTrace | undefined,
  ): unknown => {
    const tag = procedure.tagOf(result, call.ifMatch);
    const { events } = result;
    if (events !== undefined) return sendEvents(request, reply, result, events, requestTrace);
    const { file } = result;
    if (file !== undefined) {
      let plan: ReturnType<typeof planFile>;
      try {
        plan = planFile(
          file,
          {
            method: request.method,
            range: request.headers.range,
            ifNoneMatch: request.headers['if-none-match'],
            ifModifiedSince: request.headers['if-modified-since'],
            ifRange: oneValue(request.headers['if-range']),
          },
          fileTag(file, bytesTag),
          fileHeaders,
        );
      } catch (error) {
        file.source.discard();
        throw error;
      }
      reply.code(plan.status).headers(plan.headers);
      if (result.response !== undefined) writeResponseControl(reply, result.response, cookieSigner);
      if (requestIds) reply.header('x-request-id', request.id);
      if (plan.sendsBody) return reply.send(nodeBody(file.source.read(plan.range)));
      file.source.discard();
      // HEAD keeps the Content-Length of the GET: Fastify sets 0 for an empty payload, not for a stream.
      return reply.send(plan.status === 304 ? undefined : emptyBody());
    }
    if (result.status === 204) {
      reply.code(204).headers(noContentHeaders);
      // The handler's own headers win over the procedure's fixed ones of the same name.
      if (result.response !== undefined) writeResponseControl(reply, result.response, cookieSigner);
      if (requestIds) reply.header('x-request-id', request.id);
      if (result.replayed === true) reply.header('idempotency-replayed', 'true');
      return reply.send();
    }
    reply.code(result.status).headers(headers);
    if (result.response !== undefined) writeResponseControl(reply, result.response, cookieSigner);
    if (requestIds) reply.header('x-request-id', request.id);
    if (result.replayed === true) reply.header('idempotency-replayed', 'true');
    if (result.location !== undefined) reply.header('location', result.location);
    let sent: string | undefined = result.body;
    if (!isRead) {
      if (result.version !== undefined) reply.header('etag', entityTag(sent, result.version));
    } else if (tag !== undefined) {
      sent = withEntityTag(request, reply, sent, tag);
      if (sent === undefined) {
        reply.removeHeader('content-type');
        if (compressAbove !== undefined && Buffer.byteLength(result.body) >= compressAbove)
          varyOnCoding(reply);
        return reply.send();
      }
    }
    return compressAbove === undefined ? sent : compressed(request, reply, sent, compressAbove);
  };
  if (upload === undefined) register(server);
  else inUploadContext(server, register);
}
