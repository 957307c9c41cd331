/**
 * The naming convention (docs/procedures.md) in one place. The server, the OpenAPI generator, the CLI
 * and the client all ask this module where a procedure lives; nothing else knows the rules.
 */
import { ProceedConfigError } from './errors.js';

export const httpMethods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof httpMethods)[number];
export type ProcedureKind = 'query' | 'mutation';

/**
 * An explicit route: `path` is relative to the mount prefix and may hold `:params`. Without
 * `method` and `path`, the convention's route with another status.
 */
export interface RestOverride {
  method?: HttpMethod;
  path?: string;
  /**
   * The success status; default 201 for `create*` names and 200 otherwise. A list lets the
   * handler choose per call (`response.status()`); the first is the default.
   */
  status?: SuccessStatus | readonly SuccessStatus[];
}

/** What `.rest()` takes: a method and a path together, a status, or all three. */
export type RestRoute =
  | { method: HttpMethod; path: string; status?: SuccessStatus | readonly SuccessStatus[] }
  | { method?: never; path?: never; status: SuccessStatus | readonly SuccessStatus[] };

/**
 * Statuses a procedure may succeed with: 202 suits work accepted for later (a mail to send), 204
 * an answer with nothing to say (the procedure then declares no output, and sends no body).
 */
export type SuccessStatus = 200 | 201 | 202 | 204;

/** What a conventional name prefix implies. */
export interface Convention {
  prefix: 'list' | 'get' | 'create' | 'update' | 'delete';
  kind: ProcedureKind;
  method: HttpMethod;
  /** Relative to the collection: '' or '/:id'. */
  suffix: '' | '/:id';
}

const conventions: readonly Convention[] = [
  { prefix: 'list', kind: 'query', method: 'GET', suffix: '' },
  { prefix: 'get', kind: 'query', method: 'GET', suffix: '/:id' },
  { prefix: 'create', kind: 'mutation', method: 'POST', suffix: '' },
  { prefix: 'update', kind: 'mutation', method: 'PUT', suffix: '/:id' },
  { prefix: 'delete', kind: 'mutation', method: 'DELETE', suffix: '/:id' },
];

/**
 * The convention a procedure name follows, or undefined. The prefix must be followed by an
 * upper-case letter or the end of the name, so `getaway` is not a `get*` procedure but `get` is.
 */
export function conventionOf(name: string): Convention | undefined {
  for (const convention of conventions) {
    if (!name.startsWith(convention.prefix)) continue;
    const next = name.charAt(convention.prefix.length);
    if (next === '' || (next >= 'A' && next <= 'Z')) return convention;
  }
  return undefined;
}

/** How the input object of a procedure is put together from the request. */
export type InputMode =
  /** query string + path params (GET, DELETE) */
  | 'query'
  /** JSON body + path params (POST, PUT, PATCH) */
  | 'body'
  /** `{ id, data }`: `id` from the path, `data` the whole body (`update*` with an `:id`) */
  | 'update';

export interface ResolvedRoute {
  method: HttpMethod;
  /** Relative to the mount prefix, e.g. `/posts/:id`. */
  path: string;
  params: string[];
  inputMode: InputMode;
  successStatus: SuccessStatus;
  /** Every status the handler may choose; `[successStatus]` when it has no choice. */
  successStatuses: readonly SuccessStatus[];
  convention: Convention | undefined;
}

const segmentPattern = /^[A-Za-z0-9][A-Za-z0-9._~-]*$/;
const paramPattern = /^:[A-Za-z_][A-Za-z0-9_]*$/;

/** Checks a collection name: it becomes one path segment. */
export function assertCollectionName(name: string): void {
  if (!segmentPattern.test(name)) {
    throw new ProceedConfigError(
      `Collection name "${name}" cannot be a path segment: use letters, digits, '.', '_', '~' or '-'`,
    );
  }
}

/** Normalises a mount prefix: leading slash, no trailing slash; '' for the root. */
export function normalizePrefix(prefix: string): string {
  const trimmed = prefix.replace(/\/+$/, '');
  if (trimmed === '') return '';
  const withSlash = trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
  for (const segment of withSlash.slice(1).split('/')) {
    if (!segmentPattern.test(segment)) throw new ProceedConfigError(`Invalid mount prefix "${prefix}"`);
  }
  return withSlash;
}

