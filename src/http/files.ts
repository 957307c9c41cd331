/**
 * How a file answer goes out (docs/files.md), the same on every adapter: its headers
 * (`Content-Type`, `Content-Length`, `Content-Disposition` after RFC 6266 with `filename*` after
 * RFC 8187, `ETag`, `Last-Modified`, `Accept-Ranges`), a single `Range` (206, or 416 with a
 * `Content-Range` that names the size), `If-Range`, and 304 for `If-None-Match` and
 * `If-Modified-Since`.
 * Adapters only turn the plan into their response and the bytes into their kind of stream.
 */
import { ProceedError } from '../core/errors.js';
import { type ByteRange, type FileAnswer, visibleName } from '../core/files.js';
import { listedTags, staleVersion } from '../core/precondition.js';
import { pulledStream } from './pulled-stream.js';

/** The request headers a file answer depends on. */
export interface FileRequest {
  readonly method: string;
  readonly range: string | undefined;
  readonly ifMatch: string | undefined;
  readonly ifUnmodifiedSince: string | undefined;
  readonly ifNoneMatch: string | undefined;
  readonly ifModifiedSince: string | undefined;
  readonly ifRange: string | undefined;
}

/** What to send: the status, the headers, and the bytes (all, a range, or none). */
export interface FilePlan {
  readonly status: 200 | 206 | 304;
  readonly headers: Record<string, string>;
  /** The range to read, on a 206. */
  readonly range: ByteRange | undefined;
  /** False for HEAD and 304: headers only. */
  readonly sendsBody: boolean;
}

/** The `filename` fallback: ASCII, without the characters a quoted string or a path would trip on. */
function asciiName(name: string): string {
  const ascii = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]|["\\/%;]/g, '_');
  return ascii.trim() === '' ? 'download' : ascii;
}

/** RFC 8187's value-chars: everything else is percent-encoded, from UTF-8. */
const encodeExtended = (name: string) =>
  encodeURIComponent(name).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * `Content-Disposition` (RFC 6266): `filename` for every client, plus `filename*` (RFC 8187,
 * UTF-8) when the name is not plain ASCII, which clients that read it prefer.
 *
 * @example
 * contentDisposition('attachment', 'Rapport März.pdf')
 * // attachment; filename="Rapport Marz.pdf"; filename*=UTF-8''Rapport%20M%C3%A4rz.pdf
 */
export function contentDisposition(disposition: 'attachment' | 'inline', given: string | undefined): string {
  // A stored name may predate the upload's cleaning, or come from elsewhere: shown as cleaned.
  const name = given === undefined ? undefined : visibleName(given);
  if (name === undefined || name === '') return disposition;
  const fallback = asciiName(name);
  const plain = fallback === name;
  return `${disposition}; filename="${fallback}"${plain ? '' : `; filename*=UTF-8''${encodeExtended(name)}`}`;
}

const rangeNotSatisfiable = (size: number) =>
  new ProceedError(
    'RANGE_NOT_SATISFIABLE',
    `The range asked for is not within the ${size} bytes of the file`,
    {
      headers: { 'content-range': `bytes */${size}` },
    },
  );

/**
 * A single `bytes=` range within `size` bytes; undefined when the header is not one range this
 * server honours (several ranges, another unit, malformed): the whole file is sent then, as RFC
 * 9110 allows. Throws 416 when the one range lies beyond the end.
 */
