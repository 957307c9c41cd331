/**
 * Puts a call's input on the wire the way the server takes it apart (docs/procedures.md): path
 * parameters from the input, the rest as a query string (GET, DELETE) or a JSON body (POST,
 * PUT, PATCH), and for `update*` the `data` field as the whole body.
 */
import { fillPath, pathParams } from '../core/naming.js';
import { ClientError } from './errors.js';
import type { ManifestRoute } from './manifest.js';

/**
 * A call, encoded: the path (with query string) below the prefix, and the body if any: JSON
 * text, a form (its type and boundary are the `fetch`'s to set) or a file as the whole body.
 */
export interface EncodedCall {
  path: string;
  body: string | FormData | Blob | undefined;
  /** The body's headers: `Content-Type`, and a raw file's `Content-Disposition`. */
  headers?: Record<string, string>;
}

const isBlob = (value: unknown): value is Blob => typeof Blob === 'function' && value instanceof Blob;

/** Whether an input holds a file at its top level (a Blob, or an array with one). */
function holdsFile(input: Record<string, unknown>): boolean {
  return Object.values(input).some((value) => isBlob(value) || (Array.isArray(value) && value.some(isBlob)));
}

/** A file as the whole body, with its type and (a `File`'s) name, as the server reads them back. */
function rawFile(path: string, file: Blob): EncodedCall {
  const headers: Record<string, string> = { 'content-type': file.type || 'application/octet-stream' };
  const name = (file as Partial<File>).name;
  if (typeof name === 'string' && name !== '')
    headers['content-disposition'] = `attachment; filename*=UTF-8''${encodeURIComponent(name)}`;
  return { path, body: file, headers };
}

/** Fields as a form: files as file parts, everything else as text, as a query string would carry it. */
function formOf(where: string, values: Record<string, unknown>): FormData {
  const form = new FormData();
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === undefined || item === null) continue;
      if (isBlob(item)) form.append(key, item, (item as Partial<File>).name ?? 'blob');
      else form.append(key, queryValue(where, key, item, 'a form'));
    }
  }
  return form;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function queryValue(where: string, key: string, value: unknown, carrier = 'a query string'): string {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  throw new ClientError(
    'invalid-input',
    `${where}: "${key}" cannot be sent in ${carrier} (only strings, numbers, booleans, dates and arrays of them can)`,
  );
}

function queryString(where: string, values: Record<string, unknown>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) {
    // A query string has no way to say null or undefined: the field is absent.
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) {
      for (const item of value) {
        if (item !== undefined && item !== null) search.append(key, queryValue(where, key, item));
      }
    } else {
      search.append(key, queryValue(where, key, value));
    }
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/**
 * The call's path. A parameter no path segment can carry is refused before sending: empty
 * (`/api/posts/` is the list), or `.` and `..`, which URLs resolve away, encoded or not
 * (`/api/posts/..` is `/api/`): each would call another route.
 */
function pathOf(where: string, route: ManifestRoute, input: Record<string, unknown>): string {
  for (const name of pathParams(route.path)) {
    const value = input[name];
    const text = value === undefined || value === null ? undefined : String(value);
    if (text === '' || text === '.' || text === '..')
      throw new ClientError(
        'invalid-input',
        `${where}: path parameter "${name}" is ${JSON.stringify(text)}, which no URL carries as a path segment`,
      );
  }
  try {
    return fillPath(route.path, input);
  } catch (error) {
    throw new ClientError('invalid-input', `${where}: ${(error as Error).message}`, { cause: error });
  }
}

function withoutParams(input: Record<string, unknown>, params: readonly string[]): Record<string, unknown> {
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) if (!params.includes(key)) rest[key] = value;
  return rest;
}

/**
 * Encodes one call. `where` names the procedure in error messages.
 *
 * @example
 * encodeCall('notes.getNote', { method: 'GET', path: '/notes/:id', inputMode: 'query' }, { id: '1' });
 * // { path: '/notes/1', body: undefined }
 */
export function encodeCall(where: string, route: ManifestRoute, input: unknown): EncodedCall {
  const params = pathParams(route.path);
  if (input === undefined || input === null) {
    return { path: pathOf(where, route, {}), body: undefined };
  }
  if (isBlob(input)) {
    if (route.inputMode === 'body' && params.length === 0) return rawFile(pathOf(where, route, {}), input);
    throw new ClientError('invalid-input', `${where}: this procedure takes an object, not a file`);
  }
  if (!isPlainObject(input)) {
    if (route.inputMode === 'body' && params.length === 0) {
      return { path: pathOf(where, route, {}), body: JSON.stringify(input) };
    }
    throw new ClientError('invalid-input', `${where}: the input must be an object`);
  }
  const path = pathOf(where, route, input);
  switch (route.inputMode) {
    case 'query':
      return { path: `${path}${queryString(where, withoutParams(input, params))}`, body: undefined };
    case 'update':
      if (isBlob(input.data)) return rawFile(path, input.data);
      return { path, body: input.data === undefined ? undefined : JSON.stringify(input.data) };
    case 'body': {
      const rest = withoutParams(input, params);
      if (route.upload === 'form' || holdsFile(rest)) return { path, body: formOf(where, rest) };
      return {
        path,
        body: Object.keys(rest).length === 0 && params.length > 0 ? undefined : JSON.stringify(rest),
      };
    }
  }
}
