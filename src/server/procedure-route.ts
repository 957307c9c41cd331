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
import type { Call } from '../core/call.js';
import type { ContextPipeline } from '../core/context.js';
import { takesBody } from '../core/documentation.js';
import { ProceedError } from '../core/errors.js';
import type { RequestInfo } from '../core/request-context.js';
import type { MountedRoute } from '../core/route-table.js';
import { type UploadOptions, type UploadPlan, uploadPlanOf } from '../core/uploads.js';
import { type CookieSigner, RequestCookies } from '../http/cookies.js';
import { bytesTag, entityTag, ifMatchHolds, matchingTag } from '../http/entity-tags.js';
import { isJsonBody, notJsonBody } from '../http/json.js';
import { lingeringBytes } from '../http/lingering.js';
import { closingRefusal } from '../http/problems.js';
import {
  type AnsweredRequest,
  type ProcedureAnswer,
  type ProcedureRoute,
  procedureRoute,
} from '../http/procedure-answer.js';
import type { Answered, IdempotencyRuntime } from '../http/procedure-call.js';
import type { Spools } from '../http/spool.js';
import { framesInTrace, type RequestTrace } from '../http/tracing.js';
import { UploadBody, uploadRefusal } from '../http/uploads.js';
import { emptyBody, nodeBody } from './files.js';
import { encoded, nodeCodings } from './http-cache.js';
import type { Lifecycle } from './lifecycle.js';
import { lingerOnUnreadBody } from './lingering.js';
import { isHeldUpgrade, openSocket } from './sockets.js';
import { traceOf } from './tracing.js';
import { nodeBodySource } from './uploads.js';

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

  header(name: string): string | undefined {
    return oneValue(this.headers[name]);
  }

  cookie(name: string, options?: { signed?: boolean }): string | undefined {
    this.#cookies ??= new RequestCookies(this.headers.cookie, this.#signer);
    return this.#cookies.get(name, options);
  }

  /** `JSON.stringify` and loggers see the address too, as they did a plain object. */
  toJSON(): Omit<RequestInfo, 'cookie' | 'header'> {
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

/**
 * Writes a procedure's answer on the reply. The reply may hold headers already: the rate limit's,
 * CORS's (whose `Vary: Origin` comes first), `Connection: close` while draining.
 */
function write(
  reply: FastifyReply,
  answer: ProcedureAnswer,
  trace: RequestTrace | undefined,
  lifecycle: Lifecycle,
): unknown {
  const { body } = answer;
  if (body.kind === 'socket') {
    // The handshake is ws's to answer; Fastify sends nothing.
    reply.hijack();
    if (!isHeldUpgrade(reply.request.raw)) {
      body.session.ended();
      throw new ProceedError('UPGRADE_REQUIRED', 'This route opens a WebSocket: send a WebSocket handshake');
    }
    openSocket(reply.request.raw, body.session, body.frameLimit, answer, (connection) =>
      lifecycle.upgraded(connection),
    );
    lifecycle.observeUpgrade?.(reply.request, reply);
    return reply;
  }
  const { headers } = answer;
  const before = headers.vary === undefined ? undefined : reply.getHeader('vary');
  reply.code(answer.status).headers(headers);
  if (before !== undefined && before !== '') reply.header('vary', `${String(before)}, ${headers.vary}`);
  if (answer.cookies.length > 0) reply.header('set-cookie', answer.cookies);
  switch (body.kind) {
    case 'text':
      return body.text;
    case 'bytes':
      return reply.send(nodeBody(body.bytes));
    case 'none':
      return reply.send();
    case 'head':
      // Fastify sets Content-Length 0 for an empty payload, not for a stream: the GET's stays.
      return reply.send(emptyBody());
    case 'file':
      return reply.send(nodeBody(body.file.source.read(body.range)));
    case 'events':
      return reply.send(
        Readable.from(trace === undefined ? body.frames : framesInTrace(body.frames, trace), {
          objectMode: false,
        }),
      );
  }
}

/** A request as the answer reads it. */
class FastifyAnsweredRequest implements AnsweredRequest {
  readonly method: string;
  readonly id: string;
  readonly log: FastifyRequest['log'];
  readonly #request: FastifyRequest;
  readonly #reply: FastifyReply;

  constructor(request: FastifyRequest, reply: FastifyReply) {
    this.method = request.method;
    this.id = request.id;
    this.log = request.log;
    this.#request = request;
    this.#reply = reply;
  }

  header(name: string): string | undefined {
    return oneValue(this.#request.headers[name]);
  }

  ownOrigin(): string {
    return ownOrigin(this.#request);
  }

  /** The response closes when it is sent, or when its client left first. */
  onGone(listener: () => void): void {
    this.#reply.raw.once('close', listener);
  }
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

/** What every procedure route of an app is registered with. */
export interface ProcedureRouteOptions {
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
}

export function registerProcedureRoute(
  server: FastifyInstance,
  route: MountedRoute,
  context: ContextPipeline,
  lifecycle: Lifecycle,
  onRequest: readonly onRequestAsyncHookHandler[],
  options: ProcedureRouteOptions,
): void {
  const handling = new FastifyProcedure(answersOf(route, lifecycle, options), context, lifecycle, options);
  const upload = uploadPlanOf(route, options.uploads);
  const register = (instance: FastifyInstance) =>
    instance.route({
      method: route.method,
      url: route.path,
      config: { procedure: `${route.collection}.${route.name}` },
      ...(onRequest.length === 0 ? {} : { onRequest: [...onRequest] }),
      ...(upload !== undefined
        ? { preParsing: uploadsOnly(upload, lifecycle), onSend: lingerUnlessRead(upload.limits.total) }
        : takesBody(route)
          ? { preParsing: onlyJsonBodies(lifecycle), onSend: lingerUnlessRead(options.bodyLimit) }
          : {}),
      // The answer's own promise, not an async function's wrapping it: two microtasks less.
      handler:
        upload === undefined
          ? (request, reply) => handling.answer(request, reply, request.body)
          : (request, reply) =>
              handling.answer(request, reply, uploadBodyOf(upload, request, reply, options.spools)),
    });
  if (upload === undefined) register(server);
  else inUploadContext(server, register);
}

/** The route's answers, with what Node brings to them: its hashes, zlib's encoders, the app's closing. */
function answersOf(
  route: MountedRoute,
  lifecycle: Lifecycle,
  options: ProcedureRouteOptions,
): ProcedureRoute {
  return procedureRoute(route, {
    ...options,
    entityTag,
    ifMatchHolds,
    matchingTag,
    bytesTag,
    onClosing: lifecycle.onClosing,
    sockets: lifecycle.sockets,
    compression:
      options.compressAbove === undefined
        ? undefined
        : { above: options.compressAbove, codings: nodeCodings, encode: encoded },
  });
}

/** An upload's body, read as the call reaches its input; its files go once the answer is sent or the client left. */
function uploadBodyOf(
  upload: UploadPlan,
  request: FastifyRequest,
  reply: FastifyReply,
  spools: Spools,
): UploadBody {
  const body = new UploadBody(upload, request.headers, nodeBodySource(request.raw), spools);
  reply.raw.once('close', () => {
    body.dispose().catch((error: unknown) => request.log.error({ err: error }, 'Removing an upload failed'));
  });
  return body;
}

/**
 * One procedure's Fastify handler: synchronous while every step is, then continued with `then`:
 * no async function's promise and resumption per request where nothing waits
 * (docs/architecture.md, "A request").
 */
class FastifyProcedure {
  readonly #procedure: ProcedureRoute;
  readonly #context: ContextPipeline;
  readonly #lifecycle: Lifecycle;
  readonly #cookieSigner: CookieSigner;
  readonly #traced: boolean;

  constructor(
    procedure: ProcedureRoute,
    context: ContextPipeline,
    lifecycle: Lifecycle,
    { cookieSigner, traced }: ProcedureRouteOptions,
  ) {
    this.#procedure = procedure;
    this.#context = context;
    this.#lifecycle = lifecycle;
    this.#cookieSigner = cookieSigner;
    this.#traced = traced;
  }

  answer(request: FastifyRequest, reply: FastifyReply, body: unknown): unknown {
    if (this.#lifecycle.phase !== 'serving') {
      if (this.#lifecycle.arrivedWhileClosing(request.raw)) throw closingRefusal();
      // Keep-alive clients reconnect, through the load balancer, to another instance.
      reply.header('connection', 'close');
    }
    this.#procedure.refuseCrossSite(request.method, request.headers, () => ownOrigin(request));
    const requestTrace = this.#traced ? traceOf(request.raw) : undefined;
    const made = this.#context.build(new FastifyRequestInfo(request, this.#cookieSigner));
    return made instanceof Promise
      ? made.then((ctx) => this.#run(request, reply, body, ctx, requestTrace))
      : this.#run(request, reply, body, made, requestTrace);
  }

  #run(
    request: FastifyRequest,
    reply: FastifyReply,
    body: unknown,
    ctx: Call['ctx'],
    requestTrace: RequestTrace | undefined,
  ): unknown {
    const call: Call = {
      ctx,
      params: request.params as Record<string, string>,
      query: request.query as Record<string, unknown> | undefined,
      body,
      ifMatch: request.headers['if-match'],
      trace: requestTrace?.steps,
    };
    const pending = this.#procedure.call.run(call, request.headers['idempotency-key']);
    return pending instanceof Promise
      ? pending.then((result) => this.#send(request, reply, result, requestTrace))
      : this.#send(request, reply, pending, requestTrace);
  }

  #send(
    request: FastifyRequest,
    reply: FastifyReply,
    result: Answered,
    requestTrace: RequestTrace | undefined,
  ): unknown {
    const answered = this.#procedure.answer(new FastifyAnsweredRequest(request, reply), result);
    return answered instanceof Promise
      ? answered.then((each) => write(reply, each, requestTrace, this.#lifecycle))
      : write(reply, answered, requestTrace, this.#lifecycle);
  }
}
