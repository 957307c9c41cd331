/**
 * Validators and compression of a procedure's answers (docs/http-caching.md): a strong `ETag` on
 * every 200 to a GET, `If-None-Match` → 304, and brotli or gzip above a size. Done in the route
 * itself, not in per-response hooks: an answer too small to compress costs one comparison.
 */
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import xxhash from 'xxhash-wasm';
import { listedTags, versionedTag } from '../core/precondition.js';
import { CodingChoice, taggedWithCoding, worthCompressing } from '../http/compression.js';

/**
 * xxHash64 (WebAssembly, with the string's UTF-8 written straight into its memory): about 2.5
 * times SHA-1's speed on a 20-item page (docs/http-caching.md). A tag only says "the same
 * bytes", as SHA-1 does for other frameworks (a hash with practical collisions too); it is no
 * signature.
 */
let hashToHex: ((text: string) => string) | undefined;

/**
 * WebAssembly compiles asynchronously, and a top-level await would make this module impossible to
 * `require` (a TypeScript app run as CommonJS does): the hasher loads when this module does, and
 * an app waits for it before it serves (createApp's ready hook).
 */
const hasherLoaded: Promise<void> = xxhash().then((hasher) => {
  hashToHex = hasher.h64ToString;
});
// Where WebAssembly cannot run, the failure belongs to the app that needs tags (its ready hook
// rethrows it), not to every process that imports this module.
hasherLoaded.catch(() => undefined);

/** Resolves once {@link entityTag} can be called. */
export function entityTagsReady(): Promise<void> {
  return hasherLoaded;
}

/**
 * The strong entity tag of a JSON body: a hash of its exact text, so equal bodies share it,
 * after the record's version when the procedure is `.versioned()`.
 */
export function entityTag(body: string, version?: string): string {
  if (hashToHex === undefined) throw new Error('entityTag called before entityTagsReady() resolved');
  return versionedTag(version, hashToHex(body));
}

/** A compressed answer's tag names its coding: each coding is its own representation. */
const codingSuffix = /-(?:br|gzip)"$/;

/**
 * The tag in `If-None-Match` that matches `tag` (weak comparison, as RFC 9110 asks for this
 * header; a coding suffix ignored), or undefined. `*` matches any.
 */
export function matchingTag(ifNoneMatch: string | undefined, tag: string): string | undefined {
  if (ifNoneMatch === undefined) return undefined;
  const tags = listedTags(ifNoneMatch);
  if (tags === '*') return tag;
  return tags.find(({ opaque }) => sameTag(opaque, tag))?.text;
}

/** Exact first: a version may hold '-', so a tag itself may end in "-br". */
const sameTag = (opaque: string, tag: string) => opaque === tag || opaque.replace(codingSuffix, '"') === tag;

/**
 * Whether `If-Match` holds `tag` (strong comparison, as RFC 9110 asks for this header: a weak
 * tag never matches; a coding suffix ignored) or is `*`.
 */
export function ifMatchHolds(ifMatch: string, tag: string): boolean {
  const tags = listedTags(ifMatch);
  return tags === '*' || tags.some(({ weak, opaque }) => !weak && sameTag(opaque, tag));
}

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
  let size = -1;
  const measured = () => {
    size = Buffer.byteLength(body);
    return size;
  };
  if (!worthCompressing(body, threshold, measured)) return body;
  varyOnCoding(reply);
  const coding = codings.of(request.headers['accept-encoding']);
  if (coding === undefined) return body;
  if (size < 0) measured();
  reply.header('content-encoding', coding);
  const tag = reply.getHeader('etag');
  if (typeof tag === 'string') reply.header('etag', taggedWithCoding(tag, coding));
  return encoded(body, coding, size);
}

/** The codings the Node encoders write, for `Accept-Encoding` to choose among. */
export const nodeCodings = codings;

/** `body` in `coding`: in this turn up to 64 KiB, above it on the thread pool. */
export function encoded(body: string, coding: 'br' | 'gzip', size: number): Buffer | Promise<Buffer> {
  if (size <= synchronousLimit) {
    return coding === 'br' ? brotliCompressSync(body, brotliOptions(size)) : gzipSync(body);
  }
  return coding === 'br' ? brotliLater(body, brotliOptions(size)) : gzipLater(body);
}
