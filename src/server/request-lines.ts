/**
 * The request log's lines (docs/deployment.md, "Logs"), composed as cheaply as a line can be, for
 * every server: the Fastify adapter (src/server/request-log.ts), and the pipeline of `app.fetch`
 * and of Node's own http server (src/server/app-fetch.ts). Each line is composed directly, with
 * the fields and order pino would give `{ req, res, responseTime }` at `info` (a traced request's
 * ids come after `responseTime`, where pino's mixin would put them after `hostname`), for all
 * requests done within one turn of the event loop at its end; lines to standard output are written
 * with one call per turn. Nothing here knows Fastify.
 */
import { type Logger, pino } from 'pino';
import { atTurnEnd, beforeStandardOutputWrites, isStandardOutput, type TraceFields } from './log-output.js';

/** Where a pino logger writes its lines. */
const streamOf = (logger: Logger) =>
  (logger as unknown as Record<symbol, { write(line: string): void } | undefined>)[pino.symbols.streamSym];

const json = JSON.stringify;

/** Text that JSON writes as it is between its quotes: printable ASCII but `"` and `\`. */
const plain = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * A string in JSON, as `JSON.stringify` writes it. A line's values (a URL, a host, an address)
 * almost never need escaping, and testing that is cheaper than a call to the serializer.
 */
const quoted = (text: string): string => (plain.test(text) ? `"${text}"` : json(text));

/** `,"name":value` in JSON, or nothing for undefined: what pino leaves out. */
export const field = (name: string, value: unknown): string =>
  value === undefined ? '' : `,"${name}":${typeof value === 'string' ? quoted(value) : json(value)}`;

/** How many values a held request line has (`hold`). */
const heldFields = 10;
const completed = '"request completed"';
const aborted = '"request aborted: the client left before the answer was sent"';

/** Request logs holding lines: written when the process exits, before standard output's last write. */
const waiting = new Set<RequestLines>();
let writesOnExit = false;

function writeWaitingOnExit(): void {
  if (writesOnExit) return;
  writesOnExit = true;
  process.prependListener('exit', writeWaiting);
  beforeStandardOutputWrites(writeWaiting);
}

/**
 * Writes the lines every request log holds. A stream that throws costs its own lines, never the
 * other logs' or standard output's last write.
 */
function writeWaiting(): void {
  for (const log of waiting) {
    try {
      log.writeHeld();
    } catch {
      // nowhere left to report it
    }
  }
}

/**
 * Writes on the app's stream. One that throws (a stream of the app's own) costs that line, never
 * the process: the lines are written at the end of a turn, where nothing would catch it.
 */
function written(stream: { write(line: string): void }, text: string): void {
  try {
    stream.write(text);
  } catch {
    // nowhere left to report it
  }
}

/** What a request's line says of it. */
export interface RequestLine {
  readonly id: string;
  readonly method: string;
  /** As logged: src/http/url.ts `loggedUrl`. */
  readonly url: string;
  /** The request's `Accept-Version`, as pino's request serializer reads it. */
  readonly version: string | string[] | undefined;
  /** `,"host":…,"remoteAddress":…,"remotePort":…`, as `field` writes them. */
  readonly peer: string;
  readonly status: number;
  readonly milliseconds: number;
  /** Whether the answer was sent whole: "request completed", else "request aborted". */
  readonly completed: boolean;
}

/** One app's request lines: held as requests end, written together at the end of their turn. */
export class RequestLines {
  /** The app's logger, once there is one (`attach`). */
  #logger: Logger | undefined;
  /** `,"pid":…,"hostname":"…"`: the logger's own bindings, as pino writes them into a line. */
  #base = '';
  /** The trace ids of the request's span, written as pino's mixin would (docs/observability.md). */
  readonly #traceFields: TraceFields | undefined;
  /** The values of the lines not written yet, `heldFields` per request. */
  #held: unknown[] = [];

  constructor(traceFields?: TraceFields) {
    this.#traceFields = traceFields;
  }

  /** Takes the app's logger. */
  attach(logger: Logger): void {
    this.#logger = logger;
    writeWaitingOnExit();
    const chindings = (logger as unknown as Record<symbol, unknown>)[pino.symbols.chindingsSym];
    this.#base = typeof chindings === 'string' ? chindings : '';
  }

  /**
   * Keeps a finished request's values for its line: lines are composed together, once per turn
   * of the event loop, where composing each as it ends cost a cursor page several percent more
   * (docs/performance.md, "What the cursor page pays"). Called in the request's own context: its
   * trace ids are read now.
   */
  hold(line: RequestLine): void {
    this.#held.push(
      Date.now(),
      line.id,
      line.method,
      line.url,
      line.version,
      line.peer,
      line.status,
      line.milliseconds,
      this.#traced(),
      line.completed,
    );
    if (this.#held.length > heldFields) return;
    waiting.add(this);
    // Standard output's own end of turn takes them first when it is due (`batched`).
    atTurnEnd(this.writeHeld);
  }

  /** Writes the lines of the requests held so far: at the end of their turn, on close and on exit. */
  readonly writeHeld = (): void => {
    waiting.delete(this);
    const held = this.#held;
    if (held.length === 0) return;
    this.#held = [];
    const stream = this.#logger === undefined ? undefined : streamOf(this.#logger);
    if (stream === undefined) return;
    // Standard output takes the turn's lines as one text; another stream, as pino would, a line a write.
    const together = isStandardOutput(stream);
    let text = '';
    for (let at = 0; at < held.length; at += heldFields) {
      const line = this.#line(held, at);
      if (together) text += line;
      else written(stream, line);
    }
    if (together) written(stream, text);
  };

  /** The line pino would write for `{ req, res, responseTime }` at info, from the values held at `at`. */
  #line(held: unknown[], at: number): string {
    return (
      `{"level":30,"time":${held[at] as number}${this.#base}${field('reqId', held[at + 1])}` +
      `,"req":{"method":${quoted(held[at + 2] as string)}${field('url', held[at + 3])}` +
      `${field('version', held[at + 4])}${held[at + 5] as string}}` +
      `,"res":{"statusCode":${held[at + 6] as number}},"responseTime":${held[at + 7] as number}${held[at + 8] as string}` +
      `,"msg":${held[at + 9] === true ? completed : aborted}}\n`
    );
  }

  #traced(): string {
    const fields = this.#traceFields?.();
    if (fields === undefined) return '';
    let text = '';
    for (const name in fields) text += field(name, fields[name]);
    return text;
  }
}