export function byteRange(header: string, size: number): ByteRange | undefined {
  // Each run of blanks has one place to go: `\s*(\d*)\s*-` let two share it, and a header of
  // 15,000 blanks took 100 ms to fail (quadratic).
  const match = /^bytes[ \t]*=[ \t]*(?:(\d+)[ \t]*)?-[ \t]*(\d*)$/i.exec(header.trim());
  if (match === null) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    // The last N bytes.
    const length = Number(last);
    if (length === 0) throw rangeNotSatisfiable(size);
    return size === 0 ? undefined : { start: Math.max(0, size - length), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return undefined;
  if (start >= size) throw rangeNotSatisfiable(size);
  return { start, end };
}

/** The three forms of an HTTP date (RFC 9110, 5.6.7): IMF-fixdate, RFC 850 and asctime. */
const httpDateForms = [
  /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/,
  /^[A-Z][a-z]+, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT$/,
  /^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/,
];

/** An HTTP date's time, or undefined when it is not one (whatever else `Date.parse` would take). */
function httpDate(value: string | undefined): number | undefined {
  if (value === undefined || !httpDateForms.some((form) => form.test(value.trim()))) return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : time;
}

/**
 * `If-Match`: one of its tags strongly equal to the file's (`*`: any file); without it,
 * `If-Unmodified-Since`: the file not modified after that date (a date that is no HTTP date is
 * ignored, as RFC 9110 says).
 */
function stillAsKnown(
  request: FileRequest,
  tag: string | undefined,
  lastModified: number | undefined,
): boolean {
  if (request.ifMatch !== undefined) {
    const tags = listedTags(request.ifMatch);
    if (tags === '*') return true;
    return tag !== undefined && !tag.startsWith('W/') && tags.some((each) => !each.weak && each.text === tag);
  }
  const since = httpDate(request.ifUnmodifiedSince);
  return since === undefined || lastModified === undefined || lastModified <= since;
}

/** The tags of `If-None-Match`, weakly compared with `tag` (`*` matches any). */
function noneMatch(header: string, tag: string): boolean {
  const tags = listedTags(header);
  if (tags === '*') return true;
  const opaque = tag.replace(/^W\//, '');
  return tags.some((each) => each.opaque === opaque);
}

/**
 * The file's entity tag: the handler's own, else its size and modification time (as static file
 * servers make it), else a hash of the bytes when they are in memory; none for a stream of
 * unknown age.
 */
export function fileTag(answer: FileAnswer, hashBytes: (bytes: Uint8Array) => string): string | undefined {
  if (answer.etag !== undefined) return `"${answer.etag}"`;
  const { size, bytes } = answer.source;
  if (size !== undefined && answer.lastModified !== undefined)
    return `"${size.toString(16)}-${answer.lastModified.toString(16)}"`;
  if (bytes !== undefined) return `"${hashBytes(bytes)}"`;
  return undefined;
}

/**
 * Plans the answer to a request for a file. `baseHeaders` are the route's own (nosniff, what the
 * procedure declared); the file's headers are added to them.
 */
export function planFile(
  answer: FileAnswer,
  request: FileRequest,
  tag: string | undefined,
  baseHeaders: Record<string, string>,
): FilePlan {
  const { size, seekable } = answer.source;
  const headers: Record<string, string> = {
    ...baseHeaders,
    'content-type': answer.type,
    'content-disposition': contentDisposition(answer.disposition, answer.name),
    'accept-ranges': seekable && size !== undefined ? 'bytes' : 'none',
  };
  if (answer.contentSecurityPolicy !== false && baseHeaders['content-security-policy'] === undefined)
    headers['content-security-policy'] = answer.contentSecurityPolicy;
  if (tag !== undefined) headers.etag = tag;
  if (answer.lastModified !== undefined)
    headers['last-modified'] = new Date(answer.lastModified).toUTCString();
  const head = request.method === 'HEAD';
  const readsAll = request.method === 'GET' || head;
  // If-Match, else If-Unmodified-Since, first (RFC 9110, 13.2.2): a client that asks for the file
  // only as it knows it (a range of it above all) gets 412 rather than another version's bytes.
  // On reads only: a write that answers with a file has run by now, and a 412 would deny it.
  if (readsAll && !stillAsKnown(request, tag, answer.lastModified)) throw staleVersion();
  // If-None-Match wins over If-Modified-Since (RFC 9110, 13.2.2); both only on GET and HEAD.
  const unchanged =
    readsAll &&
    (request.ifNoneMatch !== undefined
      ? tag !== undefined && noneMatch(request.ifNoneMatch, tag)
      : answer.lastModified !== undefined &&
        (httpDate(request.ifModifiedSince) ?? Number.NEGATIVE_INFINITY) >= answer.lastModified);
  if (unchanged) {
    const { 'content-type': _type, 'content-disposition': _disposition, ...kept } = headers;
    return { status: 304, headers: kept, range: undefined, sendsBody: false };
  }
  let range: ByteRange | undefined;
  // Ranges are defined for GET (RFC 9110, 14.2): a HEAD answers as a whole GET would.
  if (
    request.method === 'GET' &&
    request.range !== undefined &&
    seekable &&
    size !== undefined &&
    rangeStillValid(request.ifRange, tag, answer)
  )
    range = byteRange(request.range, size);
  if (range !== undefined && size !== undefined) {
    headers['content-range'] = `bytes ${range.start}-${range.end}/${size}`;
    headers['content-length'] = String(range.end - range.start + 1);
    return { status: 206, headers, range, sendsBody: !head };
  }
  if (size !== undefined) headers['content-length'] = String(size);
  return { status: 200, headers, range: undefined, sendsBody: !head };
}

/**
 * `If-Range`: the range holds only while the file is what the client has part of (a strong tag
 * that matches, or the same modification date); otherwise the whole file is sent.
 */
function rangeStillValid(ifRange: string | undefined, tag: string | undefined, answer: FileAnswer): boolean {
  if (ifRange === undefined) return true;
  const value = ifRange.trim();
  if (value.startsWith('"') || value.startsWith('W/'))
    return tag !== undefined && !value.startsWith('W/') && value === tag;
  const date = httpDate(value);
  // A date validates only when strong: a second or more before now (RFC 9110, 13.1.5).
  return (
    date !== undefined &&
    answer.lastModified !== undefined &&
    date === answer.lastModified &&
    answer.lastModified <= Date.now() - 1000
  );
}

/** Bytes as a web body: in memory as they are, a stream or an async iterable pulled chunk by chunk. */
export function webBody(
  bytes: Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
): Uint8Array | ReadableStream<Uint8Array> {
  return bytes instanceof Uint8Array || bytes instanceof ReadableStream ? bytes : pulledStream(bytes);
}
