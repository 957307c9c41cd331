/**
 * The handlers `app.fetch` routes to (src/http/fetch.ts): a procedure's route, read from a
 * `Request` and written as a `Response` from the neutral answer of src/http/procedure-answer.ts,
 * and a route beside the procedures (src/http/app-routes.ts).
 */
import { ProceedError } from '../core/errors.js';
import type { ByteRange, FileAnswer } from '../core/files.js';
import type { BaseContext } from '../core/request-context.js';
import type { MountedRoute } from '../core/route-table.js';
import { uploadPlanOf } from '../core/uploads.js';
import { type AppRoute, sentRouteAnswer } from './app-routes.js';
import { jsonBodyRefusal, parseJson, readBytes, sendsBody } from './fetch-body.js';
import type { FetchCore, HeaderRecord } from './fetch-core.js';
import {
  type Exchange,
  FetchAnsweredRequest,
  FetchRequestInfo,
  FetchRouteRequest,
  queryRecord,
  type RouteHandler,
} from './fetch-request.js';
import { disposingAfter, webBodySource } from './fetch-upload.js';
import { webBody } from './files.js';
import { lingeringBytes } from './lingering.js';
import { closingRefusal } from './problems.js';
import { type ProcedureAnswer, procedureRoute } from './procedure-answer.js';
import { pulledStream } from './pulled-stream.js';
import { runtime } from './runtime.js';
import { SentAnswer, type SentBody } from './sent.js';
import { framesInTrace } from './tracing.js';
import { UploadBody, uploadRefusal } from './uploads.js';

const noCookies: readonly string[] = [];
/** Decodes a whole body at a time (never streaming), so one decoder serves every request. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** A route of the app beside its procedures, served as Fastify serves it on Node. */
export function appRouteHandler(core: FetchCore, route: AppRoute): RouteHandler {
  const limit = route.bodyLimit ?? core.bodyLimit;
  return {
    observed: { procedure: undefined, path: route.path },
    async serve(exchange) {
      // The body is read, up to the route's limit, before the handler runs, as Fastify reads it
      // on Node: a body past the limit is a 413 whatever the handler would have said.
      const { method } = exchange;
      const bytes =
        method === 'GET' || method === 'HEAD' ? new Uint8Array(0) : await readBytes(exchange.request, limit);
      const answered = route.handler(new FetchRouteRequest(exchange, bytes, core.requestLogOf));
      const answer = answered instanceof Promise ? await answered : answered;
      // Only a GET (or its HEAD) is answered 304 for a tag the client holds.
      const ifNoneMatch =
        method === 'GET' || method === 'HEAD' ? exchange.header('if-none-match') : undefined;
      const { status, headers, body } = sentRouteAnswer(
        answer,
        ifNoneMatch === undefined ? undefined : (tag) => core.matchingTag(ifNoneMatch, tag) !== undefined,
      );
      // The handler's own id wins, as on Node.
      if (core.requestIds) headers['x-request-id'] ??= exchange.id;
      return new SentAnswer(status, headers, noCookies, body);
    },
  };
}

/** A request's body as the call takes it: an upload read when its input is, or parsed JSON. */
interface ReadBody {
  body: unknown;
  uploaded: UploadBody | undefined;
}

/** How a procedure's route reads its request's body: an upload's parts as its input reads them, JSON whole. */
function bodyReader(
  core: FetchCore,
  route: MountedRoute,
): (exchange: Exchange, headers: HeaderRecord) => Promise<ReadBody> {
  // Any body sent to a write is read and checked, as on Node, even where the input ignores it.
  const readsBody = route.method !== 'GET';
  const upload = uploadPlanOf(route, core.uploads);
  return async (exchange, headers) => {
    const { request } = exchange;
    if (upload !== undefined) {
      const source = webBodySource(request, lingeringBytes(upload.limits.total));
      const refusal = uploadRefusal(upload, headers);
      if (refusal !== undefined) {
        exchange.connection = source.readsRest ? 'keep' : 'close';
        await source.cancel();
        throw refusal;
      }
      // Read when the call reaches its input, after the guards (src/core/uploads.ts).
      const uploaded = new UploadBody(upload, headers, source, core.spools);
      return { body: uploaded, uploaded };
    }
    if (!readsBody || (headers['content-type'] === undefined && !sendsBody(headers, request)))
      return { body: undefined, uploaded: undefined };
    const refusal = jsonBodyRefusal(headers);
    if (refusal !== undefined) throw refusal;
    let text: string;
    try {
      text = strictUtf8.decode(await readBytes(request, core.bodyLimit));
    } catch (error) {
      if (error instanceof ProceedError) throw error;
      throw new ProceedError('INVALID_JSON', 'Body is not valid UTF-8');
    }
    return { body: parseJson(text), uploaded: undefined };
  };
}

