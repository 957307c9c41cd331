/**
 * Turns collections into a route table: the one list the server, OpenAPI generator, CLI and
 * start-up log all read. Every configuration mistake is found here, before any request.
 */

import { fieldNoQueryCarries, zodCoercedField } from './coerce.js';
import { ProceedConfigError } from './errors.js';
import {
  assertCollectionName,
  type Convention,
  type HttpMethod,
  type InputMode,
  normalizePrefix,
  type ResolvedRoute,
  resolveRoute,
  type SuccessStatus,
} from './naming.js';
import type { AnyProcedure, Collection, ProcedureDefinition } from './procedure.js';
import { type JsonSchema, type StandardSchemaV1, toJsonSchema, whyNoJsonSchema } from './schema.js';
import { checksNothing, keyShapeOf } from './unknown-keys.js';
import { checkUploadRoute, uploadShapeOf } from './uploads.js';

/** One procedure's place in the API. */
export interface RouteEntry {
  readonly collection: string;
  readonly name: string;
  readonly procedure: AnyProcedure;
  readonly definition: ProcedureDefinition;
  readonly method: HttpMethod;
  /** Full path with the mount prefix, e.g. `/api/posts/:id`. */
  readonly path: string;
  /** The collection's own path, e.g. `/api/posts`: where `create*` results live. */
  readonly collectionPath: string;
  readonly params: readonly string[];
  readonly inputMode: InputMode;
  readonly successStatus: SuccessStatus;
  /** The statuses the handler chooses among (`.rest({ status: [...] })`); `[successStatus]` otherwise. */
  readonly successStatuses: readonly SuccessStatus[];
  readonly convention: Convention | undefined;
  /** How the route takes files (docs/uploads.md): a form, the raw body, or none. */
  readonly upload: 'form' | 'raw' | undefined;
  /**
   * Where a `create*`'s record lives, as a pattern its `Location` fills with the call's path
   * parameters and the new id: the route's own path when a GET reads single records under it
   * (`POST /posts/:id/attachments` → `/posts/:id/attachments/{id}`), else the collection's when
   * one reads them there; undefined when no GET reads its records (no `Location` then).
   */
  readonly recordsPath: string | undefined;
}

/**
 * The first path parameter an object input does not name, where the input takes no other key:
 * the validator would drop its value unseen. An input of no object shape, or one that reads
 * any key, is not judged here.
 */
function paramInputDrops(definition: ProcedureDefinition, all: readonly string[]): string | undefined {
  // A parameter a step reads (owned()'s id) has its reader: the input need not hold it too.
  const readByStep = definition.documentation.flatMap((documented) => documented.pathParams ?? []);
  const params = all.filter((param) => !readByStep.includes(param));
  if (params.length === 0 || definition.input === undefined) return undefined;
  const keys = closedKeysOf(definition.input);
  return keys === undefined ? undefined : params.find((param) => !keys.has(param));
}

/**
 * The keys an object input names, where it takes no other (its key shape, as the unknown-key
 * check reads it, for every validator); undefined for a loose object, a record, a union or no
 * object at all.
 */
function closedKeysOf(input: StandardSchemaV1): ReadonlySet<string> | undefined {
  const shape = keyShapeOf(input);
  if (checksNothing(shape) || shape.tagged !== undefined || shape.rest !== undefined) return undefined;
  return shape.fields === undefined ? undefined : new Set(shape.fields.keys());
}

/**
 * What makes a procedure's route wrong whatever its request: a file, stream or socket declared
 * with a status it never sends; a page whose input takes more than its output holds; a socket or
 * stream declared as a mutation; a mutation on a GET (answered to HEAD, prefetched, and sent by
 * any site a user visits, past the cross-site check of writes); an `update*` whose input has
 * fields beside `id` and no `data` for its JSON body (every call a 400).
 */
