import { describe, expect, it } from 'vitest';
import { eventQueue } from './event-queue.js';
import { reconnectStream } from './events.js';

/** The next `count` values the iteration gives. */
async function take<T>(iterator: AsyncIterator<T>, count: number): Promise<T[]> {
  const values: T[] = [];
  for (let index = 0; index < count; index++) {
    const next = await iterator.next();
    if (next.done === true) break;
    values.push(next.value);
  }
  return values;
}

describe('eventQueue', () => {
  it('gives what is pushed, in order, waits for more, and ends when the signal aborts', async () => {
    const leave = new AbortController();
    const queue = eventQueue<number>({ signal: leave.signal });
    const iterator = queue[Symbol.asyncIterator]();
    queue.push(1, 2);
    queue.push(3);
    expect(queue.behind).toBe(3);
    expect(await take(iterator, 3)).toEqual([1, 2, 3]);
    expect(queue.behind).toBe(0);
    const waiting = iterator.next();
    setTimeout(() => queue.push(4), 10);
    expect(await waiting).toEqual({ value: 4, done: false });
    const ending = iterator.next();
    leave.abort();
    expect(await ending).toEqual({ value: undefined, done: true });
    // Nothing is kept for a stream that ended.
    queue.push(5);
    expect(queue.behind).toBe(0);
  });

  it('holds maxBehind at most: past it, empties, ends with reconnectStream() and drops what comes after', async () => {
    const queue = eventQueue<number>({ signal: new AbortController().signal, maxBehind: 3 });
    const iterator = queue[Symbol.asyncIterator]();
    queue.push(1, 2);
    expect(await take(iterator, 1)).toEqual([1]);
    queue.push(3, 4);
    expect(queue.behind).toBe(3);
    queue.push(5);
    expect(queue.behind).toBe(0);
    queue.push(6);
    expect(queue.behind).toBe(0);
    expect(await iterator.next()).toEqual({ value: reconnectStream(), done: false });
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
  });

  it('counts an event as behind until its reader takes it', async () => {
    const queue = eventQueue<number>({ signal: new AbortController().signal, maxBehind: 2 });
    const iterator = queue[Symbol.asyncIterator]();
    queue.push(1, 2);
    expect(await take(iterator, 1)).toEqual([1]);
    queue.push(3);
    expect(queue.behind).toBe(2);
    expect(await take(iterator, 2)).toEqual([2, 3]);
  });

  it('ends a second reading when the signal aborts, and refuses two readers at once', async () => {
    const leave = new AbortController();
    const queue = eventQueue<number>({ signal: leave.signal });
    queue.push(1);
    for await (const value of queue) {
      expect(value).toBe(1);
      break;
    }
    const again = queue[Symbol.asyncIterator]();
    const waiting = again.next();
    await expect(queue[Symbol.asyncIterator]().next()).rejects.toThrow('one reader at a time');
    leave.abort();
    expect(await waiting).toEqual({ value: undefined, done: true });
  });

  it('refuses a maxBehind that is not a whole number from 1 to 1,000,000, and a signal that is none', () => {
    const { signal } = new AbortController();
    for (const maxBehind of [0, 1.5, 1_000_001, Number.NaN])
      expect(() => eventQueue({ signal, maxBehind })).toThrow(
        'maxBehind must be a whole number from 1 to 1000000',
      );
    expect(() => eventQueue({ signal: undefined as unknown as AbortSignal })).toThrow(
      "the handler's AbortSignal",
    );
  });
});