/** One procedure's route: the same steps, in the same order, as its Node route. */
export function procedureHandler(core: FetchCore, route: MountedRoute): RouteHandler {
  return new FetchProcedure(core, route);
}

/** `next` of `value`, at once when it is no promise: no promise is made where nothing waits. */
const then = <T, U>(value: T | Promise<T>, next: (each: T) => U | Promise<U>): U | Promise<U> =>
  value instanceof Promise ? value.then(next) : next(value);

/**
 * A procedure's route on `app.fetch`. Synchronous while every step is (a read without a body, a
 * context and a handler that answer at once), continued with `then` where one waits
 * (docs/architecture.md, "A request").
 */
class FetchProcedure implements RouteHandler {
  readonly observed: RouteHandler['observed'];
  readonly #core: FetchCore;
  readonly #procedure: ReturnType<typeof procedureRoute>;
  readonly #limiter: ReturnType<FetchCore['rateLimits']['limiterFor']>;
  readonly #readBody: ReturnType<typeof bodyReader>;
  /** Neither an upload nor a write: no body is ever read. */
  readonly #bodiless: boolean;
  /** A GET's route (HEAD too): its call never looks at If-Match (src/core/execute.ts). */
  readonly #reads: boolean;
  /** A socket procedure's route: its handshake may carry a token in its query. */
  /** The kind of the route's output: a socket's and a stream's requests say what they open. */
  readonly #outputKind: string | undefined;

  constructor(core: FetchCore, route: MountedRoute) {
    this.observed = { procedure: `${route.collection}.${route.name}`, path: route.path };
    this.#core = core;
    this.#procedure = procedureRoute(route, core);
    this.#limiter = core.rateLimits.limiterFor(route);
    this.#readBody = bodyReader(core, route);
    this.#reads = route.method === 'GET';
    this.#outputKind = route.definition.output?.kind;
    this.#bodiless = this.#reads && uploadPlanOf(route, core.uploads) === undefined;
  }

  serve(exchange: Exchange): SentAnswer | Promise<SentAnswer> {
    if (this.#core.closing()) throw closingRefusal();
    // Counted before anything else of the route runs, as on Node: a flood costs a lookup.
    if (this.#limiter === undefined) return this.#read(exchange);
    return then(this.#limiter.check(exchange.ip), (checked) => {
      exchange.limitHeaders = checked;
      return this.#read(exchange);
    });
  }

  #read(exchange: Exchange): SentAnswer | Promise<SentAnswer> {
    // A read looks at a header or two: the record of them all is made only when asked for.
    if (this.#bodiless) {
      const answered = this.#answerOf(exchange, undefined, undefined);
      return then(answered, (answer) => responseOf(exchange, answer, undefined));
    }
    return this.#readBody(exchange, exchange.headers).then((read) => this.#withBody(exchange, read));
  }

  async #withBody(exchange: Exchange, { body, uploaded }: ReadBody): Promise<SentAnswer> {
    let answer: ProcedureAnswer;
    try {
      // After the body, as on Node: a malformed body is a 400 whoever sent it (a read takes none
      // and is never refused as cross-site).
      this.#procedure.refuseCrossSite(exchange.method, exchange.headers, () => exchange.origin);
      answer = await this.#answerOf(exchange, body, uploaded);
    } catch (error) {
      // A body left unread closes the connection; one read to its end (and dropped) need not.
      if (uploaded !== undefined) {
        exchange.connection = uploaded.readsRest ? 'keep' : 'close';
        await uploaded.dispose();
      }
      throw error;
    }
    return responseOf(exchange, answer, uploaded);
  }

  /** The call, from the context to the neutral answer (src/http/procedure-answer.ts). */
  #answerOf(
    exchange: Exchange,
    body: unknown,
    uploaded: UploadBody | undefined,
  ): ProcedureAnswer | Promise<ProcedureAnswer> {
    const core = this.#core;
    const procedure = this.#procedure;
    const params = exchange.params as Record<string, string>;
    const made = core.buildContext(
      new FetchRequestInfo(
        exchange,
        exchange.method,
        params,
        core.cookieSigner,
        core.requestLogOf,
        this.#outputKind,
      ),
    );
    const ran = then(made, (ctx) =>
      procedure.call.run(
        {
          ctx: ctx as BaseContext & { user?: unknown },
          params,
          query: queryRecord(exchange.search),
          body,
          // A read's If-Match is compared with the tag of its answer (procedure-answer.ts), not by the call.
          ifMatch: this.#reads ? undefined : exchange.header('if-match'),
          trace: exchange.trace?.steps,
        },
        // Only a POST replays by key (src/http/procedure-call.ts): a read never looks for one.
        exchange.method === 'POST' ? exchange.header('idempotency-key') : undefined,
      ),
    );
    return then(ran, (result) => {
      // An answer made without the input (a step that answered itself) left the body unread.
      if (uploaded !== undefined && !uploaded.started)
        exchange.connection = uploaded.readsRest ? 'keep' : 'close';
      return procedure.answer(new FetchAnsweredRequest(exchange, core.requestLogOf), result);
    });
  }
}

