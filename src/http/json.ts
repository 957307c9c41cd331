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
  return holdsForbiddenKey(parsed) ? refusalOf(parsed as object) : undefined;
}

/** Whether a key is refused: each object one visit, nothing made per value (an attacker's body of a million numbers is a loop). */
function holdsForbiddenKey(parsed: unknown): boolean {
  if (typeof parsed !== 'object' || parsed === null) return false;
  // Iterative, so that a deeply nested body cannot overflow the stack.
  const pending: object[] = [parsed];
  while (pending.length > 0) {
    const value = pending.pop() as object;
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) {
        const item: unknown = value[index];
        if (typeof item === 'object' && item !== null) pending.push(item);
      }
      continue;
    }
    for (const key in value) {
      const child: unknown = (value as Record<string, unknown>)[key];
      const isObject = typeof child === 'object' && child !== null;
      if (isForbidden(key, child, isObject)) return true;
      if (isObject) pending.push(child);
    }
  }
  return false;
}

function isForbidden(key: string, child: unknown, isObject: boolean): boolean {
  return key === '__proto__' || (key === 'constructor' && isObject && 'prototype' in (child as object));
}

/** The refusal of a body that holds a refused key, naming its path: each object noted with its parent and key. */
function refusalOf(parsed: object): ProceedError | undefined {
  const objects: object[] = [parsed];
  const parents: number[] = [-1];
  const keys: (string | number)[] = [''];
  const pending: number[] = [0];
  const note = (child: object, parent: number, key: string | number) => {
    pending.push(objects.length);
    objects.push(child);
    parents.push(parent);
    keys.push(key);
  };
  while (pending.length > 0) {
    const at = pending.pop() as number;
    const value = objects[at] as object;
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) {
        const item: unknown = value[index];
        if (typeof item === 'object' && item !== null) note(item, at, index);
      }
      continue;
    }
    for (const key in value) {
      const child: unknown = (value as Record<string, unknown>)[key];
      const isObject = typeof child === 'object' && child !== null;
      if (isForbidden(key, child, isObject)) {
        let path = key;
        for (let up = at; up > 0; up = parents[up] as number) path = `${keys[up]}.${path}`;
        return new ProceedError(
          'VALIDATION_FAILED',
          `The body holds the key "${path}", which is refused: it could change the prototype of objects on the server`,
          { errors: [{ path, message: `The key "${key}" is not accepted in a body` }] },
        );
      }
      if (isObject) note(child as object, at, key);
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
