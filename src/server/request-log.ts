/**
 * The request log (docs/deployment.md, "Logs"): one line per request at `info`, written as cheaply
 * as a line can be. Three things make a log line cost: a pino child logger made for every request,
 * pino's generic serialization of the request and reply, and a write system call per line. Here a
 * request's child logger is made only when something logs through it; the one line is composed
 * directly, with exactly the fields and order pino would give it, for all requests done within
 * one turn of the event loop at its end; and lines to stdout are written with one call per turn.
 */
import type { FastifyBaseLogger, FastifyReply, FastifyRequest, LogController } from 'fastify';
import type { Logger } from 'pino';
import { loggedUrl } from '../http/url.js';
import type { TraceFields } from './log-output.js';
import { handedToPipeline } from './pipeline-route.js';
import { field, RequestLines } from './request-lines.js';

export type { TraceFields } from './log-output.js';

type LogMethod = (...args: unknown[]) => void;
const methods = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

/**
 * A request's logger, made into a pino child (with its `reqId`) only when something logs
 * through it: most requests never do, beside their one line.
 */
class LazyChild {
  readonly #parent: Logger;
  readonly #bindings: Record<string, unknown>;
  readonly #options: { level?: string };
  /**
   * The value of a route's own `logLevel` (checked when the route was added), or undefined: the
   * parent's level says nothing of what such a child writes.
   */
  readonly #ownLevel: number | undefined;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: Logger, bindings: Record<string, unknown>, options: { level?: string }) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
    this.#ownLevel = options.level === undefined ? undefined : parent.levels.values[options.level];
  }

  get level(): string {
    return this.#child?.level ?? this.#options.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  isLevelEnabled(level: string): boolean {
    if (this.#child !== undefined) return (this.#child as unknown as Logger).isLevelEnabled(level);
    return this.#enabled(level);
  }

  /** Whether this child, made or not, writes `level`: decided without making it. */
  #enabled(level: string): boolean {
    const own = this.#ownLevel;
    if (own === undefined) return this.#parent.isLevelEnabled(level);
    const value = this.#parent.levels.values[level];
    return value !== undefined && value >= own;
  }

  bindings(): Record<string, unknown> {
    return { ...this.#parent.bindings(), ...this.#bindings };
  }

  child(bindings: Record<string, unknown>, options?: object): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }

  /** The pino child, made on first use. */
  #real(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options) as unknown as FastifyBaseLogger;
    return this.#child;
  }

  static {
    for (const level of methods) {
      Object.defineProperty(LazyChild.prototype, level, {
        value(this: LazyChild, ...args: unknown[]) {
          // A disabled level makes no child: `debug` on every request costs one comparison.
          if (this.#child === undefined && !this.#enabled(level)) return;
          (this.#real()[level] as LogMethod)(...args);
        },
      });
    }
  }
}

/**
 * Fastify's `childLoggerFactory` for an app whose logger Fastify does not hold
 * (src/server/fastify.ts): a {@link LazyChild} of `logger` for every request.
 */
export function lazyChildLoggers(
  logger: Logger,
): (this: unknown, parent: unknown, bindings: Record<string, unknown>, options: object) => FastifyBaseLogger {
  return (_parent, bindings, options) =>
    new LazyChild(logger, bindings, options) as unknown as FastifyBaseLogger;
}

/** A request whose answer was already logged (as errored). */
const logged = new WeakSet<FastifyReply>();

/** A connection's `host`, `remoteAddress` and `remotePort` fields as last written, and their values. */
interface PeerFields {
  host: string | undefined;
  address: string | undefined;
  port: number | undefined;
  text: string;
}

const peerFieldsKey = Symbol('proceed.peerFields');

/**
 * `,"host":…,"remoteAddress":…,"remotePort":…` of a request's line. A keep-alive connection's
 * requests share them, so they are written once per connection and kept on its socket; a request
 * whose values differ (another `Host`, another client behind a trusted proxy) writes its own.
 */
function peerFields(request: FastifyRequest): string {
  const host = request.host;
  const address = request.ip;
  const socket = request.socket as (typeof request.socket & { [peerFieldsKey]?: PeerFields }) | undefined;
  const port = socket?.remotePort;
  const kept = socket?.[peerFieldsKey];
  if (kept !== undefined && kept.host === host && kept.address === address && kept.port === port)
    return kept.text;
  const text = `${field('host', host)}${field('remoteAddress', address)}${field('remotePort', port)}`;
  if (socket !== undefined) socket[peerFieldsKey] = { host, address, port, text };
  return text;
}

function isEventStream(reply: FastifyReply): boolean {
  const type = reply.getHeader('content-type');
  return typeof type === 'string' && type.startsWith('text/event-stream');
}

/** What the adapter holds of its request log. */
export interface RequestLogController extends LogController {
  attach(logger: Logger): void;
  writeHeld(): void;
}

const controllers = new WeakMap<
  typeof LogController,
  new (
    traceFields?: TraceFields,
  ) => RequestLogController
>();

/**
 * The request log of Fastify's own routes: a `LogController` of the Fastify that was loaded
 * (src/server/fastify.ts loads it when an app first asks for it), made once.
 */
export function oneLinePerRequest(
  Base: typeof LogController,
  traceFields?: TraceFields,
): RequestLogController {
  let made = controllers.get(Base);
  if (made === undefined) {
    made = oneLinePerRequestOf(Base);
    controllers.set(Base, made);
  }
  return new made(traceFields);
}

/**
 * One log line per request at `info`, when its connection is done with it: "request completed"
 * (method, URL, client address, status, time, request id), or "request aborted" when the client
 * left before the answer was sent. Fastify's default writes a second line on arrival; here that
 * one is `debug`. The line's values are taken on the response's `close`, which every request
 * has, those the router refuses before any route (a malformed URL) included. `disabled` is the
 * controller's `isLogDisabled`.
 */
class FastifyRequestLines {
  /** The app's logger, once Fastify made it (`attach`). */
  #logger: Logger | undefined;
  readonly #lines: RequestLines;
  readonly #disabled: (request: FastifyRequest) => boolean;

  constructor(traceFields: TraceFields | undefined, disabled: (request: FastifyRequest) => boolean) {
    this.#lines = new RequestLines(traceFields);
    this.#disabled = disabled;
  }

  /** Takes the app's logger. */
  attach(logger: Logger): void {
    this.#logger = logger;
    this.#lines.attach(logger);
  }

  incoming(request: FastifyRequest, reply: FastifyReply): void {
    const started = performance.now();
    // An answer written after its end (a bug of the route) emits 'error': logged with its
    // request, never left to crash the process as an unheard 'error', whatever the level.
    reply.raw.on('error', (error: Error) => this.errored(error, request, reply, started));
    const logger = this.#logger;
    if (logger === undefined || this.#disabled(request)) return;
    // Asked first: a disabled debug line then costs no object, no call with its arguments.
    // A child logger factory of the app's may make loggers without `isLevelEnabled`.
    const log = request.log as FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean };
    // A request no route of Fastify's takes goes to the app's pipeline, which logs its arrival.
    if (!request.is404 && (log.isLevelEnabled === undefined || log.isLevelEnabled('debug')))
      log.debug({ req: request }, 'incoming request');
    // Above info (LOG_LEVEL=warn, or a route's own `logLevel: 'silent'`, as Fastify's own line
    // would be) there is no line to write: nothing to wait for either.
    if (!(log.isLevelEnabled?.('info') ?? logger.isLevelEnabled('info'))) return;
    // `on`, not `once`: an answer closes once, and once's wrapper would cost every request.
    reply.raw.on('close', () => {
      // The app's pipeline answered it, and wrote its line.
      if (logged.has(reply) || handedToPipeline(request.raw)) return;
      this.#lines.hold({
        id: request.id,
        method: request.method,
        url: loggedUrl(request.url),
        version: request.headers['accept-version'],
        peer: peerFields(request),
        status: reply.statusCode,
        milliseconds: performance.now() - started,
        // An event stream ends when its client leaves: its normal end, not an abort; a
        // WebSocket's handshake is done once upgraded (101).
        completed: reply.raw.writableEnded || reply.statusCode === 101 || isEventStream(reply),
      });
    });
  }

  /** Writes the lines of the requests held so far (on close). */
  writeHeld(): void {
    this.#lines.writeHeld();
  }

  errored(error: Error, request: FastifyRequest, reply: FastifyReply, started?: number): void {
    if (logged.has(reply)) return;
    logged.add(reply);
    if (this.#logger === undefined || this.#disabled(request)) return;
    const responseTime = started === undefined ? reply.elapsedTime : performance.now() - started;
    reply.log.error({ req: request, res: reply, err: error, responseTime }, 'request errored');
  }
}

