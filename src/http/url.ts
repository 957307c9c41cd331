/**
 * URLs a router cannot read, for every adapter: a 400 naming what is wrong, never a 404 that
 * would hide it or a 500.
 */
import { ProceedError } from '../core/errors.js';

/** The longest path parameter a route takes, in characters. */
export const maxParamLength = 500;

export const malformedUrl = () =>
  new ProceedError('VALIDATION_FAILED', 'The URL is malformed (bad percent-encoding)');

export const paramTooLong = () =>
  new ProceedError('VALIDATION_FAILED', `A path parameter is longer than ${maxParamLength} characters`);

/**
 * Whether a `Host` header's value is an authority a URL can hold as it is (`example.com:8080`,
 * `[::1]`): not `1.2.3.4.5`, `a:99999`, `a b`, nor one carrying a path, a query or credentials,
 * which would move a URL built from it. One rule for every place that builds a URL from it.
 */
export function isHostValue(host: string): boolean {
  return !/[/?#@\\]/.test(host) && URL.canParse(`http://${host}`);
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
 * A URL as logs write it: the value of an `access_token` query parameter (a WebSocket
 * handshake's bearer token, docs/sockets.md, "Authentication") replaced by `[redacted]`. Looked
 * for only where the URL holds the name, so other URLs cost a search of their text.
 */
export function loggedUrl(url: string): string {
  return url.includes('access_token=') ? url.replace(/([?&]access_token=)[^&#]*/g, '$1[redacted]') : url;
}
