/**
 * When an answer is compressed, the same on every adapter (docs/http-caching.md,
 * "Compression"): a body of `threshold` bytes or more, in the coding `Accept-Encoding` prefers
 * among those the app's encoder writes (brotli and gzip, with `node:zlib`, which Bun and Deno
 * have too), with `Vary: accept-encoding` on every answer that size, and the coding named on the
 * entity tag (each coding is its own representation). Adapters only encode.
 */
import { Negotiator } from '@fastify/accept-negotiator';
import { ProceedConfigError } from '../core/errors.js';

export interface CompressionOptions {
  /** Bodies shorter than this many bytes are sent as they are. Default 1024. */
  threshold?: number;
}

/** Checks the compression options: a threshold of whole bytes ≥ 0; undefined when turned off. */
export function compressionThreshold(options: CompressionOptions | false | undefined): number | undefined {
  if (options === false) return undefined;
  const threshold = options?.threshold ?? 1024;
  if (!Number.isInteger(threshold) || threshold < 0)
    throw new ProceedConfigError(
      `compression.threshold must be a whole number of bytes ≥ 0 (got ${threshold})`,
    );
  return threshold;
}

/** Picks a coding from `Accept-Encoding` among those an adapter writes. */
export class CodingChoice<C extends string> {
  readonly #negotiator: Negotiator;

  constructor(codings: readonly C[]) {
    this.#negotiator = new Negotiator({ supportedValues: [...codings] });
  }

  /** The coding to use, or undefined for none (no header, or nothing acceptable). */
  of(acceptEncoding: string | undefined | null): C | undefined {
    if (acceptEncoding === undefined || acceptEncoding === null) return undefined;
    return (this.#negotiator.negotiate(acceptEncoding) ?? undefined) as C | undefined;
  }
}

/**
 * Whether a body is large enough to compress: `byteLength` (its UTF-8 length) is asked only when
 * its length alone cannot tell (a string's UTF-8 length is at least its length and at most three
 * times it).
 */
export function worthCompressing(
  body: string,
  threshold: number,
  byteLength: (text: string) => number,
): boolean {
  if (body.length * 3 < threshold) return false;
  return body.length >= threshold || byteLength(body) >= threshold;
}

/** The entity tag of an answer in `coding`: `"abc"` → `"abc-gzip"`. */
export const taggedWithCoding = (tag: string, coding: string): string => `${tag.slice(0, -1)}-${coding}"`;
