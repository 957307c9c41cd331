/**
 * Server-sent events (docs/events.md): a procedure declared with `.output(eventStream(schema))`
 * answers with the events its `async function*` handler yields, each written through the
 * schema's compiled serializer. This module describes the declaration and one event; the wire
 * format, keep-alives, backpressure and shutdown live in src/http/events.ts.
 */
import type { Credentials } from './credentials.js';
import type { StandardSchemaV1 } from './schema.js';

/** The default time between keep-alive comments, in ms: under the 30 s proxies commonly allow. */
export const defaultKeepAlive = 15_000;

/** The default time between checks of a stream's credentials, in ms, as a WebSocket's. */
export const defaultCredentialsCheck = 60_000;

/** The declaration behind `.output(eventStream(schema))`. */
export interface EventStreamOutput<S extends StandardSchemaV1 = StandardSchemaV1> {
  readonly '~events': true;
  /** What each event's `data` is (JSON through this schema's serializer). */
  readonly schema: S;
  /** ms between keep-alive comments while no event is sent. */
  readonly keepAlive: number;
  /** ms between checks of the credentials that opened the stream (docs/events.md, "Authentication"). */
  readonly credentialsCheck: number;
}

/**
 * Declares a procedure that answers with server-sent events (docs/events.md): its handler is an
 * `async function*` that yields each event's data (or {@link serverEvent} for an `id`, a name or
 * a `retry`); OpenAPI documents `text/event-stream`, and the typed client iterates the events.
 *
 * @example
 * procedure().output(eventStream(Post.public)).query(async function* ({ lastEventId, signal }) { … })
 */
export function eventStream<S extends StandardSchemaV1>(
  schema: S,
  options: { keepAlive?: number; credentialsCheck?: number } = {},
): EventStreamOutput<S> {
  const keepAlive = options.keepAlive ?? defaultKeepAlive;
  if (!Number.isInteger(keepAlive) || keepAlive < 1000 || keepAlive > 120_000)
    throw new TypeError(
      `eventStream: keepAlive must be a whole number of ms from 1000 to 120000 (got ${keepAlive})`,
    );
  const credentialsCheck = options.credentialsCheck ?? defaultCredentialsCheck;
  if (!Number.isInteger(credentialsCheck) || credentialsCheck < 100 || credentialsCheck > 3_600_000)
    throw new TypeError(
      `eventStream: credentialsCheck must be a whole number of ms from 100 to 3600000 (got ${credentialsCheck})`,
    );
  return Object.freeze({ '~events': true, schema, keepAlive, credentialsCheck });
}

export function isEventStreamOutput(value: unknown): value is EventStreamOutput {
  return (
    typeof value === 'object' && value !== null && (value as { '~events'?: unknown })['~events'] === true
  );
}

const lineBreak = /[\r\n]/;
/** The names of the frames a stream sends of its own: the app's events take other names. */
const reservedEvents = ['close', 'end', 'error'];

/** One event with its fields: what a handler yields when plain data is not enough. */
export class ServerEvent<T> {
  readonly data: T;
  /** Sent as `id:`; the client's `Last-Event-ID` when it reconnects. */
  readonly id: string | undefined;
  /** Sent as `event:`: the client's listener name (`message` when absent). */
  readonly event: string | undefined;
  /** Sent as `retry:`: how long the client waits before reconnecting, in ms. */
  readonly retry: number | undefined;

  constructor(data: T, options: { id?: string | number; event?: string; retry?: number } = {}) {
    const id = options.id === undefined ? undefined : String(options.id);
    // A line break would end the field early; NUL makes a client ignore the id.
    if (id !== undefined && (lineBreak.test(id) || id.includes('\u0000')))
      throw new TypeError('serverEvent: an id may not hold a line break or NUL');
    if (options.event !== undefined && (options.event === '' || lineBreak.test(options.event)))
      throw new TypeError('serverEvent: an event name must be non-empty, without line breaks');
    if (options.event !== undefined && reservedEvents.includes(options.event))
      throw new TypeError(
        `serverEvent: the event name "${options.event}" is the stream's own (close, end, error: docs/events.md)`,
      );
    if (options.retry !== undefined && (!Number.isInteger(options.retry) || options.retry < 0))
      throw new TypeError('serverEvent: retry must be a whole number of ms');
    this.data = data;
    this.id = id;
    this.event = options.event;
    this.retry = options.retry;
  }
}

/**
 * An event with an `id` (what `Last-Event-ID` names on a reconnect), a name or a `retry`.
 *
 * @example
 * yield serverEvent(post, { id: post.publishedSequence });
 */
export function serverEvent<T>(
  data: T,
  options: { id?: string | number; event?: string; retry?: number } = {},
): ServerEvent<T> {
  return new ServerEvent(data, options);
}

/**
 * What a resumed stream does with a `Last-Event-ID` it cannot place in its log (docs/events.md,
 * "Resuming"): `live` sends the events from now on; `replay` sends every event the log still
 * keeps first.
 */
export type UnplacedEventId = 'live' | 'replay';

