import { describe, expect, it, vi } from 'vitest';
import { ProceedError } from '../core/errors.js';
import { type EventsAnswer, serverEvent } from '../core/events.js';
import {
  closingFrame,
  credentialsFrame,
  endFrame,
  eventFrame,
  eventFrames,
  keepAliveFrame,
} from './events.js';

function answer(
  source: AsyncIterable<unknown>,
  keepAlive = 60_000,
): EventsAnswer & { controller: AbortController } {
  const controller = new AbortController();
  return {
    controller,
    source,
    serialize: (data) => JSON.stringify(data),
    keepAlive,
    signal: controller.signal,
    abort: () => controller.abort(),
    holder: undefined,
    credentials: undefined,
    credentialsCheck: 60_000,
    stillAllowed: undefined,
  };
}

/** A closing signal of one's own, that counts who listens. */
function closingSignal() {
  const listeners = new Set<() => void>();
  let subscribed = 0;
  return {
    onClosing: (listener: () => void) => {
      subscribed++;
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => {
      for (const listener of listeners) listener();
    },
    get listening() {
      return listeners.size;
    },
    get subscribed() {
      return subscribed;
    },
  };
}

const problemBody = (error: unknown) => JSON.stringify({ code: (error as ProceedError).code });
const quietLog = { warn: () => undefined };

async function collect(frames: AsyncGenerator<string>): Promise<string[]> {
  const all: string[] = [];
  for await (const frame of frames) all.push(frame);
  return all;
}

describe('eventFrame', () => {
  it('writes the fields, and data over several lines as several data lines', () => {
    expect(eventFrame('{"a":1}')).toBe('data: {"a":1}\n\n');
    expect(eventFrame('one\ntwo\r\nthree', { id: '7', event: 'note', retry: 500 })).toBe(
      'event: note\nid: 7\nretry: 500\ndata: one\ndata: two\ndata: three\n\n',
    );
  });

  it('refuses an id or a name that would break the stream', () => {
    expect(() => serverEvent(1, { id: 'a\nb' })).toThrow('line break');
    expect(() => serverEvent(1, { event: 'x\ry' })).toThrow('line breaks');
    expect(() => serverEvent(1, { retry: -1 })).toThrow('whole number');
  });
});

describe('eventFrames', () => {
  it('listens for the app closing once per stream, however many events, and stops listening at its end', async () => {
    async function* many() {
      for (let n = 0; n < 10_000; n++) yield { n };
    }
    const closing = closingSignal();
    const events = answer(many());
    const frames = await collect(eventFrames(events, closing.onClosing, problemBody, quietLog));
    // Each event, then the end: the handler returned, the stream is over.
    expect(frames).toHaveLength(10_001);
    expect(frames.at(-1)).toBe(endFrame);
    expect(closing.subscribed).toBe(1);
    expect(closing.listening).toBe(0);
    // The handler's signal is aborted once the stream is over, whatever ended it.
    expect(events.signal.aborted).toBe(true);
  });

  it('ends with a close frame when the app closes, and returns the handler', async () => {
    let returned = false;
    async function* endless() {
      try {
        yield { n: 1 };
        await new Promise(() => undefined);
      } finally {
        returned = true;
      }
    }
    const closing = closingSignal();
    const frames = eventFrames(answer(endless()), closing.onClosing, problemBody, quietLog);
    expect((await frames.next()).value).toBe('data: {"n":1}\n\n');
    const next = frames.next();
    closing.close();
    expect((await next).value).toBe(closingFrame);
    expect((await frames.next()).done).toBe(true);
    // The generator waits in an await that never settles: it returns once that wait would end.
    expect(returned).toBe(false);
  });

  it('throws a failure before the first frame, and frames one after it as an error event', async () => {
    async function* early(missing = true) {
      if (missing) throw new ProceedError('NOT_FOUND', 'gone');
      yield { n: 1 };
    }
    await expect(
      eventFrames(answer(early()), closingSignal().onClosing, problemBody, quietLog).next(),
    ).rejects.toThrow('gone');
    async function* late() {
      yield { n: 1 };
      throw new ProceedError('CONFLICT', 'broke');
    }
    expect(
      await collect(eventFrames(answer(late()), closingSignal().onClosing, problemBody, quietLog)),
    ).toEqual(['data: {"n":1}\n\n', 'event: error\ndata: {"code":"CONFLICT"}\n\n']);
  });

  it('sends a keep-alive while the handler is quiet, and ends when the client leaves', async () => {
    async function* slow() {
      yield serverEvent({ n: 1 }, { id: 1 });
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      yield { n: 2 };
    }
    const events = answer(slow(), 1000);
    const frames = eventFrames(events, closingSignal().onClosing, problemBody, quietLog);
    expect((await frames.next()).value).toBe('id: 1\ndata: {"n":1}\n\n');
    expect((await frames.next()).value).toBe(keepAliveFrame);
    const next = frames.next();
    events.controller.abort();
    expect((await next).done).toBe(true);
  });
});

describe('eventFrames while the handler is quiet', () => {
  it('asks the handler once, however many keep-alives pass before it answers', async () => {
    vi.useFakeTimers();
    try {
      let thens = 0;
      // A handler whose next() never settles, and that counts who waits for it.
      const quiet: AsyncIterable<unknown> = {
        [Symbol.asyncIterator]: () => ({
          next: () =>
            ({
              // biome-ignore lint/suspicious/noThenProperty: a thenable that counts its waiters
              then: () => {
                thens++;
              },
            }) as unknown as Promise<IteratorResult<unknown>>,
        }),
      };
      const frames = eventFrames(answer(quiet, 1000), closingSignal().onClosing, problemBody, quietLog);
      for (let beat = 0; beat < 5; beat++) {
        const next = frames.next();
        await vi.advanceTimersByTimeAsync(1000);
        expect((await next).value).toBe(keepAliveFrame);
      }
      expect(thens).toBe(1);
      await frames.return(undefined);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('eventFrames of a signed-in stream', () => {
  /** A stream that sends one event, then waits for its end; signed in by `credentials`. */
  function signedIn(
    credentials: EventsAnswer['credentials'],
    stillAllowed?: () => Promise<boolean>,
  ): EventsAnswer & { controller: AbortController } {
    async function* waiting() {
      yield { n: 1 };
      await new Promise(() => undefined);
    }
    return { ...answer(waiting()), credentials, credentialsCheck: 100, stillAllowed };
  }

  it('ends with a close event once the credentials no longer hold, and aborts the handler', async () => {
    let holds = true;
    const events = signedIn({ holder: 'ada', stillHold: async () => holds });
    const frames = eventFrames(events, closingSignal().onClosing, problemBody, quietLog);
    expect((await frames.next()).value).toBe('data: {"n":1}\n\n');
    holds = false;
    expect((await frames.next()).value).toBe(credentialsFrame);
    expect((await frames.next()).done).toBe(true);
    expect(events.signal.aborted).toBe(true);
  });

  it('ends with a close event at the expiry, and with a 403 error event once the guards refuse', async () => {
    const expiring = signedIn({ holder: 'ada', expiresAt: Date.now() + 150 });
    const lapsed = await collect(eventFrames(expiring, closingSignal().onClosing, problemBody, quietLog));
    expect(lapsed).toEqual(['data: {"n":1}\n\n', credentialsFrame]);

    let allowed = true;
    const demoted = signedIn({ holder: 'ada', stillHold: async () => true }, async () => allowed);
    const frames = eventFrames(demoted, closingSignal().onClosing, problemBody, quietLog);
    expect((await frames.next()).value).toBe('data: {"n":1}\n\n');
    allowed = false;
    expect((await frames.next()).value).toBe('event: error\ndata: {"code":"FORBIDDEN"}\n\n');
    expect((await frames.next()).done).toBe(true);
  });

  it('ends with a close event saying so after two checks in a row that fail, and logs each', async () => {
    const warned: string[] = [];
    const events = signedIn({
      holder: 'ada',
      stillHold: () => Promise.reject(new Error('the store did not answer')),
    });
    const log = { warn: (_: object, message: string) => warned.push(message) };
    const frames = await collect(eventFrames(events, closingSignal().onClosing, problemBody, log));
    expect(frames).toEqual(['data: {"n":1}\n\n', 'event: close\ndata: {"reason":"unavailable"}\n\n']);
    expect(warned).toHaveLength(2);
  });

  it('stops checking once the stream ends', async () => {
    let checks = 0;
    const events = signedIn({
      holder: 'ada',
      stillHold: async () => {
        checks++;
        return true;
      },
    });
    const frames = eventFrames(events, closingSignal().onClosing, problemBody, quietLog);
    await frames.next();
    await new Promise((resolve) => setTimeout(resolve, 250));
    await frames.return(undefined);
    const after = checks;
    expect(after).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(checks).toBe(after);
  });
});
