/**
 * Puts a call's input on the wire the way the server takes it apart (docs/procedures.md): path
 * parameters from the input, the rest as a query string (GET, DELETE) or a JSON body (POST,
 * PUT, PATCH), and for `update*` the `data` field as the whole body.
 */
import { fillPath, pathParams } from '../core/naming.js';
import { ClientError } from './errors.js';
import type { ManifestRoute } from './manifest.js';

/** A call, encoded: the path (with query string) below the prefix, and the JSON body if any. */
export interface EncodedCall {
  path: string;
  body: string | undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function queryValue(where: string, key: string, value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  throw new ClientError(
    'invalid-input',
    `${where}: "${key}" cannot be sent in a query string (only strings, numbers, booleans, dates and arrays of them can)`,
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

function pathOf(where: string, route: ManifestRoute, input: Record<string, unknown>): string {
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
      return { path, body: input.data === undefined ? undefined : JSON.stringify(input.data) };
    case 'body': {
      const rest = withoutParams(input, params);
      return {
        path,
        body: Object.keys(rest).length === 0 && params.length > 0 ? undefined : JSON.stringify(rest),
      };
    }
  }
}
