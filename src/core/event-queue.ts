/**
 * The events published for one open stream, between the publisher and the stream's reader
 * (docs/events.md, "Publishing"): a handler that only yields what arrives holds no more than
 * `maxBehind` of them for a client that reads slowly or not at all, and past that ends the stream
 * as a drop, so that the client comes back with `Last-Event-ID` to resume from the store.
 */
import { reconnectStream, type StreamReconnect } from './events.js';

/** The default of {@link eventQueue}'s `maxBehind`. */
export const defaultMaxBehind = 1000;

export interface EventQueue<T> extends AsyncIterable<T | StreamReconnect> {
  /**
   * Queues events for the stream (a listener as it is: `emitter.on('post', queue.push)`). Past
   * `maxBehind` waiting, the queue is emptied, its iteration yields `reconnectStream()` and ends,
   * and what is pushed after is dropped. After the signal aborts, pushes are dropped too.
   */
  readonly push: (...events: T[]) => void;
  /** How many events wait for the reader. */
  readonly behind: number;
}

/**
 * A bounded queue for one stream: push what is published, `yield*` the queue in the handler.
 * Its iteration waits for the next event, ends when `signal` aborts (the client left), and ends
 * with `reconnectStream()` once a push would leave more than `maxBehind` events waiting for the
 * reader (1,000 unless told; from 1 to 1,000,000). One reader at a time.
 *
 * @example
 * .query(async function* ({ signal }) {
 *   const queue = eventQueue<ServerEvent<Post>>({ signal });
 *   const listener = (post: Post) => queue.push(serverEvent(post, { id: post.id }));
 *   published.on('post', listener);
 *   try { yield* queue; } finally { published.off('post', listener); }
 * })
 */
export function eventQueue<T>(options: { signal: AbortSignal; maxBehind?: number }): EventQueue<T> {
  const { signal } = options;
  const maxBehind = options.maxBehind ?? defaultMaxBehind;
  if (!Number.isInteger(maxBehind) || maxBehind < 1 || maxBehind > 1_000_000)
    throw new TypeError(`eventQueue: maxBehind must be a whole number from 1 to 1000000 (got ${maxBehind})`);
  if (!(signal instanceof AbortSignal))
    throw new TypeError("eventQueue: signal is the handler's AbortSignal");
  let waiting: T[] = [];
  let overflowed = false;
  let reading = false;
  let wake: (() => void) | undefined;
  const stopWaiting = () => wake?.();
  const push = (...events: T[]): void => {
    if (overflowed || signal.aborted) return;
    if (waiting.length + events.length > maxBehind) {
      // Nothing kept for a reader that will not get it: the client resumes from the store.
      overflowed = true;
      waiting = [];
    } else waiting.push(...events);
    wake?.();
  };
  async function* drain(): AsyncGenerator<T | StreamReconnect, void, undefined> {
    // One reader: a second would take the first one's wake-up, and each event goes to one of them.
    if (reading) throw new TypeError('eventQueue: one reader at a time (yield* the queue once)');
    reading = true;
    // Added per reading, removed when it ends: a queue read again after a break still ends.
    signal.addEventListener('abort', stopWaiting, { once: true });
    try {
      while (!signal.aborted) {
        if (overflowed) {
          yield reconnectStream();
          return;
        }
        if (waiting.length === 0) {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = undefined;
          continue;
        }
        // One at a time: an event stays counted as behind until its reader has taken it.
        yield waiting.shift() as T;
      }
    } finally {
      signal.removeEventListener('abort', stopWaiting);
      reading = false;
    }
  }
  return {
    push,
    get behind() {
      return waiting.length;
    },
    [Symbol.asyncIterator]: drain,
  };
}
