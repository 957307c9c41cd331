/**
 * Entity tags (docs/http-caching.md), the same on every adapter: a strong tag on every 200 to a
 * GET (a hash of the body's exact text, after the record's version for a `.versioned()`
 * procedure), `If-None-Match` compared weakly and `If-Match` strongly, a coding suffix ignored in
 * both. The tag's format is read and written in src/core/precondition.ts.
 */
import xxhash from 'xxhash-wasm';
import { hex64 } from '../core/hex.js';
import { listedTags, versionedTag } from '../core/precondition.js';
import { runtime } from './runtime.js';

/**
 * xxHash64 (WebAssembly, with the string's UTF-8 written straight into its memory; or the
 * runtime's own, the same hash, where it has one): about 2.5 times SHA-1's speed on a 20-item
 * page (docs/http-caching.md). A tag only says "the same bytes", as SHA-1 does for other
 * frameworks (a hash with practical collisions too); it is no signature.
 */
let hashToHex: ((text: string) => string) | undefined;
let hashBytes: ((bytes: Uint8Array) => bigint) | undefined;

const { xxHash64 } = runtime;

/**
 * WebAssembly compiles asynchronously, and a top-level await would make this module impossible to
 * `require` (a TypeScript app run as CommonJS does): the hasher loads when this module does, and
 * an app waits for it before it serves (createApp's ready hook).
 */
const hasherLoaded: Promise<void> =
  xxHash64 !== undefined
    ? Promise.resolve().then(() => {
        hashToHex = (text) => hex64(xxHash64(text));
        hashBytes = xxHash64;
      })
    : xxhash().then((hasher) => {
        hashToHex = hasher.h64ToString;
        hashBytes = hasher.h64Raw;
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

/** The hash of a file's bytes (a file answer held in memory), as hex: its entity tag's opaque part. */
export function bytesTag(bytes: Uint8Array): string {
  if (hashBytes === undefined) throw new Error('bytesTag called before entityTagsReady() resolved');
  return hex64(hashBytes(bytes));
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
