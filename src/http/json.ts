/**
 * JSON bodies, for every adapter (docs/procedures.md, "Input"): which requests carry one a
 * procedure may read, and the keys refused in it.
 */
import { ProceedError } from '../core/errors.js';

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** `type/subtype` of a `Content-Type`, lower case, without parameters; '' when there is none. */
export function mediaTypeOf(header: string | readonly string[] | undefined): string {
  const text = Array.isArray(header) ? (header[0] ?? '') : ((header as string | undefined) ?? '');
  const semicolon = text.indexOf(';');
  return (semicolon < 0 ? text : text.slice(0, semicolon)).trim().toLowerCase();
}

/**
 * Whether a request to a procedure that reads a body may have its body parsed: a JSON media
 * type (`application/json`, or one with the `+json` suffix RFC 6839 gives JSON: a PATCH's
 * `application/merge-patch+json`, `application/vnd.api+json`; not a JSON Patch's list of
 * operations), or no media type and no body.
 */
export function isJsonBody(headers: Headers): boolean {
  const type = headers['content-type'];
  if (type === undefined) {
    const length = headers['content-length'];
    return (length === undefined || length === '0') && headers['transfer-encoding'] === undefined;
  }
  const media = mediaTypeOf(type);
  if (media === 'application/json') return true;
  // A JSON Patch (RFC 6902) is a list of operations to apply, which no input reads as one.
  return (
    media.startsWith('application/') && media.endsWith('+json') && media !== 'application/json-patch+json'
  );
}

/** A body a procedure cannot take: JSON only (415). */
export const notJsonBody = () =>
  new ProceedError(
    'UNSUPPORTED_MEDIA_TYPE',
    'The request body must be application/json (or a +json media type)',
  );

/**
 * Where valid JSON holds a key that could change object prototypes once parsed (`__proto__`, or
 * `constructor.prototype`): a 400 naming it. Undefined when the text is not valid JSON at all.
 */
export function forbiddenKeyIn(text: string): ProceedError | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  return forbiddenKeyOf(parsed);
}

/**
 * Whether a JSON text may hold a refused key: one of the two names, or an escape (`\u005f` can
 * spell `__proto__`). A key without a backslash is spelled as it is read, so a text with neither
 * holds none, and its parsed value need not be walked.
 */
export function mayHoldForbiddenKey(text: string): boolean {
  return text.includes('__proto__') || text.includes('constructor') || text.includes('\\u');
}

/**
 * The check every JSON text gets once parsed (a body, an MCP message, a socket's message): a 400
 * naming the first refused key, the parsed value walked only when the text may spell one.
 */
export function refusedKeyOf(text: string, parsed: unknown): ProceedError | undefined {
  return mayHoldForbiddenKey(text) ? forbiddenKeyOf(parsed) : undefined;
}

/** The same check on a body already parsed: a 400 naming the first refused key, or undefined. */
export function forbiddenKeyOf(parsed: unknown): ProceedError | undefined {
  // Iterative: a deeply nested body must not overflow the stack here.
  const pending: [value: unknown, path: string][] = [[parsed, '']];
  while (pending.length > 0) {
    const [value, path] = pending.pop() as [unknown, string];
    if (typeof value !== 'object' || value === null) continue;
    for (const key of Object.keys(value)) {
      const child = (value as Record<string, unknown>)[key];
      const at = path === '' ? key : `${path}.${key}`;
      const forbidden =
        key === '__proto__' ||
        (key === 'constructor' && typeof child === 'object' && child !== null && 'prototype' in child);
      if (forbidden)
        return new ProceedError(
          'VALIDATION_FAILED',
          `The body holds the key "${at}", which is refused: it could change the prototype of objects on the server`,
          { errors: [{ path: at, message: `The key "${key}" is not accepted in a body` }] },
        );
      pending.push([child, at]);
    }
  }
  return undefined;
}

/** On every JSON answer: its media type, and never sniffed as anything else. */
export const jsonHeaders = {
  'content-type': 'application/json; charset=utf-8',
  'x-content-type-options': 'nosniff',
} as const;

/**
 * A body that is not JSON, in the same words on every runtime: the engines' own messages differ
 * (V8's and JavaScriptCore's), and Fastify's names the header rather than what is wrong.
 */
export const invalidJson = () => new ProceedError('INVALID_JSON', 'The body is not valid JSON');
