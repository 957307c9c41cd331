/**
 * Conditional writes (docs/http-caching.md, "If-Match"): the version a procedure's answers
 * carry in their `ETag`, and `If-Match` parsed into a {@link Precondition} its handler checks
 * against the version it is about to change. Transport-neutral: the adapter hands over the raw
 * header and writes the tag.
 */
import { PreconditionFailedError, ProceedError } from './errors.js';

/** A record's version, as the app stores it: a counter, a revision string, … */
export type EntityVersion = string | number;

/**
 * What a `.versioned()` procedure's context holds: `If-Match`, parsed. The handler (or a step
 * that loads the record) calls `check` with the version it read, then makes its write apply
 * only while that version is current (`UPDATE … WHERE version = $read`), so the check and the
 * write are one atomic step.
 */
export interface Precondition {
  /** Whether the request sent `If-Match`: a write that finds the version changed must then fail with 412, not retry. */
  readonly sent: boolean;
  /**
   * Passes when `If-Match` was not sent, is `*`, or names `current`; otherwise throws
   * `PRECONDITION_FAILED` (412). Every call of a versioned write must call it.
   */
  check(current: EntityVersion): void;
}

/** Versions are safe integers ≥ 0 or short strings of letters, digits, `_` and `-`. */
const versionText = /^[A-Za-z0-9_-]{1,64}$/;

/** The text of a version, or a TypeError naming what is wrong with it (a bug in the app). */
export function versionOf(version: unknown, owner: string): string {
  if (typeof version === 'number' && Number.isSafeInteger(version) && version >= 0) return String(version);
  if (typeof version === 'string' && versionText.test(version)) return version;
  throw new TypeError(
    `${owner}: its version must be an integer ≥ 0 or 1–64 letters, digits, _ or - (got ${JSON.stringify(version) ?? String(version)})`,
  );
}

/**
 * The strong entity tag of an answer: its version, when it has one, then a hash of its exact
 * body. The version lets `If-Match` compare with what is stored; the hash keeps two views of one
 * version (public and admin, say) apart, as a strong tag must.
 */
export function versionedTag(version: string | undefined, bodyHash: string): string {
  return version === undefined ? `"${bodyHash}"` : `"${version}.${bodyHash}"`;
}

/** One entity tag listed in an `If-Match` or `If-None-Match` header. */
export interface ListedTag {
  /** As sent, `W/` included: what a 304 names back. */
  readonly text: string;
  readonly weak: boolean;
  /** The quoted tag without `W/`: `"…"`. */
  readonly opaque: string;
}

/**
 * The one reading of an `If-Match` or `If-None-Match` header (RFC 9110): `*`, or its entity
 * tags in order. Entries that are not quoted tags are dropped: they can match nothing.
 */
export function listedTags(header: string): '*' | ListedTag[] {
  if (header.trim() === '*') return '*';
  const tags: ListedTag[] = [];
  const end = header.length;
  let at = 0;
  while (at < end) {
    // An entry runs to the first comma after its closing quote: a tag may hold a comma (RFC 9110,
    // 8.8.3), and a split on every comma cut `"v1,2"` in two, so that it never matched.
    const quote = header.indexOf('"', at);
    const comma = header.indexOf(',', at);
    if (quote === -1) break;
    // What comes before the quote's entry is dropped in one step: comma by comma, a header of
    // commas was scanned again to its quote for each (quadratic).
    if (comma !== -1 && comma < quote) {
      at = header.lastIndexOf(',', quote) + 1;
      continue;
    }
    const close = header.indexOf('"', quote + 1);
    if (close === -1) break;
    const next = header.indexOf(',', close + 1);
    const entryEnd = next === -1 ? end : next;
    const text = header.slice(at, entryEnd).trim();
    at = entryEnd + 1;
    const weak = text.startsWith('W/');
    const opaque = weak ? text.slice(2) : text;
    if (opaque.length < 2 || !opaque.startsWith('"') || !opaque.endsWith('"')) continue;
    tags.push({ text, weak, opaque });
  }
  return tags;
}

/** `*`, or the versions named by the strong tags of an `If-Match` header (a weak tag never matches). */
export type IfMatch = '*' | readonly string[];

/** A compressed copy's tag ends in its coding (`"…-gzip"`); the version before the dot is the same. */
export function parseIfMatch(header: string): IfMatch {
  const tags = listedTags(header);
  if (tags === '*') return '*';
  const versions: string[] = [];
  for (const { weak, opaque } of tags) {
    if (weak) continue;
    const dot = opaque.indexOf('.');
    if (dot > 1) versions.push(opaque.slice(1, dot));
  }
  return versions;
}

/** Whether a list of versions (or `*`) admits `current`. */
export function admits(ifMatch: IfMatch, current: string): boolean {
  return ifMatch === '*' || ifMatch.includes(current);
}

export const staleVersion = () => new PreconditionFailedError();

/** A route that keeps no versions: no tag can match, only `*` passes. */
export const unversionedRoute = () =>
  new ProceedError(
    'PRECONDITION_FAILED',
    'This route keeps no versions, so no entity tag can match: If-Match can only be "*" here',
  );

/** The precondition of a request without `If-Match`: always passes. */
const none: Precondition = Object.freeze({ sent: false, check: () => {} });

/**
 * The precondition of one request to a versioned write, and whether its handler checked it: a
 * write that never checks an `If-Match` it was sent would be a lost update the client asked to
 * prevent.
 */
export class RequestPrecondition implements Precondition {
  readonly sent = true;
  checked = false;
  readonly #ifMatch: IfMatch;
  readonly #owner: string;

  constructor(ifMatch: IfMatch, owner: string) {
    this.#ifMatch = ifMatch;
    this.#owner = owner;
  }

  check(current: EntityVersion): void {
    this.checked = true;
    if (!admits(this.#ifMatch, versionOf(current, this.#owner))) throw staleVersion();
  }
}

/** The precondition a versioned write receives: none when `If-Match` was not sent. */
export function preconditionOf(header: string | undefined, owner: string): Precondition {
  if (header === undefined) return none;
  const ifMatch = parseIfMatch(header);
  // `*` asks only that the record exist, which the handler's own 404 answers: nothing to pin.
  return ifMatch === '*' ? none : new RequestPrecondition(ifMatch, owner);
}