/** The `LogController` of a loaded Fastify that writes {@link FastifyRequestLines}. */
function oneLinePerRequestOf(
  Base: typeof LogController,
): new (
  traceFields?: TraceFields,
) => RequestLogController {
  return class OneLinePerRequest extends Base {
    readonly #lines: FastifyRequestLines;

    constructor(traceFields?: TraceFields) {
      super();
      this.#lines = new FastifyRequestLines(traceFields, (request) => this.isLogDisabled(request));
    }

    attach(logger: Logger): void {
      this.#lines.attach(logger);
    }

    writeHeld(): void {
      this.#lines.writeHeld();
    }

    override incomingRequest(request: FastifyRequest, reply: FastifyReply): void {
      this.#lines.incoming(request, reply);
    }

    /**
     * A client that leaves a streamed answer (an event stream's normal end, a download cut short)
     * is said by the request line alone; Fastify's own "stream closed prematurely" is `debug`.
     */
    override streamError(
      error: Error & { code?: string },
      request: FastifyRequest,
      reply: FastifyReply,
    ): void {
      if (error.code !== 'ERR_STREAM_PREMATURE_CLOSE') super.streamError(error, request, reply);
      else if (!this.isLogDisabled(request)) request.log.debug({ res: reply }, 'stream closed by the client');
    }

    override requestCompleted(
      error: Error | null | undefined,
      request: FastifyRequest,
      reply: FastifyReply,
    ): void {
      if (error) this.#lines.errored(error, request, reply);
    }
  };
}
