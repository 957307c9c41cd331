/**
 * Server-sent events on the wire (docs/events.md), the same on every adapter: `text/event-stream`
 * frames (`id`, `event`, `retry`, `data` split on line breaks), a keep-alive comment whenever the
 * stream was quiet for the procedure's interval, an `error` event carrying the problem when the
 * handler fails after the stream opened, and a final `close` event when the app shuts down or the
 * credentials that opened the stream lapse (an `error` event once its guards refuse). The
 * frames are an async generator that advances the handler's only when its reader asks for the
 * next frame, so a slow client holds the handler back instead of filling memory; ending it (the
 * client left, the app closes) aborts the handler's signal and returns its generator.
 */
import { ProceedError } from '../core/errors.js';
import { type EventsAnswer, ServerEvent, StreamReconnect } from '../core/events.js';
import { credentialsCloseCodes, watchCredentials } from './socket-credentials.js';

/** The headers of an event stream: never cached, never buffered by a proxy, never sniffed. */
export const eventStreamHeaders = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
  'x-content-type-options': 'nosniff',
} as const;

export const keepAliveFrame = ': keep-alive\n\n';

/** One event as `text/event-stream` writes it. */
export function eventFrame(
  data: string,
  fields: { id?: string; event?: string; retry?: number } = {},
): string {
  let frame = '';
  if (fields.event !== undefined) frame += `event: ${fields.event}\n`;
  if (fields.id !== undefined) frame += `id: ${fields.id}\n`;
  if (fields.retry !== undefined) frame += `retry: ${fields.retry}\n`;
  for (const line of data.split(/\r\n|\r|\n/)) frame += `data: ${line}\n`;
  return `${frame}\n`;
}

/**
 * The last frame of a stream the app closes: the typed client reconnects (elsewhere) at once on
 * it; `EventSource` after its reconnection time. No `retry: 0`: it would stay the client's delay
 * for every later reconnect, a tight loop while no instance answers.
 */
export const closingFrame = eventFrame('{"reason":"shutdown"}', { event: 'close' });

/**
 * The last frame of a stream whose handler returned: it is over, not dropped, so the typed
 * client ends its iteration instead of reconnecting (docs/events.md, "On the wire").
 */
export const endFrame = eventFrame('{}', { event: 'end' });

/** The last frame of a stream its handler ended as a drop ({@link reconnectStream}): reconnect at once. */
export const reconnectFrame = eventFrame('{"reason":"reconnect"}', { event: 'close' });

/**
 * The last frame of a stream whose credentials lapsed (the token is no longer taken, or was
 * revoked, the user deactivated): the typed client reconnects at once with a fresh token from its
 * token function, which a revoked session cannot have (its reconnect is a 401).
 */
export const credentialsFrame = eventFrame('{"reason":"credentials"}', { event: 'close' });

/**
 * The last frame of a stream whose credentials could not be checked twice running (their store
 * did not answer): the typed client reconnects after its reconnection time, backing off while the
 * server answers 503, rather than at once into the same outage.
 */
export const uncheckedFrame = eventFrame('{"reason":"unavailable"}', { event: 'close' });

/** The stream ends with `last`, sent as its final frame. */
interface Ending {
  readonly last: string;
}

type Pending = IteratorResult<unknown> | 'quiet' | 'left' | Ending;

/**
 * How long a stream waits for its first event before it opens with a comment instead: a handler
 * that waits for something to happen (a subscription) must not leave its client without an
 * answer, while one that fails its own checks at once still answers an ordinary problem.
 */
export const openWithin = 250;

/**
 * The frames of an event stream. The first frame (the first event, or a comment after
 * {@link openWithin} ms without one) is awaited before anything is sent: an error before it (the
 * handler's checks failing) rejects the first `next()`, and the adapter answers an ordinary
 * problem; after it, an error becomes an `error` event (the body `problemBody` makes of it) and
 * the stream ends. `onClosing` tells when the app shuts down; the reply's signal aborts
 * when the client leaves, which ends the frames at once, whatever the handler is waiting for.
 *
 * Each wait races fresh promises only: racing a long-lived one (the app's closing, the signal)
 * on every event would leave a reaction on it per event, which is memory a long stream never
 * gives back. The listeners are added once and removed when the stream ends.
 */
export async function* eventFrames(
  events: EventsAnswer,
  onClosing: (listener: () => void) => () => void,
  problemBody: (error: unknown) => string,
  log: { warn(object: object, message: string): void },
): AsyncGenerator<string, void, undefined> {
  const waits = new HandlerWaits(events, onClosing);
  // The stream lives on after its request: it ends once what signed it in no longer would.
  const { credentials } = events;
  const stopWatching =
    credentials === undefined
      ? undefined
      : watchCredentials(
          credentials,
          events.credentialsCheck,
          {
            close: (code, reason) =>
              waits.endWith(
                code === credentialsCloseCodes.noLongerAllowed
                  ? eventFrame(problemBody(new ProceedError('FORBIDDEN', `The stream ended: ${reason}`)), {
                      event: 'error',
                    })
                  : code === credentialsCloseCodes.tryAgain
                    ? uncheckedFrame
                    : credentialsFrame,
              ),
            log,
          },
          events.stillAllowed,
        );
  let opened = false;
  try {
    while (true) {
      const next = await waits.next(opened);
      if (next === 'left') return;
      if (next === 'quiet') {
        opened = true;
        yield keepAliveFrame;
        continue;
      }
      if ('last' in next) {
        yield next.last;
        return;
      }
      if (next.done === true) {
        yield endFrame;
        return;
      }
      // The handler asks for the end of a drop: the client comes back with Last-Event-ID.
      if (next.value instanceof StreamReconnect) {
        yield reconnectFrame;
        return;
      }
      const frame = eventFrameOf(next.value, events.serialize);
      const written = typeof frame === 'string' ? frame : await frame;
      opened = true;
      yield written;
    }
  } catch (error) {
    if (!opened) throw error;
    // The status is sent already: the problem travels as an event (its reason to the log).
    yield eventFrame(problemBody(error), { event: 'error' });
  } finally {
    stopWatching?.();
    waits.stop();
  }
}

