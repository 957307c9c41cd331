/**
 * URLs a router cannot read, for every adapter: a 400 naming what is wrong, never a 404 that
 * would hide it or a 500.
 */
import { ProceedError, ValidationError } from '../core/errors.js';

/** The longest path parameter a route takes, in characters. */
export const maxParamLength = 500;

/** A URL whose path does not decode: no route can be told, so the error names the URL itself (`''`). */
export const malformedUrl = () => {
  const message = 'The URL is malformed (bad percent-encoding)';
  return new ValidationError([{ path: '', message }], message);
};

/** A path parameter past {@link maxParamLength}, named where the router knows it. */
export const paramTooLong = (name = '') =>
  new ValidationError(
    [{ path: name, message: `Longer than ${maxParamLength} characters` }],
    `A path parameter${name === '' ? '' : ` (${name})`} is longer than ${maxParamLength} characters`,
  );

/**
 * Whether a `Host` header's value is an authority a URL can hold as it is (`example.com:8080`,
 * `[::1]`): not `1.2.3.4.5`, `a:99999`, `a b`, nor one carrying a path, a query or credentials,
 * which would move a URL built from it. One rule for every place that builds a URL from it.
 */
export function isHostValue(host: string): boolean {
  // A comma parses as part of a name, but no host has one: it is two Host lines, joined.
  return !/[/?#@\\,]/.test(host) && URL.canParse(`http://${host}`);
}

/**
 * `Host` values accepted lately: a server sees a few, request after request (its names, a probe's
 * address); past 64 the set starts again, so that made-up names cannot grow it.
 */
const acceptedHosts = new Set<string>();

/** Whether a `Host` value is one a URL can hold ({@link isHostValue}), remembered. */
export function isAcceptedHost(host: string): boolean {
  if (acceptedHosts.has(host)) return true;
  if (!isHostValue(host)) return false;
  if (acceptedHosts.size >= 64) acceptedHosts.clear();
  acceptedHosts.add(host);
  return true;
}

/**
 * The 400 of a request whose `Host` no URL can hold (RFC 9112, section 3.2: a server MUST refuse
 * it, and two `Host` lines, which a Fetch runtime joins with ", "). Deno builds the request's URL
 * from it as it comes, so that `Host: example.com/admin?` would move the path a proxy checked;
 * Bun gives a URL without its origin. An empty value is allowed (a URI with no authority).
 */
export function hostRefusal(host: string | null): ProceedError | undefined {
  if (host === null || host === '' || isAcceptedHost(host)) return undefined;
  // No host holds a comma: this is two Host lines, joined.
  if (host.includes(','))
    return new ProceedError('BAD_REQUEST', 'A request names one host: it sent two Host headers');
  return new ProceedError(
    'BAD_REQUEST',
    `The Host header names no host a URL can hold: ${JSON.stringify(host.slice(0, 100))}`,
  );
}

/**
 * The 400 of a request whose `Transfer-Encoding` names a coding beside `chunked` (`gzip,
 * chunked`): the runtime decodes `chunked` alone, so the body would reach the route still coded,
 * and a proxy in front may frame it otherwise. RFC 9112 (section 6.1) suggests 501; a request the
 * client can mend is a 4xx here, as every other one (docs/errors.md).
 */
export function transferCodingRefusal(coding: string | null): ProceedError | undefined {
  if (coding === null || coding.trim().toLowerCase() === 'chunked') return undefined;
  return new ProceedError(
    'BAD_REQUEST',
    `The server decodes no transfer coding but chunked, not Transfer-Encoding: ${coding.trim().slice(0, 100)}`,
  );
}

/** Whether a path's percent-encoding decodes. */
export function decodes(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Query parameters whose values a log never holds: an `access_token` (a WebSocket handshake's
 * bearer token, docs/sockets.md, "Authentication"), and whatever a client should never have put
 * in a URL but may (`?password=…`, `?api_key=…`, `?key=…`, `?client_secret=…`, a signed URL's
 * `signature` or `sig`).
 */
const secretName = /passw|secret|token|api[-_]?key|signature|credential|^(?:sig|key)$/i;
/** Whether a query (its text from the `?`) may hold such a name, before it is read name by name. */
const mayHoldSecret = /passw|secret|token|api[-_]?key|signature|credential|[?&](?:sig|key)=/i;

/**
 * A URL as logs write it: the value of a parameter whose name holds a secret ({@link secretName})
 * replaced by `[redacted]`. The query is read exactly as the handshake reads it, with
 * `URLSearchParams` on all that follows the first `?`: one more `?` before the first name, a `#`
 * (Node passes one on), escapes in a name (`access%5Ftoken`) all spell the same parameter. Looked
 * for only where the query holds such a name or a percent sign, so other URLs cost a search of
 * their text.
 */
export function loggedUrl(url: string): string {
  const query = url.indexOf('?');
  if (query < 0) return url;
  if (!url.includes('%', query) && !mayHoldSecret.test(url.slice(query))) return url;
  const parts = url.slice(query + 1).split('&');
  let redacted = false;
  for (let index = 0; index < parts.length; index++) {
    const part = parts[index] as string;
    const equals = part.indexOf('=');
    if (equals < 0) continue;
    // URLSearchParams drops one leading `?` of the text it is given.
    const name = index === 0 && part.startsWith('?') ? part.slice(1, equals) : part.slice(0, equals);
    if (secretName.test(queryName(name))) {
      parts[index] = `${part.slice(0, equals)}=[redacted]`;
      redacted = true;
    }
  }
  return redacted ? `${url.slice(0, query + 1)}${parts.join('&')}` : url;
}

/** A query parameter's name as `URLSearchParams` reads it: `+` a space, escapes decoded. */
function queryName(raw: string): string {
  const spaced = raw.replaceAll('+', ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}
