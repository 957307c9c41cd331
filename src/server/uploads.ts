/** A Node request's body as an upload's source (src/http/uploads.ts), read without ever destroying it. */
import type { Readable } from 'node:stream';
import type { BodySource } from '../http/uploads.js';

/**
 * Reads with `read()` rather than an async iterator: leaving an iterator early destroys the
 * stream, and with an `IncomingMessage` its socket, before the 413 that explains why is sent.
 */
export function nodeBodySource(stream: Readable): BodySource {
  let cancelled = false;
  return {
    // Not read on Node: the server itself reads a refused body on, or closes (src/server/lingering.ts).
    readsRest: false,
    chunks: {
      async *[Symbol.asyncIterator]() {
        for (;;) {
          if (cancelled) return;
          const chunk = stream.read() as Buffer | null;
          if (chunk !== null) {
            yield chunk;
            continue;
          }
          if (stream.readableEnded) return;
          await new Promise<void>((resolve, reject) => {
            const settle = (error?: Error) => {
              stream.off('readable', onReadable);
              stream.off('end', onEnd);
              stream.off('error', onError);
              stream.off('close', onClose);
              if (error === undefined) resolve();
              else reject(error);
            };
            const onReadable = () => settle();
            const onEnd = () => settle();
            const onError = (error: Error) => settle(error);
            const onClose = () =>
              settle(stream.readableEnded ? undefined : new Error('The client closed the request'));
            stream.on('readable', onReadable);
            stream.on('end', onEnd);
            stream.on('error', onError);
            stream.on('close', onClose);
          });
        }
      },
    },
    // Reading stops here; what is left of the body is the server's to read on or close on
    // (src/server/lingering.ts), which pausing the stream would stall.
    async cancel() {
      cancelled = true;
    },
  };
}