function wiringRefusal(
  owner: string,
  definition: ProcedureDefinition,
  route: ResolvedRoute,
): string | undefined {
  const kind = definition.output?.kind;
  const answersWhole = kind === 'events' || kind === 'download' || kind === 'socket';
  if (answersWhole && route.successStatuses.some((status) => status !== 200))
    return `${owner} answers ${kind === 'events' ? 'an event stream' : kind === 'socket' ? 'a WebSocket' : 'a file'}, which is a 200 (a socket's 101), but declares ${route.successStatuses.join(', ')}${route.convention?.prefix === 'create' ? ' (a create* answers 201 with the Location of what it made)' : ''}: answer 200, with .rest({ method, path, status: 200 }) or another name`;
  const pageBound = pageBoundBelowLimit(definition);
  if (pageBound !== undefined)
    return `${owner} takes a limit of up to ${pageBound.limit}, but its output's data holds at most ${pageBound.items}: a request for more fails as the handler's error (500); give the input and the output one maxLimit (cursorInput and cursorPage, or offsetInput and offsetPage, each { maxLimit })`;
  if (definition.kind === 'mutation' && (kind === 'socket' || kind === 'events'))
    return `${owner} ${kind === 'socket' ? 'opens a WebSocket' : 'answers an event stream'} and is declared with .mutation(): it is opened with a GET, so declare it with .query()`;
  if (definition.kind === 'mutation' && route.method === 'GET')
    return `${owner} is a mutation but maps to GET, which is answered to HEAD, prefetched and sent by any site a user visits, with no cross-site check (a read's): make it a POST with .rest({ method: 'POST', path }), or a query if it changes nothing`;
  // An update that takes a form (a file among its fields) reads its fields flat, as a form is.
  if (
    route.inputMode === 'update' &&
    definition.input !== undefined &&
    uploadShapeOf(definition, route.inputMode)?.mode !== 'form'
  ) {
    const keys = closedKeysOf(definition.input);
    // An input of the id alone reads no body, and is served as it is.
    if (keys !== undefined && !keys.has('data') && [...keys].some((name) => name !== 'id'))
      return `${owner} is an update*, which takes { id, data } (id from the path, data the whole body), but its input has fields beside id and no data: write .input(z.object({ id: …, data: z.object({ … }) })), or, for a flat body, give it a name without the update prefix (editPost) and .rest({ method: 'PATCH', path: '${route.path}' }) (docs/procedures.md, "Input")`;
  }
  const notObject = nonObjectInput(definition, route);
  if (notObject !== undefined)
    return `${owner} takes ${notObject} as its whole input, which no request carries: a query string and a JSON body are objects, and every such request was a 400; name it, .input(z.object({ items: … })) (docs/procedures.md, "Input")`;
  return undefined;
}

/** What an input is when a query string or a JSON body could never be it: `an array`, `a string`… */
function nonObjectInput(definition: ProcedureDefinition, route: ResolvedRoute): string | undefined {
  // A raw upload's whole input is its file.
  if (definition.input === undefined || uploadShapeOf(definition, route.inputMode)?.mode === 'raw')
    return undefined;
  let type: unknown;
  try {
    type = toJsonSchema(definition.input, { io: 'input' }).type;
  } catch {
    return undefined;
  }
  const types = Array.isArray(type) ? type : [type];
  const named = types.filter((each): each is string => typeof each === 'string' && each !== 'null');
  if (named.length === 0 || named.includes('object')) return undefined;
  const [first = ''] = named;
  return `${/^[aeiou]/.test(first) ? 'an' : 'a'} ${first}`;
}

/**
 * The `limit` an input takes at most, where it exceeds the most items its output's `data` holds
 * (a cursor or offset page whose two halves were given two `maxLimit`s).
 */
function pageBoundBelowLimit(definition: ProcedureDefinition): { limit: number; items: number } | undefined {
  const { input, output } = definition;
  if (input === undefined || output?.kind !== 'fixed') return undefined;
  try {
    const limit = propertyOf(toJsonSchema(input, { io: 'input' }), 'limit')?.maximum;
    if (typeof limit !== 'number') return undefined;
    const items = propertyOf(toJsonSchema(output.schema, { io: 'output' }), 'data')?.maxItems;
    return typeof items === 'number' && limit > items ? { limit, items } : undefined;
  } catch {
    // A schema with no JSON Schema (a transform) says nothing of its bounds.
    return undefined;
  }
}

function propertyOf(schema: JsonSchema, key: string): JsonSchema | undefined {
  return (schema.properties as Record<string, JsonSchema> | undefined)?.[key];
}

/**
 * A path parameter a step checks with one schema and the input with another of a different type
 * or format (owned()'s UUID against an input's digits): named with both, as JSON Schema says them.
 */
function stepParamDisagreement(
  definition: ProcedureDefinition,
): { param: string; step: string; input: string } | undefined {
  if (definition.input === undefined) return undefined;
  for (const documented of definition.documentation)
    for (const [param, schema] of Object.entries(documented.pathParamSchemas ?? {})) {
      try {
        const field = propertyOf(toJsonSchema(definition.input, { io: 'input' }), param);
        if (field === undefined) continue;
        const step = toJsonSchema(schema, { io: 'input' });
        const sameType = step.type === field.type;
        const formats =
          step.format === field.format || (field.format === undefined && field.pattern === undefined);
        if (sameType && formats) continue;
        const said = (each: JsonSchema) =>
          [each.type, each.format ?? (each.pattern === undefined ? undefined : `/${String(each.pattern)}/`)]
            .filter((part) => part !== undefined)
            .join(' ');
        return { param, step: said(step), input: said(field) };
      } catch {
        // A schema with no JSON Schema says nothing to compare.
      }
    }
  return undefined;
}