/** The neutral answer as the adapter sends it; an upload's files go once it is made or its file sent. */
function responseOf(
  exchange: Exchange,
  answer: ProcedureAnswer,
  uploaded: UploadBody | undefined,
): SentAnswer | Promise<SentAnswer> {
  // The rate limit's headers first: a handler's own of the same name wins, as on Node.
  const headers =
    exchange.limitHeaders === undefined ? answer.headers : { ...exchange.limitHeaders, ...answer.headers };
  const sent = answer.body;
  if (sent.kind === 'file')
    return fileResponse(sent.file, sent.range, uploaded, answer.status, headers, answer.cookies);
  if (sent.kind === 'socket') return socketResponse(exchange, sent, headers, answer.cookies);
  const body = sentBody(exchange, sent);
  // The files of an upload go once the answer is made.
  if (uploaded !== undefined)
    return uploaded.dispose().then(() => new SentAnswer(answer.status, headers, answer.cookies, body));
  return new SentAnswer(answer.status, headers, answer.cookies, body);
}

function sentBody(
  exchange: Exchange,
  sent: Exclude<ProcedureAnswer['body'], { kind: 'file' | 'socket' }>,
): SentBody {
  switch (sent.kind) {
    case 'none':
    case 'head':
      return null;
    case 'text':
      return sent.text;
    case 'bytes':
      return sent.bytes;
    case 'events':
      return eventBody(exchange, sent.frames, sent.abort);
  }
}

/** A WebSocket's handshake, completed by the runtime (docs/sockets.md). */
function socketResponse(
  exchange: Exchange,
  sent: Extract<ProcedureAnswer['body'], { kind: 'socket' }>,
  headers: Record<string, string>,
  cookies: readonly string[],
): SentAnswer {
  const upgrade = exchange.request.upgradeSocket ?? runtime.upgradeSocket;
  if (upgrade === undefined) {
    sent.session.ended();
    throw new ProceedError(
      'UNAVAILABLE',
      `app.fetch on ${runtime.name} opens no WebSockets: serve the app with app.listen() (docs/sockets.md)`,
    );
  }
  // Read before the upgrade: Deno's request is closed once it is upgraded, its peer and headers
  // with it.
  void exchange.ip;
  void exchange.lineFields;
  const lines: [string, string][] = Object.entries(headers);
  for (const cookie of cookies) lines.push(['set-cookie', cookie]);
  const handshake = upgrade({
    request: exchange.request,
    argument: exchange.argument,
    session: sent.session,
    frameLimit: sent.frameLimit,
    pingInterval: sent.session.pingInterval,
    headers: lines,
  });
  return new SentAnswer(101, headers, cookies, null, handshake);
}

/** A file's answer; an upload's files go once it is sent or abandoned (it may be one of them). */
async function fileResponse(
  file: FileAnswer,
  range: ByteRange | undefined,
  uploaded: UploadBody | undefined,
  status: number,
  headers: Record<string, string>,
  cookies: readonly string[],
): Promise<SentAnswer> {
  try {
    const answer = new SentAnswer(status, headers, cookies, await fileBody(file, range, uploaded));
    answer.readsFile = file.source.bytes === undefined;
    return answer;
  } catch (error) {
    // The file could not be read: nothing is sent, and the upload's files go now.
    file.source.discard();
    await uploaded?.dispose();
    throw error;
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
): Promise<SentBody> {
  const { blob } = file.source;
  if (uploaded === undefined)
    return !runtime.streamsKeepLength && blob !== undefined ? blob(range) : webBody(file.source.read(range));
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
