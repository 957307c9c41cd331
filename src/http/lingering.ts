/**
 * A body the server refused before reading it all (401, 403, a 413 midway) is read on and
 * dropped, never parsed nor stored, up to the route's own size limit (never less than 10 MiB)
 * and for up to 30 s, and only then is the connection closed: a client still sending it (a
 * `fetch`, a browser) then reads the answer instead of failing on a closed socket, as nginx's
 * `lingering_close` does. A body declared longer than that is closed on at once: reading part
 * of it would not help (docs/uploads.md, "A refused body").
 */

import type { PipelineRequest } from './sent.js';

/** The least a refused body is read on for, whatever the route takes. */
export const lingeringLeastBytes = 10 * 1024 * 1024;
/** How long a refused body is read on for at most. */
export const lingeringMilliseconds = 30_000;

/** How much of a refused body is read on, for a route that takes `routeLimit` bytes. */
export function lingeringBytes(routeLimit: number): number {
  return Math.max(routeLimit, lingeringLeastBytes);
}

/**
 * Whether a refused body is read on: one without a length (chunked) is, up to the bound; one
 * declared past the bound is not, nor one its client has not sent, waiting for a `100 Continue`.
 */
export function lingersOn(
  request: Pick<PipelineRequest, 'headers' | 'awaitsContinue'>,
  bytes: number,
): boolean {
  if (request.awaitsContinue === true) return false;
  const contentLength = request.headers.get('content-length');
  if (contentLength === null || contentLength === '') return true;
  const declared = Number(contentLength);
  return Number.isFinite(declared) && declared <= bytes;
}

/**
 * Reads and drops up to `bytes` of a Fetch body (for up to `milliseconds`), then cancels the
 * rest: where the runtime owns the socket, this is the lingering close.
 */
export async function readOnAndDrop(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  bytes: number,
  milliseconds: number | undefined,
): Promise<void> {
  // Cancelling settles the read in flight (done): no promise raced against each read, whose
  // reactions would keep every chunk read until the race's other side settles.
  const timer =
    milliseconds === undefined
      ? undefined
      : setTimeout(() => void reader.cancel().catch(() => undefined), milliseconds);
  let read = 0;
  try {
    while (read <= bytes) {
      const next = await reader.read();
      if (next.done) break;
      read += next.value.byteLength;
    }
  } catch {
    // The client left: nothing more to read.
  } finally {
    clearTimeout(timer);
    void reader.cancel().catch(() => undefined);
  }
}
