/**
 * Server-sent events (docs/events.md): a procedure declared with `.output(eventStream(schema))`
 * answers with the events its `async function*` handler yields, each written through the
 * schema's compiled serializer. This module describes the declaration and one event; the wire
 * format, keep-alives, backpressure and shutdown live in src/http/events.ts.
 */
import type { StandardSchemaV1 } from './schema.js';

/** The default time between keep-alive comments, in ms: under the 30 s proxies commonly allow. */
export const defaultKeepAlive = 15_000;

/** The declaration behind `.output(eventStream(schema))`. */
export interface EventStreamOutput<S extends StandardSchemaV1 = StandardSchemaV1> {
  readonly '~events': true;
  /** What each event's `data` is (JSON through this schema's serializer). */
  readonly schema: S;
  /** ms between keep-alive comments while no event is sent. */
  readonly keepAlive: number;
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
  options: { keepAlive?: number } = {},
): EventStreamOutput<S> {
  const keepAlive = options.keepAlive ?? defaultKeepAlive;
  if (!Number.isInteger(keepAlive) || keepAlive < 1000 || keepAlive > 120_000)
    throw new TypeError(
      `eventStream: keepAlive must be a whole number of ms from 1000 to 120000 (got ${keepAlive})`,
    );
  return Object.freeze({ '~events': true, schema, keepAlive });
}

export function isEventStreamOutput(value: unknown): value is EventStreamOutput {
  return (
    typeof value === 'object' && value !== null && (value as { '~events'?: unknown })['~events'] === true
  );
}

const lineBreak = /[\r\n]/;

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

/** What the handler of an event-stream procedure returns: its events, as it yields them. */
export type EventStreamOf<T> = AsyncIterable<T | ServerEvent<T>>;

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
}
