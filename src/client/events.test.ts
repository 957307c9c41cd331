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
  // The waits are spread by ±20 % at random: at its middle here, so that they can be counted.
  beforeEach(() => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('waits longer after each failed reconnect, and resumes with the last id', async () => {
    vi.useFakeTimers();
    try {
      const attempts: Array<string | undefined> = [];
      const connect = async (lastEventId: string | undefined) => {
        attempts.push(lastEventId);
        if (attempts.length < 3) throw new TypeError('connection refused');
        return body(['id: 2\ndata: {"n":2}\n\n']);
      };
      // The server asked for a 10 ms reconnection time.
      const events = reconnectingEvents(
        body(['id: 1\nretry: 10\ndata: {"n":1}\n\n']),
        connect,
        undefined,
        'GET /x',
      );
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
    } finally {
      vi.useRealTimers();
    }
  });

  it('asks again later, not at once, after a close for credentials the server could not check, and through its 503s', async () => {
    vi.useFakeTimers();
    try {
      const attempts: Array<string | undefined> = [];
      const unavailable = new ProblemError(
        { type: 'about:blank', title: 'Unavailable', status: 503, code: 'UNAVAILABLE', detail: 'down' },
        new Headers(),
      );
      const connect = async (lastEventId: string | undefined) => {
        attempts.push(lastEventId);
        if (attempts.length < 2) throw unavailable;
        return body(['id: 2\ndata: {"n":2}\n\n']);
      };
      const events = reconnectingEvents(
        body(['id: 1\ndata: {"n":1}\n\nevent: close\ndata: {"reason":"unavailable"}\n\n']),
        connect,
        undefined,
        'GET /x',
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
    } finally {
      vi.useRealTimers();
    }
  });

  it('waits as long as the Retry-After of a refusal asks', async () => {
    vi.useFakeTimers();
    try {
      const attempts: Array<string | undefined> = [];
      const limited = new ProblemError(
        {
          type: 'about:blank',
          title: 'Too many requests',
          status: 429,
          code: 'RATE_LIMITED',
          detail: 'slow down',
        },
        new Headers({ 'retry-after': '5' }),
      );
      const connect = async (lastEventId: string | undefined) => {
        attempts.push(lastEventId);
        if (attempts.length < 2) throw limited;
        return body(['id: 2\ndata: {"n":2}\n\n']);
      };
      const events = reconnectingEvents(
        body(['id: 1\nretry: 10\ndata: {"n":1}\n\n']),
        connect,
        undefined,
        'GET /x',
      );
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
    } finally {
      vi.useRealTimers();
    }
  });

  it('ends with the problem of a reconnect refused for good, as a 401', async () => {
    const refused = new ProblemError(
      {
        type: 'about:blank',
        title: 'Unauthorized',
        status: 401,
        code: 'INVALID_TOKEN',
        detail: 'jwt revoked',
      },
      new Headers(),
    );
    const events = reconnectingEvents(
      body(['id: 1\ndata: {"n":1}\n\nevent: close\ndata: {"reason":"credentials"}\n\n']),
      async () => {
        throw refused;
      },
      undefined,
      'GET /x',
    );
    expect((await events.next()).value).toEqual({ n: 1 });
    await expect(events.next()).rejects.toBe(refused);
  });
});