/** The ids of a log of events: whole numbers that grow, from `first` on in its current epoch. */
export interface EventLogBounds {
  /**
   * The first id of the log's current epoch: a new database, a restored one, an in-memory log
   * after a restart. A smaller id was given out by another epoch and names nothing here.
   */
  readonly first: bigint | number | string;
  /** The newest id the log has given out; `first - 1` while it has none. */
  readonly newest: bigint | number | string;
}

/** A decimal id as the log writes them: digits only, at most 19 (a PostgreSQL `bigint`). */
const decimalId = /^\d{1,19}$/;

/**
 * Where a stream resumes: the id after which to send the events the log still keeps, or
 * `undefined` for live events only. A client that sends no `Last-Event-ID` gets live events; one
 * whose id the log cannot place (not a decimal id, below the epoch's `first`, above its
 * `newest`: it came from another epoch, a restored database, or was made up) gets what `unplaced`
 * says, `live` by default. Never an id above `newest`, which would hold back every live event
 * until the log passed it.
 *
 * @example
 * const after = resumeAfter(lastEventId, await feed.bounds(), { unplaced: 'replay' });
 * if (after !== undefined) for (const event of await feed.since(after)) yield serverEvent(event, { id: event.id });
 */
export function resumeAfter(
  lastEventId: string | undefined,
  log: EventLogBounds,
  options: { unplaced?: UnplacedEventId } = {},
): bigint | undefined {
  if (lastEventId === undefined) return undefined;
  const first = BigInt(log.first);
  const newest = BigInt(log.newest);
  const id = lastEventId.trim();
  if (decimalId.test(id)) {
    const last = BigInt(id);
    // first - 1: the client saw nothing of this epoch yet, or the log's own "before the first".
    if (last >= first - 1n && last <= newest) return last;
  }
  return (options.unplaced ?? 'live') === 'replay' ? first - 1n : undefined;
}

/**
 * The first id of an epoch that starts now: the time in ms × 1000. Ids of a later epoch start
 * above every id of an earlier one (while it gave out fewer than 1000 a ms between the two
 * starts), so a client's id from before a restart is told apart from the ids after it.
 */
export function epochStart(now: number = Date.now()): bigint {
  return BigInt(Math.floor(now)) * 1000n;
}

/**
 * Ids for the events of one process's in-memory log: they start at {@link epochStart} when it is
 * made, so ids from before a restart are placed apart from the new ones (docs/events.md).
 *
 * @example
 * const ids = new EventSequence();
 * yield serverEvent(post, { id: ids.next() });
 * const after = ids.resumeAfter(lastEventId); // undefined: live only
 */
export class EventSequence implements EventLogBounds {
  readonly first: bigint;
  #newest: bigint;

  constructor(first: bigint = epochStart()) {
    this.first = first;
    this.#newest = first - 1n;
  }

  get newest(): bigint {
    return this.#newest;
  }

  /** The next id, as `serverEvent` takes it. */
  next(): string {
    this.#newest += 1n;
    return String(this.#newest);
  }

  /** {@link resumeAfter} on this sequence. */
  resumeAfter(
    lastEventId: string | undefined,
    options: { unplaced?: UnplacedEventId } = {},
  ): bigint | undefined {
    return resumeAfter(lastEventId, this, options);
  }
}

/** What the handler of an event-stream procedure returns: its events, as it yields them. */
export type EventStreamOf<T> = AsyncIterable<T | ServerEvent<T> | StreamReconnect>;

/** What {@link reconnectStream} gives: the stream's end as a drop, not as its last event. */
export class StreamReconnect {
  readonly reason = 'reconnect';
}

const reconnect = Object.freeze(new StreamReconnect());

/**
 * Ends the stream as dropped rather than over: yielded, it sends `event: close` and ends, and the
 * typed client reconnects at once with `Last-Event-ID` (a reader fallen too far behind resumes
 * from the store). A handler that returns ends its stream as over (`event: end`: docs/events.md).
 *
 * @example
 * if (overflowed) { yield reconnectStream(); return; }
 */
export function reconnectStream(): StreamReconnect {
  return reconnect;
}

/** What an event-stream handler receives besides its input and context. */
export interface EventStreamOptions {
  /** The `Last-Event-ID` a reconnecting client sent: resume after it. */
  readonly lastEventId: string | undefined;
  /** Aborted when the client leaves or the app closes: end every wait with it. */
  readonly signal: AbortSignal;
}

/** An event-stream answer, from the core to an adapter (src/http/events.ts writes it). */
export interface EventsAnswer {
  readonly source: AsyncIterable<unknown>;
  /** Writes one event's data as JSON, through the output schema's serializer. */
  readonly serialize: (data: unknown) => string | Promise<string>;
  readonly keepAlive: number;
  /** The handler's signal: aborted when the client leaves or the stream ends. */
  readonly signal: AbortSignal;
  /** Aborts the handler's signal; adapters call it when the client leaves. */
  readonly abort: () => void;
  /** Who signed in the request (the credentials' holder), as the per-client limit counts it. */
  readonly holder: string | undefined;
  /** What signed in the request, when something kept them: the stream ends once they lapse. */
  readonly credentials: Credentials | undefined;
  /** ms between checks of `credentials`. */
  readonly credentialsCheck: number;
  /** Whether the route's guards still let the caller in, after a check of `credentials` that holds. */
  readonly stillAllowed: (() => Promise<boolean>) | undefined;
}
