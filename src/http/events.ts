/**
 * Server-sent events on the wire (docs/events.md), the same on every adapter: `text/event-stream`
 * frames (`id`, `event`, `retry`, `data` split on line breaks), a keep-alive comment whenever the
 * stream was quiet for the procedure's interval, an `error` event carrying the problem when the
 * handler fails after the stream opened, and a final `close` event when the app shuts down. The
 * frames are an async generator that advances the handler's only when its reader asks for the
 * next frame, so a slow client holds the handler back instead of filling memory; ending it (the
 * client left, the app closes) aborts the handler's signal and returns its generator.
 */
import { type EventsAnswer, ServerEvent } from '../core/events.js';

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

type Pending = IteratorResult<unknown> | 'quiet' | 'closing' | 'left';

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
): AsyncGenerator<string, void, undefined> {
  const iterator = events.source[Symbol.asyncIterator]();
  let opened = false;
  let ended: 'closing' | 'left' | undefined;
  /** The one waiter of this turn: what ends it (the handler, a quiet spell, the app, the client). */
  let wake: ((reason: 'settled' | 'quiet' | 'closing' | 'left') => void) | undefined;
  const end = (reason: 'closing' | 'left') => {
    ended ??= reason;
    wake?.(reason);
  };
  const left = () => end('left');
  events.signal.addEventListener('abort', left, { once: true });
  const stopListening = onClosing(() => end('closing'));
  if (events.signal.aborted) end('left');
  // What the handler's next() gave, once it settles: one reaction per next(), however many
  // keep-alives pass while it is out.
  let asked = false;
  let outcome: { ok: true; value: IteratorResult<unknown> } | { ok: false; error: unknown } | undefined;
  const ask = () => {
    asked = true;
    outcome = undefined;
    iterator.next().then(
      (value) => {
        outcome = { ok: true, value };
        wake?.('settled');
      },
      (error: unknown) => {
        outcome = { ok: false, error };
        wake?.('settled');
      },
    );
  };
  /** What comes next: the handler's next value, a quiet spell, the app closing or the client leaving. */
  const nextPending = async (): Promise<Pending> => {
    if (ended !== undefined) return ended;
    if (!asked) ask();
    let reason: 'settled' | 'quiet' | 'closing' | 'left' = 'settled';
    if (outcome === undefined) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      reason = await new Promise((resolve) => {
        wake = resolve;
        timer = setTimeout(
          () => resolve('quiet'),
          opened ? events.keepAlive : Math.min(openWithin, events.keepAlive),
        );
      });
      clearTimeout(timer);
      wake = undefined;
    }
    if (reason !== 'settled') return reason;
    const settled = outcome as NonNullable<typeof outcome>;
    asked = false;
    if (!settled.ok) throw settled.error;
    return settled.value;
  };
  try {
    while (true) {
      const next = await nextPending();
      if (next === 'left') return;
      if (next === 'closing') {
        yield closingFrame;
        return;
      }
      if (next === 'quiet') {
        opened = true;
        yield keepAliveFrame;
        continue;
      }
      if (next.done === true) return;
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
    stopListening();
    events.signal.removeEventListener('abort', left);
    events.abort();
    // A handler still waiting returns once its wait ends (its signal is aborted now).
    void Promise.resolve(iterator.return?.()).catch(() => undefined);
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
