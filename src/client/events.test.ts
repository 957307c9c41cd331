import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ProblemError } from './errors.js';
import { parseEventStream, reconnectingEvents } from './events.js';

/** A body that arrives in exactly these chunks. */
const body = (chunks: string[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });

async function parsed(chunks: string[]) {
  const events = [];
  for await (const event of parseEventStream(body(chunks))) events.push(event);
  return events;
}

describe('parseEventStream', () => {
  it('reads fields, joins data lines, skips comments and keeps the last id', async () => {
    expect(
      await parsed([': keep-alive\n\nid: 1\nevent: note\nretry: 50\ndata: a\ndata: b\n\ndata: c\n\n']),
    ).toEqual([
      { event: 'note', data: 'a\nb', id: '1', retry: 50 },
      { event: 'message', data: 'c', id: '1', retry: undefined },
    ]);
  });

  it('reads a CRLF split across two chunks as one line end', async () => {
    expect(await parsed(['data: a\r', '\ndata: b\r\n\r\n'])).toEqual([
      { event: 'message', data: 'a\nb', id: undefined, retry: undefined },
    ]);
  });
});

describe('reconnectingEvents', () => {
  // Timers by hand; the waits, spread by ±20 % at random, at their middle so that they can be counted.
  beforeEach(() => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  /** A problem answer to a reconnect. */
  const problem = (status: number, code: string, headers: Record<string, string> = {}) =>
    new ProblemError({ type: 'about:blank', title: code, status, code, detail: code }, new Headers(headers));

  /**
   * Events whose first connection sends `first`; each reconnect fails with the next of `failures`,
   * and the one after them sends event 2. `attempts` holds the Last-Event-ID of each reconnect.
   */
  function reconnecting(first: string, failures: Error[]) {
    const attempts: Array<string | undefined> = [];
    const connect = async (lastEventId: string | undefined) => {
      attempts.push(lastEventId);
      const failure = failures[attempts.length - 1];
      if (failure !== undefined) throw failure;
      return body(['id: 2\ndata: {"n":2}\n\n']);
    };
    return { attempts, events: reconnectingEvents(body([first]), connect, undefined, 'GET /x') };
  }

  it('waits longer after each failed reconnect, and resumes with the last id', async () => {
    // The server asked for a 10 ms reconnection time.
    const refused = new TypeError('connection refused');
    const { attempts, events } = reconnecting('id: 1\nretry: 10\ndata: {"n":1}\n\n', [refused, refused]);
    expect((await events.next()).value).toEqual({ n: 1 });
    const second = events.next();
    // The stream ended: a reconnect after 10 ms, refused; then not every 10 ms in a loop, but
    // after 500 ms, refused; then after 1 s.
    await vi.advanceTimersByTimeAsync(10);
    expect(attempts).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(499);
    expect(attempts).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(999);
    expect(attempts).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts).toEqual(['1', '1', '1']);
    expect((await second).value).toEqual({ n: 2 });
    await events.return(undefined);
  });

  it('asks again later, not at once, after a close for credentials the server could not check, and through its 503s', async () => {
    const { attempts, events } = reconnecting(
      'id: 1\ndata: {"n":1}\n\nevent: close\ndata: {"reason":"unavailable"}\n\n',
      [problem(503, 'UNAVAILABLE')],
    );
    expect((await events.next()).value).toEqual({ n: 1 });
    const second = events.next();
    // Its reconnection time (1 s), not at once; then a 503 waits as a failed connection does.
    await vi.advanceTimersByTimeAsync(999);
    expect(attempts).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts).toEqual(['1']);
    await vi.advanceTimersByTimeAsync(1000);
    expect(attempts).toEqual(['1', '1']);
    expect((await second).value).toEqual({ n: 2 });
    await events.return(undefined);
  });

  it('waits as long as the Retry-After of a refusal asks', async () => {
    const { attempts, events } = reconnecting('id: 1\nretry: 10\ndata: {"n":1}\n\n', [
      problem(429, 'RATE_LIMITED', { 'retry-after': '5' }),
    ]);
    expect((await events.next()).value).toEqual({ n: 1 });
    const second = events.next();
    await vi.advanceTimersByTimeAsync(10);
    expect(attempts).toEqual(['1']);
    await vi.advanceTimersByTimeAsync(4999);
    expect(attempts).toEqual(['1']);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts).toEqual(['1', '1']);
    expect((await second).value).toEqual({ n: 2 });
    await events.return(undefined);
  });

  it('ends with the problem of a reconnect refused for good, as a 401', async () => {
    const refused = problem(401, 'INVALID_TOKEN');
    const { events } = reconnecting(
      'id: 1\ndata: {"n":1}\n\nevent: close\ndata: {"reason":"credentials"}\n\n',
      [refused],
    );
    expect((await events.next()).value).toEqual({ n: 1 });
    await expect(events.next()).rejects.toBe(refused);
  });
});
