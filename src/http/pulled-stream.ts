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
  let ended!: () => void;
  const end = new Promise<void>((resolve) => {
    ended = resolve;
  });
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let next: IteratorResult<Uint8Array | string>;
        try {
          next = await iterator.next();
        } catch (error) {
          ended();
          throw error;
        }
        if (next.done === true) {
          controller.close();
          ended();
        } else if (typeof next.value === 'string') controller.enqueue(utf8.encode(next.value));
        else controller.enqueue(next.value instanceof Uint8Array ? next.value : new Uint8Array(next.value));
      },
      cancel() {
        ended();
        onCancel?.();
        void Promise.resolve(iterator.return?.()).catch(() => undefined);
      },
    },
    { highWaterMark: 0 },
  );
  streamEnds.set(stream, end);
  return stream;
}

const streamEnds = new WeakMap<ReadableStream<Uint8Array>, Promise<void>>();

/**
 * When a body made by {@link pulledStream} is sent whole or abandoned; undefined for any other
 * body, which the runtime holds whole once it has the response.
 */
export function whenBodyEnds(body: ReadableStream<Uint8Array> | null): Promise<void> | undefined {
  return body === null ? undefined : streamEnds.get(body);
}
