/**
 * Server-sent events in the typed client (docs/events.md): read over `fetch`, so the bearer
 * token and the app's headers go with every connection, parsed as `text/event-stream`, and
 * resumed after a dropped connection with `Last-Event-ID` and fresh headers (a token that was
 * renewed meanwhile), until the caller's `AbortSignal` says stop.
 */
import { ClientError, ProblemError, retryAfterOf, retryStatuses } from './errors.js';

/** One parsed event. */
export interface ParsedEvent {
  readonly event: string;
  readonly data: string;
  readonly id: string | undefined;
  readonly retry: number | undefined;
}

/**
 * Where the first line of `buffer` ends, or null while it may not have: a CR at its very end may
 * be the first half of a CRLF that the next chunk completes.
 */
function lineEnd(buffer: string): RegExpExecArray | null {
  const found = /\r\n|\r|\n/.exec(buffer);
  return found !== null && found[0] === '\r' && found.index === buffer.length - 1 ? null : found;
}

/**
 * Parses a `text/event-stream` body into events, as the HTML standard's EventSource does: fields
 * per line, `data` lines joined with "\n", comments and empty events skipped.
 */
export async function* parseEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<ParsedEvent> {
  const reader = body
    .pipeThrough(new TextDecoderStream() as ReadableWritablePair<string, Uint8Array>)
    .getReader();
  let buffer = '';
  let data: string[] = [];
  let event = '';
  let id: string | undefined;
  let retry: number | undefined;
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += value;
      let newline = lineEnd(buffer);
      while (newline !== null) {
        const line = buffer.slice(0, newline.index);
        buffer = buffer.slice(newline.index + newline[0].length);
        if (line === '') {
          if (data.length > 0)
            yield { event: event === '' ? 'message' : event, data: data.join('\n'), id, retry };
          data = [];
          event = '';
          retry = undefined;
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':');
          const field = colon === -1 ? line : line.slice(0, colon);
          const raw = colon === -1 ? '' : line.slice(colon + 1);
          const text = raw.startsWith(' ') ? raw.slice(1) : raw;
          if (field === 'data') data.push(text);
          else if (field === 'event') event = text;
          else if (field === 'id' && !text.includes('\u0000')) id = text;
          else if (field === 'retry' && /^\d+$/.test(text)) retry = Number(text);
        }
        newline = lineEnd(buffer);
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** Opens one connection: resolves with its body once the answer is a stream, rejects with its problem. */
export type Connect = (
  lastEventId: string | undefined,
  signal: AbortSignal,
) => Promise<ReadableStream<Uint8Array>>;

/**
 * The events of a stream, reconnecting when the connection drops (after the server's `retry`,
 * 1 s by default, at once after the server's `close` event) and resuming after the last id.
 * An `error` event ends the iteration with its problem; the caller's signal ends it quietly.
 * Only a dropped connection, or a reconnect refused for now (429, 502, 503, 504), is retried,
 * until the caller's signal aborts: any other problem answer to a reconnect (the token refused,
 * the stream gone) ends it with that problem.
 */
export async function* reconnectingEvents(
  first: ReadableStream<Uint8Array>,
  connect: Connect,
  signal: AbortSignal | undefined,
  label: string,
): AsyncGenerator<unknown> {
  let body: ReadableStream<Uint8Array> | undefined = first;
  let lastEventId: string | undefined;
  let wait = 1000;
  let failures = 0;
  const own = new AbortController();
  const stop = () => own.abort();
  signal?.addEventListener('abort', stop, { once: true });
  try {
    while (!own.signal.aborted) {
      if (body === undefined) {
        try {
          body = await connect(lastEventId, own.signal);
          failures = 0;
        } catch (error) {
          // A problem answer (the stream is gone, the token refused) ends it; the network may
          // recover, and so may a server that refuses for now (429, 502, 503, 504: a store down).
          if (own.signal.aborted) return;
          if (error instanceof ProblemError && !retryStatuses.has(error.status)) throw error;
          // Wait longer each time, up to 30 s, never less than the server asked (its retry, its
          // Retry-After), spread so that the clients of one outage do not come back at once.
          failures++;
          const asked = error instanceof ProblemError ? (retryAfterOf(error) ?? 0) : 0;
          await pause(Math.min(30_000, Math.max(wait, asked, spread(250 * 2 ** failures))), own.signal);
          continue;
        }
      }
      // At once after the server's close event; else after its reconnection time, as it stands
      // when the stream ends (a `retry` in this very stream counts).
      let closed = false;
      try {
        for await (const event of parseEventStream(body)) {
          if (event.id !== undefined) lastEventId = event.id;
          if (event.retry !== undefined) wait = event.retry;
          if (event.event === 'close') {
            // A server that could not check the credentials is asked again later, not at once.
            closed = reasonOf(event.data) !== 'unavailable';
            break;
          }
          // The handler returned: the stream is over, not dropped.
          if (event.event === 'end') return;
          if (event.event === 'error') throw new ProblemError(JSON.parse(event.data), new Headers());
          yield JSON.parse(event.data);
        }
      } catch (error) {
        // The caller's signal ends the iteration quietly, as a loop's break would.
        if (own.signal.aborted) return;
        if (error instanceof ProblemError) throw error;
        if (error instanceof SyntaxError)
          throw new ClientError('invalid-response', `${label}: an event's data is not valid JSON`, {
            cause: error,
          });
      }
      body = undefined;
      await pause(closed ? 0 : spread(wait), own.signal);
    }
  } finally {
    signal?.removeEventListener('abort', stop);
    own.abort();
  }
}

/** `ms` give or take a fifth, so that clients dropped together spread their returns. */
function spread(ms: number): number {
  return Math.round(ms * (0.8 + Math.random() * 0.4));
}

/** The `reason` of a `close` event's data, if it names one. */
function reasonOf(data: string): unknown {
  try {
    return (JSON.parse(data) as { reason?: unknown } | null)?.reason;
  } catch {
    return undefined;
  }
}

/** Waits `ms`, or less when `signal` aborts (the event stream's and the socket's reconnections). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
