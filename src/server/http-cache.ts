/**
 * The brotli and gzip encoders of procedure answers on Node (docs/http-caching.md). When to
 * compress, in which coding, and what that does to `Vary` and the `ETag` are decided with the
 * rest of the answer in src/http/procedure-answer.ts.
 */
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from 'node:zlib';
import { CodingChoice } from '../http/compression.js';

/** Compressed in the request's own turn up to this size (about 0.4 ms of brotli); above it on the thread pool. */
const synchronousLimit = 64 * 1024;

/** The codings the Node encoders write, for `Accept-Encoding` to choose among. */
export const nodeCodings = new CodingChoice(['br', 'gzip'] as const);

const brotliOptions = (size: number) => ({
  params: { [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_SIZE_HINT]: size },
});

const brotliLater = promisify(brotliCompress);
const gzipLater = promisify(gzip);

/** `body` in `coding`: in this turn up to 64 KiB, above it on the thread pool. */
export function encoded(body: string, coding: string, size: number): Buffer | Promise<Buffer> {
  if (size <= synchronousLimit) {
    return coding === 'br' ? brotliCompressSync(body, brotliOptions(size)) : gzipSync(body);
  }
  return coding === 'br' ? brotliLater(body, brotliOptions(size)) : gzipLater(body);
}