type Wake = 'settled' | 'quiet' | 'left' | Ending;
type Outcome = { ok: true; value: IteratorResult<unknown> } | { ok: false; error: unknown };

/** What an event stream waits for between frames: the handler's next value, a quiet spell, the app closing, the client leaving. */
class HandlerWaits {
  readonly #events: EventsAnswer;
  readonly #iterator: AsyncIterator<unknown>;
  readonly #stopListening: () => void;
  readonly #left = () => this.#end('left');
  #ended: 'left' | Ending | undefined;
  /** The one waiter of this turn: what ends it (the handler, a quiet spell, the app, the client). */
  #wake: ((reason: Wake) => void) | undefined;
  // What the handler's next() gave, once it settles: one reaction per next(), however many
  // keep-alives pass while it is out.
  #asked = false;
  #outcome: Outcome | undefined;

  constructor(events: EventsAnswer, onClosing: (listener: () => void) => () => void) {
    this.#events = events;
    this.#iterator = events.source[Symbol.asyncIterator]();
    events.signal.addEventListener('abort', this.#left, { once: true });
    this.#stopListening = onClosing(() => this.endWith(closingFrame));
    if (events.signal.aborted) this.#end('left');
  }

  /** Ends the stream at its next wait, with `last` as its final frame (the first such end counts). */
  endWith(last: string): void {
    this.#end({ last });
  }

  #end(reason: 'left' | Ending): void {
    this.#ended ??= reason;
    this.#wake?.(this.#ended);
  }

  #ask(): void {
    this.#asked = true;
    this.#outcome = undefined;
    this.#iterator.next().then(
      (value) => {
        this.#outcome = { ok: true, value };
        this.#wake?.('settled');
      },
      (error: unknown) => {
        this.#outcome = { ok: false, error };
        this.#wake?.('settled');
      },
    );
  }

  /** What comes next; before the stream has `opened`, a quiet spell is {@link openWithin} at most. */
  async next(opened: boolean): Promise<Pending> {
    if (this.#ended !== undefined) return this.#ended;
    if (!this.#asked) this.#ask();
    let reason: Wake = 'settled';
    if (this.#outcome === undefined) {
      const { keepAlive } = this.#events;
      let timer: ReturnType<typeof setTimeout> | undefined;
      reason = await new Promise((resolve) => {
        this.#wake = resolve;
        timer = setTimeout(() => resolve('quiet'), opened ? keepAlive : Math.min(openWithin, keepAlive));
      });
      clearTimeout(timer);
      this.#wake = undefined;
    }
    if (reason !== 'settled') return reason;
    const settled = this.#outcome as Outcome;
    this.#asked = false;
    if (!settled.ok) throw settled.error;
    return settled.value;
  }

  /** The stream ended: listeners removed, the handler told to stop. */
  stop(): void {
    this.#stopListening();
    this.#events.signal.removeEventListener('abort', this.#left);
    this.#events.abort();
    // A handler still waiting returns once its wait ends (its signal is aborted now).
    void Promise.resolve(this.#iterator.return?.()).catch(() => undefined);
  }
}

/** One value of the handler as its frame: a `ServerEvent`'s id, name and retry kept. */
function eventFrameOf(value: unknown, serialize: EventsAnswer['serialize']): string | Promise<string> {
  const event = value instanceof ServerEvent ? value : undefined;
  const fields = {
    ...(event?.id === undefined ? {} : { id: event.id }),
    ...(event?.event === undefined ? {} : { event: event.event }),
    ...(event?.retry === undefined ? {} : { retry: event.retry }),
  };
  const written = serialize(event === undefined ? value : event.data);
  return typeof written === 'string'
    ? eventFrame(written, fields)
    : written.then((data) => eventFrame(data, fields));
}

/**
 * The frames with the first one, already read, in front. Ended early (the client left while it
 * held the first frame), it ends the rest too, so that the handler's `finally` runs.
 */
export async function* startingWith(
  first: IteratorResult<string, void>,
  rest: AsyncGenerator<string, void, undefined>,
): AsyncGenerator<string, void, undefined> {
  try {
    if (first.done === true) return;
    yield first.value;
    yield* rest;
  } finally {
    await rest.return(undefined);
  }
}

/**
 * Ends a stream that will not be sent (refused, or a HEAD): its signal aborted and its source let
 * go, so that an iterator the handler made without the signal (`on(emitter, 'post')`) drops its
 * listener; an `async function*` that never started runs nothing.
 */
export function dropStream(events: EventsAnswer): void {
  events.abort();
  try {
    const iterator = events.source[Symbol.asyncIterator]();
    void Promise.resolve(iterator.return?.()).catch(() => undefined);
  } catch {
    // A source that cannot be iterated has nothing to let go.
  }
}
