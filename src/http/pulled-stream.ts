/**
 * An async iterable as a web `ReadableStream` body, read one chunk per pull: the runtime asks for
 * the next chunk only when it can send it, so a slow client holds the producer back instead of
 * filling memory. A client that leaves (`cancel`) calls `onCancel` at once, then returns the
 * iterator (a file is closed, a generator's `finally` runs) without waiting for it.
 */
const utf8 = new TextEncoder();

export function pulledStream(
  chunks: AsyncIterable<Uint8Array | string>,
  onCancel?: () => void,
): ReadableStream<Uint8Array> {
  const iterator = chunks[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await iterator.next();
        if (next.done === true) controller.close();
        else if (typeof next.value === 'string') controller.enqueue(utf8.encode(next.value));
        else controller.enqueue(next.value instanceof Uint8Array ? next.value : new Uint8Array(next.value));
      },
      cancel() {
        onCancel?.();
        void Promise.resolve(iterator.return?.()).catch(() => undefined);
      },
    },
    { highWaterMark: 0 },
  );
}
