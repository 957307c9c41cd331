/**
 * Validators and compression of a procedure's answers on Fastify (docs/http-caching.md): the
 * `ETag` and 304 written on the reply, and the brotli and gzip encoders. What a tag is and when to
 * compress are decided in src/http/entity-tags.ts and src/http/compression.ts. Done in the route
 * itself, not in per-response hooks: an answer too small to compress costs one comparison.
 */
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CodingChoice, taggedWithCoding, worthCompressing } from '../http/compression.js';
import { matchingTag } from '../http/entity-tags.js';

/**
 * Sets the answer's `ETag`; answers 304 (no body) when the client holds it already (the route
 * compared `If-Match` before). Returns the body to send, or undefined for a 304.
 */
export function withEntityTag(
  request: FastifyRequest,
  reply: FastifyReply,
  body: string,
  tag: string,
): string | undefined {
  const held = matchingTag(request.headers['if-none-match'], tag);
  if (held === undefined) {
    reply.header('etag', tag);
    return body;
  }
  // The tag the client holds, coding suffix included, names the representation it keeps.
  reply.code(304).header('etag', held);
  return undefined;
}

/** Compressed in the request's own turn up to this size (about 0.4 ms of brotli); above it on the thread pool. */
const synchronousLimit = 64 * 1024;

const codings = new CodingChoice(['br', 'gzip'] as const);

const brotliOptions = (size: number) => ({
  params: { [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_SIZE_HINT]: size },
});

const brotliLater = promisify(brotliCompress);
const gzipLater = promisify(gzip);

/**
 * Another client may get another coding of an answer this size: caches must key on
 * `Accept-Encoding` too, beside `Origin`, which CORS may have named already. A 304 says it as
 * the 200 would.
 */
export function varyOnCoding(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  reply.header(
    'vary',
    vary === undefined || vary === '' ? 'accept-encoding' : `${String(vary)}, accept-encoding`,
  );
}

/**
 * The body to send, compressed with brotli or gzip (as `Accept-Encoding` prefers) when it has
 * `threshold` bytes or more. Sets `Content-Encoding`, `Vary` and the coding on the `ETag`.
 */
export function compressed(
  request: FastifyRequest,
  reply: FastifyReply,
  body: string,
  threshold: number,
): string | Buffer | Promise<Buffer> {
  if (!worthCompressing(body, threshold, byteLength)) return body;
  varyOnCoding(reply);
  const coding = codings.of(request.headers['accept-encoding']);
  if (coding === undefined) return body;
  reply.header('content-encoding', coding);
  const tag = reply.getHeader('etag');
  if (typeof tag === 'string') reply.header('etag', taggedWithCoding(tag, coding));
  return encoded(body, coding, Buffer.byteLength(body));
}

const byteLength = (text: string) => Buffer.byteLength(text);

/** The codings the Node encoders write, for `Accept-Encoding` to choose among. */
export const nodeCodings = codings;

/** `body` in `coding`: in this turn up to 64 KiB, above it on the thread pool. */
export function encoded(body: string, coding: 'br' | 'gzip', size: number): Buffer | Promise<Buffer> {
  if (size <= synchronousLimit) {
    return coding === 'br' ? brotliCompressSync(body, brotliOptions(size)) : gzipSync(body);
  }
  return coding === 'br' ? brotliLater(body, brotliOptions(size)) : gzipLater(body);
}