/** The `:params` of a path pattern, in order. */
export function pathParams(path: string): string[] {
  return path
    .split('/')
    .filter((segment) => segment.startsWith(':'))
    .map((segment) => segment.slice(1));
}

function normalizeOverridePath(where: string, path: string): string {
  const withSlash = path.startsWith('/') ? path : `/${path}`;
  const trimmed = withSlash.length > 1 ? withSlash.replace(/\/+$/, '') : withSlash;
  const seen = new Set<string>();
  for (const segment of trimmed.slice(1).split('/')) {
    if (segment === '' && trimmed === '/') continue;
    const valid = segment.startsWith(':') ? paramPattern.test(segment) : segmentPattern.test(segment);
    if (!valid) throw new ProceedConfigError(`${where}: invalid path segment "${segment}" in "${path}"`);
    if (segment.startsWith(':')) {
      if (seen.has(segment)) throw new ProceedConfigError(`${where}: path "${path}" repeats ${segment}`);
      seen.add(segment);
    }
  }
  return trimmed;
}

/**
 * Where a procedure lives. Throws a {@link ProceedConfigError} naming the procedure when the name
 * has no known prefix and no override, or when the prefix contradicts the declared kind.
 *
 * @example
 * resolveRoute('posts', 'getPost', 'query') // { method: 'GET', path: '/posts/:id', … }
 */
export function resolveRoute(
  collection: string,
  name: string,
  kind: ProcedureKind,
  override?: RestOverride,
): ResolvedRoute {
  const where = `Procedure "${collection}.${name}"`;
  const convention = conventionOf(name);
  if (convention !== undefined && convention.kind !== kind) {
    throw new ProceedConfigError(
      `${where} is declared as a ${kind}, but its "${convention.prefix}" prefix means a ${convention.kind}`,
    );
  }
  let method: HttpMethod;
  let path: string;
  if (override?.method !== undefined && override.path !== undefined) {
    if (!httpMethods.includes(override.method)) {
      throw new ProceedConfigError(
        `${where}: method "${String(override.method)}" is not one of ${httpMethods.join(', ')}`,
      );
    }
    method = override.method;
    path = normalizeOverridePath(where, override.path);
  } else if (convention !== undefined) {
    method = convention.method;
    path = `/${collection}${convention.suffix}`;
  } else {
    throw new ProceedConfigError(
      `${where} has no conventional prefix (list, get, create, update, delete) and no .rest({ method, path }) override`,
    );
  }
  const params = pathParams(path);
  const bodyMethod = method === 'POST' || method === 'PUT' || method === 'PATCH';
  const inputMode: InputMode =
    convention?.prefix === 'update' && bodyMethod && params.includes('id')
      ? 'update'
      : bodyMethod
        ? 'body'
        : 'query';
  const declared = override?.status;
  const successStatuses: readonly SuccessStatus[] =
    declared === undefined
      ? [convention?.prefix === 'create' ? 201 : 200]
      : Array.isArray(declared)
        ? declared
        : [declared as SuccessStatus];
  for (const status of successStatuses) {
    if (![200, 201, 202, 204].includes(status)) {
      throw new ProceedConfigError(`${where}: success status ${String(status)} is not 200, 201, 202 or 204`);
    }
  }
  if (successStatuses.length === 0 || new Set(successStatuses).size !== successStatuses.length)
    throw new ProceedConfigError(`${where}: .rest({ status: [...] }) lists each status once, at least one`);
  const successStatus = successStatuses[0] as SuccessStatus;
  return { method, path, params, inputMode, successStatus, successStatuses, convention };
}

/** Fills a path pattern's `:params` from an input object, URL-encoding each value. */
export function fillPath(path: string, values: Record<string, unknown>): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined || value === null) throw new TypeError(`Missing path parameter "${name}"`);
    // A date as the server coerces it back (ISO 8601), as in a query string: not Date#toString.
    return encodeURIComponent(value instanceof Date ? value.toISOString() : String(value));
  });
}

/**
 * A route's path as a template, its parameters in braces (`/api/posts/:id` → `/api/posts/{id}`):
 * the form of the OpenAPI document's paths and of a trace's route.
 */
export function pathTemplate(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}
