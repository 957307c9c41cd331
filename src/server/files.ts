/** A file answer's bytes as Node.js streams them (docs/files.md); the HTTP rules are src/http/files.ts. */
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';

/**
 * Bytes in memory as a Buffer over the same memory; a web stream or an async iterable as a
 * `Readable`, which Fastify pipes to the socket: it reads only as fast as the client takes, and
 * destroys the stream (closing a file) when the client leaves.
 */
export function nodeBody(
  bytes: Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
): Buffer | Readable {
  if (bytes instanceof Uint8Array) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes instanceof Readable) return bytes;
  if (bytes instanceof ReadableStream) return Readable.fromWeb(bytes as WebReadableStream<Uint8Array>);
  return Readable.from(bytes, { objectMode: false });
}

/** An empty stream: what a HEAD sends, so that the GET's `Content-Length` stays. */
export const emptyBody = () => Readable.from([]);