/** A route a procedure took: who, and the path as it wrote it. */
export interface TakenRoute {
  readonly owner: string;
  readonly path: string;
}

/** Two patterns that differ only in parameter names match the same requests. */
export function routeKey(method: string, path: string): string {
  return `${method} ${path.replace(/:[A-Za-z0-9_]+/g, ':')}`;
}

/**
 * Plans the routes of some collections under a prefix. Throws {@link ProceedConfigError} for
 * unknown prefixes, prefix/kind contradictions, duplicate collections and duplicate routes.
 *
 * @example
 * planRoutes([posts], '/api').map((route) => `${route.method} ${route.path}`)
 */
export function planRoutes(
  collections: readonly Collection[],
  prefix = '/api',
  taken: Map<string, TakenRoute> = new Map(),
): RouteEntry[] {
  const base = normalizePrefix(prefix);
  const names = new Set<string>();
  const entries: RouteEntry[] = [];
  for (const collection of collections) {
    assertCollectionName(collection.name);
    if (names.has(collection.name)) {
      throw new ProceedConfigError(`Collection "${collection.name}" is mounted twice under "${base || '/'}"`);
    }
    names.add(collection.name);
    for (const [name, procedure] of Object.entries(collection.procedures)) {
      const definition = procedure['~proceed'];
      const resolved = resolveRoute(collection.name, name, definition.kind, definition.rest);
      const path = `${base}${resolved.path}` || '/';
      const key = routeKey(resolved.method, path);
      const owner = `${collection.name}.${name}`;
      const previous = taken.get(key);
      if (previous !== undefined) {
        // `/:id` and `/:slug` are one route: a parameter matches any segment, whatever its name.
        throw new ProceedConfigError(
          previous.path === path
            ? `Procedures "${previous.owner}" and "${owner}" both map to ${resolved.method} ${path}`
            : `Procedures "${previous.owner}" (${resolved.method} ${previous.path}) and "${owner}" (${resolved.method} ${path}) map to one route: a path parameter matches any segment, whatever its name`,
        );
      }
      const miswired = wiringRefusal(owner, definition, resolved);
      if (miswired !== undefined) throw new ProceedConfigError(miswired);
      const onlyNoContent = resolved.successStatuses.every((status) => status === 204);
      if (onlyNoContent && definition.output !== undefined) {
        throw new ProceedConfigError(
          `${owner} answers 204 No Content, which has no body: remove its .output(), or answer 200`,
        );
      }
      // A version travels in the ETag of the answer that carries the record; 204 carries none.
      if (onlyNoContent && definition.versioning !== undefined) {
        throw new ProceedConfigError(
          `${owner} answers 204 No Content and is .versioned(): a 204 carries no record and no ETag; answer 200 with the record, or drop .versioned()`,
        );
      }
      if (definition.output?.kind === 'events' && resolved.method !== 'GET') {
        throw new ProceedConfigError(
          `${owner} answers server-sent events and maps to ${resolved.method}: an event stream is a GET (what EventSource sends); make it a query, or .rest({ method: 'GET', path })`,
        );
      }
      if (definition.output?.kind === 'socket' && resolved.method !== 'GET') {
        throw new ProceedConfigError(
          `${owner} opens a WebSocket and maps to ${resolved.method}: a WebSocket handshake is a GET; make it a query, or .rest({ method: 'GET', path })`,
        );
      }
      if (
        definition.output?.kind === 'socket' &&
        (definition.versioning !== undefined || definition.idempotent)
      ) {
        throw new ProceedConfigError(
          `${owner} opens a WebSocket and is .versioned() or .idempotent(): a socket has no version and is never replayed; drop them`,
        );
      }
      if (definition.output?.kind === 'events' && definition.versioning !== undefined) {
        throw new ProceedConfigError(
          `${owner} answers server-sent events and is .versioned(): a stream has no version; drop .versioned()`,
        );
      }
      if (definition.output?.kind === 'download' && definition.versioning !== undefined) {
        throw new ProceedConfigError(
          `${owner} answers a file and is .versioned(): a file carries its own entity tag (sendFile's etag or lastModified); drop .versioned()`,
        );
      }
      if (definition.output?.kind === 'download' && definition.idempotent) {
        throw new ProceedConfigError(
          `${owner} answers a file and is .idempotent(): a file answer is not kept for replays; drop .idempotent()`,
        );
      }
      if (definition.idempotent && resolved.method !== 'POST') {
        throw new ProceedConfigError(
          `${owner} is .idempotent() but answers ${resolved.method}: only a POST needs an Idempotency-Key (PUT and DELETE are idempotent already)`,
        );
      }
      const undescribed =
        resolved.inputMode === 'query' && definition.input !== undefined
          ? whyNoJsonSchema(definition.input, 'input')
          : undefined;
      if (undescribed !== undefined) {
        throw new ProceedConfigError(
          `${owner} takes its input from the query string, whose values arrive as text and are coerced and checked by the input's JSON Schema, but ${undescribed} (docs/procedures.md, "Validators")`,
        );
      }
      const uncarried =
        resolved.inputMode === 'query' && definition.input !== undefined
          ? fieldNoQueryCarries(definition.input)
          : undefined;
      if (uncarried !== undefined) {
        throw new ProceedConfigError(
          `${owner} takes its input from the query string, which carries text and repeated keys, but its field "${uncarried.key}" is ${uncarried.what}, which no query string can carry (its REST route could never be called): make its parts fields of the input, or take a JSON body with .rest({ method: 'POST', path })`,
        );
      }
      // A form's text parts, and a body route's path parameters, are coerced as a query's are.
      const textInput =
        resolved.inputMode === 'query'
          ? 'the query string'
          : uploadShapeOf(definition, resolved.inputMode)?.mode === 'form'
            ? 'a form'
            : 'its path';
      const coerced =
        definition.input === undefined
          ? undefined
          : zodCoercedField(definition.input, textInput === 'its path' ? resolved.params : undefined);
      if (coerced !== undefined) {
        throw new ProceedConfigError(
          `${owner} takes its input from ${textInput} and its field "${coerced.key}" is z.coerce.${coerced.type}(): Proceed already turns its text into what the schema expects, strictly, and z.coerce would coerce again, loosely (z.coerce.boolean() reads "no" and "0" as true, z.coerce.number() an empty value as 0): use z.${coerced.type}() (docs/procedures.md, "Input")`,
        );
      }
      for (const documented of definition.documentation)
        for (const param of documented.pathParams ?? [])
          if (!resolved.params.includes(param))
            throw new ProceedConfigError(
              `${owner}: a step reads the path parameter "${param}", which its path ${path} does not have: every request would fail; give the path :${param}, or tell the step which parameter to read (owned()'s param option)`,
            );
      const disagreeing = stepParamDisagreement(definition);
      if (disagreeing !== undefined)
        throw new ProceedConfigError(
          `${owner}: a step checks the path parameter "${disagreeing.param}" as ${disagreeing.step}, and the input as ${disagreeing.input}: one of the two would refuse every request; give the step the input's schema (owned()'s id option) or the input the step's`,
        );
      const dropped = paramInputDrops(definition, resolved.params);
      if (dropped !== undefined) {
        throw new ProceedConfigError(
          `${owner}: its path names the parameter "${dropped}", which its input does not: the validator would drop the path's value, so the handler never sees it checked, and an input field meant for it (an id) is filled from the body or query instead; add ${dropped} to the input, or name the parameter after the input's field (a step that reads it, as owned() does, says so and is exempt; docs/procedures.md, "Input")`,
        );
      }
      taken.set(key, { owner, path });
      const entry: RouteEntry = {
        collection: collection.name,
        name,
        procedure,
        definition,
        method: resolved.method,
        path,
        collectionPath: `${base}/${collection.name}`,
        params: resolved.params,
        inputMode: resolved.inputMode,
        successStatus: resolved.successStatus,
        successStatuses: resolved.successStatuses,
        convention: resolved.convention,
        upload: uploadShapeOf(definition, resolved.inputMode)?.mode,
        recordsPath: `${base}/${collection.name}`,
      };
      checkUploadRoute(entry);
      entries.push(entry);
    }
  }
  // A Location names a record a GET reads, mounted with the create or before it: a route of its
  // own path (nested), else the collection's; with neither, none, rather than a path that is a 404.
  const readsBelow = (path: string) => taken.has(routeKey('GET', `${path}/:record`));
  return entries.map((entry) => {
    if (entry.convention?.prefix !== 'create') return entry;
    const recordsPath = readsBelow(entry.path)
      ? entry.path
      : readsBelow(entry.collectionPath)
        ? entry.collectionPath
        : undefined;
    return recordsPath === entry.recordsPath ? entry : { ...entry, recordsPath };
  });
}
