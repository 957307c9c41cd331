/**
 * Validators and compression of answers (docs/http-caching.md): a strong `ETag` on every 200 to
 * a GET, `If-None-Match` → 304, and gzip or brotli through `@fastify/compress` above a size.
 */
import * as crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ProceedConfigError } from '../core/errors.js';
import { unencapsulated } from './fastify.js';

export interface CompressionOptions {
  /** Bodies shorter than this many bytes are sent as they are. Default 1024. */
  threshold?: number;
}

// One call instead of createHash().update().digest() where Node has it (20.12 and later).
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'base64url') => string })
  .hash;
const digest =
  oneShot === undefined
    ? (text: string) => crypto.createHash('sha1').update(text).digest('base64url')
    : (text: string) => oneShot('sha1', text, 'base64url');

/** The strong entity tag of a JSON body: a hash of its exact text, so equal bodies share it. */
export function entityTag(body: string): string {
  return `"${digest(body)}"`;
}

/** A compressed answer's tag names its coding: each coding is its own representation. */
const codingSuffix = /-(?:br|gzip|deflate)"$/;

/**
 * The tag in `If-None-Match` that matches `tag` (weak comparison, as RFC 9110 asks for this
 * header; a coding suffix ignored), or undefined. `*` matches any.
 */
export function matchingTag(ifNoneMatch: string | undefined, tag: string): string | undefined {
  if (ifNoneMatch === undefined) return undefined;
  if (ifNoneMatch.trim() === '*') return tag;
  for (const raw of ifNoneMatch.split(',')) {
    const candidate = raw.trim();
    const opaque = candidate.startsWith('W/') ? candidate.slice(2) : candidate;
    if (opaque.replace(codingSuffix, '"') === tag) return candidate;
  }
  return undefined;
}

/**
 * Sets the answer's `ETag`; answers 304 (no body) when the client holds it already. Returns the
 * body to send, or undefined for a 304.
 */
export function withEntityTag(
  request: FastifyRequest,
  reply: FastifyReply,
  body: string,
): string | undefined {
  const tag = entityTag(body);
  const held = matchingTag(request.headers['if-none-match'], tag);
  if (held === undefined) {
    reply.header('etag', tag);
    return body;
  }
  // The tag the client holds, coding suffix included, names the representation it keeps.
  reply.code(304).header('etag', held);
  return undefined;
}

/** Checks the compression options: a threshold of whole bytes ≥ 0. */
export function compressionThreshold(options: CompressionOptions | false | undefined): number | undefined {
  if (options === false) return undefined;
  const threshold = options?.threshold ?? 1024;
  if (!Number.isInteger(threshold) || threshold < 0)
    throw new ProceedConfigError(
      `compression.threshold must be a whole number of bytes ≥ 0 (got ${threshold})`,
    );
  return threshold;
}

/**
 * Compresses answers above `threshold` bytes with brotli or gzip, as the client accepts, and
 * gives a compressed answer's `ETag` its coding (`"…-br"`): a strong tag names one exact byte
 * sequence. Request bodies are not decompressed (a small body could inflate past the limit).
 */
export function registerCompression(server: FastifyInstance, threshold: number): void {
  server.register(import('@fastify/compress'), {
    threshold,
    encodings: ['br', 'gzip'],
    globalDecompression: false,
  });
  // Registered after the compression plugin, so each route's hook runs after its compression.
  const tagCodings = unencapsulated(async (scoped: FastifyInstance) => {
    scoped.addHook('onRoute', (route) => {
      const tagCoding = (
        _request: FastifyRequest,
        reply: FastifyReply,
        payload: unknown,
        done: (error: null, payload: unknown) => void,
      ) => {
        const coding = reply.getHeader('content-encoding');
        const tag = reply.getHeader('etag');
        if (
          typeof coding === 'string' &&
          coding !== 'identity' &&
          typeof tag === 'string' &&
          tag.endsWith('"')
        )
          reply.header('etag', `${tag.slice(0, -1)}-${coding}"`);
        done(null, payload);
      };
      const existing = route.onSend;
      route.onSend =
        existing === undefined
          ? [tagCoding]
          : [...(Array.isArray(existing) ? existing : [existing]), tagCoding];
    });
  });
  server.register(tagCodings);
}
