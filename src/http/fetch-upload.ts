/**
 * An upload's body on `app.fetch`: a Fetch request's stream as the source `UploadBody` reads
 * (src/http/uploads.ts; on Node, src/server/uploads.ts reads a `Readable`), and an answer's bytes
 * that remove the upload's files once sent.
 */
import { lingeringMilliseconds, lingersOn, readOnAndDrop } from './lingering.js';
import { runtime } from './runtime.js';
import type { PipelineRequest } from './sent.js';
import type { BodySource } from './uploads.js';

/**
 * A Fetch request's body as a source: read chunk by chunk, cancelled when refused midway, when
 * up to `lingerBytes` more are read on and dropped (src/http/lingering.ts).
 */
export function webBodySource(request: PipelineRequest, lingerBytes: number): BodySource {
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  // The read in flight: workerd allows one at a time, so draining waits for it first.
  let pending: Promise<unknown> | undefined;
  let cancelled = false;
  // A client that leaves aborts the request's signal; in-process, nothing else ends its body, so
  // the reader is cancelled, which settles the read in flight. (A promise raced against every
  // read would keep a reaction, and with it the chunk read, per read: the whole body.)
  let left = request.signal?.aborted === true;
  request.signal?.addEventListener(
    'abort',
    () => {
      left = true;
      void reader?.cancel().catch(() => undefined);
    },
    { once: true },
  );
  const ended: IteratorResult<Uint8Array> = { done: true, value: undefined };
  // Asked when the body is refused, not now: a client waiting for its 100 Continue has not sent
  // the body yet, but once a read has sent the 100 it does, and is read on like any other.
  const lingers = () => lingersOn(request, lingerBytes);
  return {
    get readsRest() {
      return runtime.readsRefusedBodies || lingers();
    },
    chunks: {
      // The reader's own results, one promise a chunk: nothing in between to allocate.
      [Symbol.asyncIterator]: () => ({
        next(): Promise<IteratorResult<Uint8Array>> {
          if (left) return Promise.reject(new Error('The client closed the request'));
          if (request.body === null || cancelled) return Promise.resolve(ended);
          reader ??= request.body.getReader();
          const read = reader.read().then((result) => {
            if (left) throw new Error('The client closed the request');
            return result as IteratorResult<Uint8Array>;
          });
          pending = read;
          return read;
        },
        return: () => Promise.resolve(ended),
      }),
    },
    async cancel() {
      if (cancelled) return;
      cancelled = true;
      if (request.body === null) return;
      const body = reader ?? request.body.getReader();
      await pending?.catch(() => undefined);
      if (left) {
        void body.cancel().catch(() => undefined);
        return;
      }
      // On Workers the edge owns the connection, and answering before the body is read breaks
      // it: the rest is read (and dropped) first, within the platform's own request limit.
      if (runtime.readsRefusedBodies) return readOnAndDrop(body, Number.POSITIVE_INFINITY, undefined);
      if (!lingers()) {
        void body.cancel().catch(() => undefined);
        return;
      }
      void readOnAndDrop(body, lingerBytes, lingeringMilliseconds);
    },
  };
}

/**
 * An answer's bytes that remove the upload's files once sent or abandoned: a handler may answer
 * with a file it was handed (an echo, a conversion streamed back).
 */
export async function* disposingAfter(
  bytes: AsyncIterable<Uint8Array>,
  dispose: () => Promise<void>,
): AsyncGenerator<Uint8Array, void, undefined> {
  try {
    yield* bytes;
  } finally {
    await dispose().catch(() => undefined);
  }
}
