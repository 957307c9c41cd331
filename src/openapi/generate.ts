/**
 * Builds the OpenAPI 3.1 document of an app from its route table. Routes come from the core's
 * planner (which owns the naming rules), schemas from the core's JSON Schema converter; this
 * module only arranges them in OpenAPI's shape.
 */
import { errorStatus, ProceedConfigError } from '../core/errors.js';
import { type HttpMethod, normalizePrefix } from '../core/naming.js';
import type { Collection } from '../core/procedure.js';
import { planRoutes, type RouteEntry, routeKey } from '../core/routes.js';
import { type JsonSchema, type StandardSchemaV1, toJsonSchema } from '../core/schema.js';
import type { DeclaredProblem } from '../server/app.js';
import { SchemaComponents, stableJson } from './components.js';
import { type ProblemStatus, problemReference, problemResponse, problemSchema } from './problems.js';
import type {
  OpenApiDocument,
  OpenApiInfo,
  OpenApiMethod,
  OpenApiOperation,
  OpenApiParameter,
  OpenApiRequestBody,
  OpenApiResponse,
  OpenApiServer,
  OpenApiTag,
} from './types.js';

/**
 * Collections mounted under one prefix, as `app.mounts` lists them.
 *
 * @example
 * const mount: OpenApiMount = { prefix: '/api', collections: [posts, users] };
 */
export interface OpenApiMount {
  prefix: string;
  collections: readonly Collection[];
}

/**
 * What the generator reads from an app: its route table and its mount prefixes. An `App` is one.
 *
 * @example
 * const source: OpenApiRouteSource = createApp().mount([posts]);
 */
export interface OpenApiRouteSource {
  readonly routes: ReadonlyArray<RouteEntry & { readonly prefix: string }>;
  readonly mounts: ReadonlyArray<{ readonly prefix: string }>;
  /** Problems plugins make routes answer (`app.declareProblem`). */
  readonly declaredProblems?: readonly DeclaredProblem[];
}

/**
 * Everything but the source of the routes: what `docsPlugin` takes as `openapi`.
 *
 * @example
 * const options: OpenApiDocumentOptions = {
 *   info: { title: 'Blog API', version: '1.0.0' },
 *   rateLimitedRoutes: ['POST /api/auth/login'],
 * };
 */
export interface OpenApiDocumentOptions {
  info: OpenApiInfo;
  /** Where the API is served. Omitted: clients use the origin the document came from. */
  servers?: readonly OpenApiServer[];
  /**
   * Routes behind a rate limiter, as the start-up log writes them (`POST /api/auth/login`;
   * `{id}` and `:id` both work). Each gets a documented 429. An entry that matches no route is
   * an error, so a renamed route cannot silently lose its 429.
   */
  rateLimitedRoutes?: readonly string[];
  /** Problems plugins make routes answer; taken from `app.declaredProblems` when `app` is given. */
  declaredProblems?: readonly DeclaredProblem[];
}

/**
 * The options of {@link generateOpenApi}: the document options and either `app` or `mounts`.
 *
 * @example
 * const options: OpenApiOptions = { app, info: { title: 'Blog API', version: '1.0.0' } };
 */
export type OpenApiOptions = OpenApiDocumentOptions &
  (
    | { /** Collections per prefix, planned here. */ mounts: readonly OpenApiMount[]; app?: never }
    | {
        /** A created app (or anything with its `routes` and `mounts`). */ app: OpenApiRouteSource;
        mounts?: never;
      }
  );

interface PlannedRoute {
  route: RouteEntry;
  prefix: string;
}

const healthTag = 'health';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

function lowerMethod(method: HttpMethod): OpenApiMethod {
  return method.toLowerCase() as OpenApiMethod;
}

function pascal(text: string): string {
  return text
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part !== '')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

function dotted(prefix: string): string {
  return prefix.slice(1).replaceAll('/', '.');
}

/**
 * Gives every operation a unique id: the procedure name when no other operation shares it,
 * else `collection.name`, else `prefix.collection.name` (the same collection under two prefixes).
 */
function uniqueIds(candidates: readonly string[][]): string[] {
  const level = candidates.map(() => 0);
  const chosen = candidates.map((list) => list[0] ?? 'operation');
  for (let round = 0; round < 4; round++) {
    const counts = new Map<string, number>();
    for (const id of chosen) counts.set(id, (counts.get(id) ?? 0) + 1);
    let clashed = false;
    chosen.forEach((id, index) => {
      if ((counts.get(id) ?? 0) < 2) return;
      clashed = true;
      const list = candidates[index] ?? [];
      const next = (level[index] ?? 0) + 1;
      level[index] = next;
      chosen[index] = list[next] ?? `${list[list.length - 1] ?? 'operation'}.${index + 1}`;
    });
    if (!clashed) break;
  }
  return chosen;
}

function routesOf(options: OpenApiOptions): { routes: PlannedRoute[]; prefixes: string[] } {
  if (options.app !== undefined) {
    return {
      routes: options.app.routes.map((route) => ({ route, prefix: route.prefix })),
      prefixes: [...new Set(options.app.mounts.map((mount) => mount.prefix))],
    };
  }
  const taken = new Map<string, string>();
  const routes: PlannedRoute[] = [];
  const prefixes: string[] = [];
  for (const mount of options.mounts) {
    const prefix = normalizePrefix(mount.prefix);
    if (!prefixes.includes(prefix)) prefixes.push(prefix);
    for (const route of planRoutes(mount.collections, prefix, taken)) routes.push({ route, prefix });
  }
  return { routes, prefixes };
}

const problemStatuses: ReadonlySet<number> = new Set([400, 401, 403, 404, 409, 413, 415, 429, 500, 503]);

function isProblemStatus(status: number): status is ProblemStatus {
  return problemStatuses.has(status);
}

/** `POST /api/auth/login`, or a bare `/api/auth/login` for every method of it. */
function declaredRouteKey(entry: string): string {
  const match = /^\s*(?:([A-Za-z]+)\s+)?(\/\S*)\s*$/.exec(entry);
  const method = match?.[1]?.toUpperCase() ?? '*';
  return routeKey(method, (match?.[2] ?? entry).replace(/\{([^}]+)\}/g, ':$1'));
}

function parseRouteEntry(entry: string): string {
  const match = /^\s*([A-Za-z]+)\s+(\/\S*)\s*$/.exec(entry);
  if (match === null) {
    throw new ProceedConfigError(
      `rateLimitedRoutes: "${entry}" is not of the form "METHOD /path" (e.g. "POST /api/auth/login")`,
    );
  }
  const [, method = '', path = ''] = match;
  return routeKey(method.toUpperCase(), path.replace(/\{([^}]+)\}/g, ':$1'));
}

/** Builds the operations of one document; holds the state they share. */
class DocumentBuilder {
  readonly components = new SchemaComponents();
  readonly usedProblems = new Set<ProblemStatus>();
  /** Route key → the entry as the user wrote it. */
  readonly #rateLimited: Map<string, string>;
  readonly #matchedRateLimits = new Set<string>();

  /** Status → the route keys (or bare paths) it applies to; `undefined`: every procedure route. */
  readonly #declared: Array<{ status: ProblemStatus; routes: Set<string> | undefined }>;
  /** Plugins refuse bad tokens on every route: a token is optional where no guard requires one. */
  readonly #optionalBearer: boolean;

  constructor(rateLimitedRoutes: readonly string[], declared: readonly DeclaredProblem[] = []) {
    this.#rateLimited = new Map(rateLimitedRoutes.map((entry) => [parseRouteEntry(entry), entry.trim()]));
    this.#declared = declared.flatMap(({ code, routes }) => {
      const status = errorStatus[code];
      if (!isProblemStatus(status)) return [];
      return [{ status, routes: routes === undefined ? undefined : new Set(routes.map(declaredRouteKey)) }];
    });
    this.#optionalBearer = declared.some(
      (problem) => problem.code === 'INVALID_TOKEN' && problem.routes === undefined,
    );
  }

  /** Statuses plugins declared for this route (bare-path declarations match every method). */
  declaredStatuses(method: string, path: string, procedure: boolean): ProblemStatus[] {
    const key = routeKey(method, path);
    const bare = routeKey('*', path);
    return this.#declared
      .filter(({ routes }) => (routes === undefined ? procedure : routes.has(key) || routes.has(bare)))
      .map(({ status }) => status);
  }

  isRateLimited(method: string, path: string): boolean {
    const key = routeKey(method, path);
    if (!this.#rateLimited.has(key)) return false;
    this.#matchedRateLimits.add(key);
    return true;
  }

  unmatchedRateLimits(): string[] {
    return [...this.#rateLimited]
      .filter(([key]) => !this.#matchedRateLimits.has(key))
      .map(([, entry]) => entry);
  }

  problems(statuses: readonly ProblemStatus[]): Record<string, { $ref: string }> {
    const responses: Record<string, { $ref: string }> = {};
    for (const status of statuses) {
      this.usedProblems.add(status);
      responses[String(status)] = problemReference(status);
    }
    return responses;
  }

  convert(schema: StandardSchemaV1, io: 'input' | 'output', owner: string, hint: string): JsonSchema {
    let json: JsonSchema;
    try {
      json = toJsonSchema(schema, io === 'input' ? { io } : { io, named: true });
    } catch (error) {
      throw new ProceedConfigError(
        `${owner}: its ${io} schema cannot be described: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    return this.components.lift(json, owner, hint);
  }

  operation(planned: PlannedRoute, operationId: string): OpenApiOperation {
    const { route } = planned;
    const { definition } = route;
    const owner = `procedure "${route.collection}.${route.name}"`;
    const hint = `${pascal(route.collection)}${pascal(route.name)}`;
    const input =
      definition.input === undefined
        ? undefined
        : this.convert(definition.input, 'input', owner, `${hint}Input`);
    const properties = isObject(input?.properties) ? (input.properties as Record<string, JsonSchema>) : {};
    const required = new Set(Array.isArray(input?.required) ? (input.required as string[]) : []);

    const parameters: OpenApiParameter[] = route.params.map((name) =>
      parameter(name, 'path', true, properties[name] ?? { type: 'string' }),
    );
    if (route.inputMode === 'query' && input !== undefined) {
      parameters.push(...queryParameters(input, properties, required, route.params));
    }

    // Built field by field so the document reads in OpenAPI's usual order.
    const operation = { operationId, tags: [route.collection] } as OpenApiOperation;
    if (definition.meta.summary !== undefined) operation.summary = definition.meta.summary;
    if (definition.meta.description !== undefined) operation.description = definition.meta.description;
    if (definition.meta.deprecated === true) operation.deprecated = true;
    if (parameters.length > 0) operation.parameters = parameters;
    const body = input === undefined ? undefined : requestBody(route, input, properties, required);
    if (body !== undefined) operation.requestBody = body;

    operation.responses = { [String(route.successStatus)]: this.#success(route, owner, hint) };
    const guarded = definition.guards.length > 0;
    const statuses: ProblemStatus[] = [];
    if (input !== undefined || route.inputMode !== 'query') statuses.push(400);
    if (guarded) statuses.push(401);
    if (definition.guards.some((guard) => guard.name !== 'authenticated')) statuses.push(403);
    if (route.params.length > 0) statuses.push(404);
    if (definition.kind === 'mutation') statuses.push(409);
    if (route.inputMode !== 'query') statuses.push(413, 415);
    if (this.isRateLimited(route.method, route.path)) statuses.push(429);
    for (const code of definition.meta.errors ?? []) {
      const status = errorStatus[code];
      if (isProblemStatus(status)) statuses.push(status);
    }
    statuses.push(...this.declaredStatuses(route.method, route.path, true), 500);
    Object.assign(operation.responses, this.problems([...new Set(statuses)].sort((a, b) => a - b)));
    if (guarded) {
      operation.security = [{ bearerAuth: [] }];
      operation['x-proceed-guards'] = definition.guards.map((guard) => guard.name);
    } else if (this.#optionalBearer) {
      // A token is not needed here, but one that is sent is checked (and `ctx.user` set).
      operation.security = [{}, { bearerAuth: [] }];
    }
    return operation;
  }

  #success(route: RouteEntry, owner: string, hint: string): OpenApiResponse {
    const response: OpenApiResponse = {
      description: route.successStatus === 201 ? 'Created' : 'OK',
      content: { 'application/json': { schema: this.#outputSchema(route, owner, hint) } },
    };
    // Only create* answers carry a Location (the new record's path); other 201s do not.
    if (route.successStatus === 201 && route.convention?.prefix === 'create') {
      response.headers = {
        Location: {
          description: `Where the new record lives: \`${route.collectionPath}/{id}\` (sent when the result has an \`id\`)`,
          schema: { type: 'string', format: 'uri-reference' },
        },
      };
    }
    return response;
  }

  #outputSchema(route: RouteEntry, owner: string, hint: string): JsonSchema {
    const { output } = route.definition;
    if (output === undefined) {
      if (route.convention?.prefix !== 'delete') return {};
      return {
        type: 'object',
        properties: { success: { type: 'boolean' } },
        required: ['success'],
        additionalProperties: false,
      };
    }
    if (output.kind === 'fixed') return this.convert(output.schema, 'output', owner, `${hint}Output`);
    const choices = new Map<string, JsonSchema>();
    for (const [key, schema] of Object.entries(output.choices)) {
      const json = this.convert(
        schema,
        'output',
        `${owner} (output "${key}")`,
        `${hint}Output${pascal(key)}`,
      );
      choices.set(stableJson(json), json);
    }
    const distinct = [...choices.values()];
    return distinct.length === 1 && distinct[0] !== undefined ? distinct[0] : { oneOf: distinct };
  }

  health(prefix: string, operationId: string): OpenApiOperation {
    const path = `${prefix}/health`;
    const limited = this.isRateLimited('GET', path);
    const statuses = [
      ...new Set<ProblemStatus>([
        ...(limited ? [429 as const] : []),
        ...this.declaredStatuses('GET', path, false),
        503,
      ]),
    ].sort((a, b) => a - b);
    return {
      operationId,
      tags: [healthTag],
      summary: 'Readiness check',
      description: 'Answers 200 once the app is ready to serve (its health check passes), 503 otherwise.',
      responses: {
        '200': {
          description: 'Ready',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: { status: { const: 'ok' } },
                required: ['status'],
                additionalProperties: false,
              },
            },
          },
        },
        ...this.problems(statuses),
      },
    };
  }
}

function parameter(
  name: string,
  location: 'path' | 'query',
  required: boolean,
  schema: JsonSchema,
): OpenApiParameter {
  const result: OpenApiParameter = { name, in: location, required, schema };
  if (typeof schema.description === 'string') result.description = schema.description;
  if (schema.deprecated === true) result.deprecated = true;
  if (location === 'query' && schema.type === 'array') {
    result.style = 'form';
    result.explode = true;
  }
  return result;
}

function queryParameters(
  input: JsonSchema,
  properties: Record<string, JsonSchema>,
  required: ReadonlySet<string>,
  pathParams: readonly string[],
): OpenApiParameter[] {
  if (isObject(input.properties)) {
    return Object.entries(properties)
      .filter(([name]) => !pathParams.includes(name))
      .map(([name, schema]) => parameter(name, 'query', required.has(name), schema));
  }
  // An input that is not a plain object (a record, a union) still arrives as a query string.
  if (Object.keys(input).length === 0) return [];
  return [{ name: 'query', in: 'query', required: false, schema: input, style: 'form', explode: true }];
}

function requestBody(
  route: RouteEntry,
  input: JsonSchema,
  properties: Record<string, JsonSchema>,
  required: ReadonlySet<string>,
): OpenApiRequestBody | undefined {
  if (route.inputMode === 'query') return undefined;
  if (route.inputMode === 'update') {
    return {
      required: required.has('data'),
      content: { 'application/json': { schema: properties.data ?? {} } },
    };
  }
  if (!isObject(input.properties))
    return { required: false, content: { 'application/json': { schema: input } } };
  const bodyProperties = Object.fromEntries(
    Object.entries(properties).filter(([name]) => !route.params.includes(name)),
  );
  const bodyRequired = [...required].filter((name) => !route.params.includes(name));
  const freeForm = input.additionalProperties !== undefined && input.additionalProperties !== false;
  if (Object.keys(bodyProperties).length === 0 && !freeForm && input.patternProperties === undefined) {
    return undefined;
  }
  const schema: JsonSchema = { ...input, properties: bodyProperties };
  if (bodyRequired.length > 0) schema.required = bodyRequired;
  else delete schema.required;
  return { required: bodyRequired.length > 0, content: { 'application/json': { schema } } };
}

/**
 * Generates the OpenAPI 3.1.0 document of mounted collections: one operation per procedure
 * (`operationId` = procedure name, tag = collection), parameters and bodies from the input
 * schemas, success responses from the declared outputs (views become `components.schemas`), the
 * problem responses each route can produce, `bearerAuth` on guarded routes, and the health route.
 * Throws a {@link ProceedConfigError} when two different schemas share an id.
 *
 * @example
 * const document = generateOpenApi({ app, info: { title: 'Blog API', version: '1.0.0' } });
 * const same = generateOpenApi({
 *   mounts: [{ prefix: '/api', collections: [posts, users] }],
 *   info: { title: 'Blog API', version: '1.0.0' },
 * });
 */
export function generateOpenApi(options: OpenApiOptions): OpenApiDocument {
  const { routes, prefixes } = routesOf(options);
  const builder = new DocumentBuilder(
    options.rateLimitedRoutes ?? [],
    options.declaredProblems ?? options.app?.declaredProblems,
  );
  const ids = uniqueIds([
    ...routes.map(({ route, prefix }) => {
      const qualified = `${route.collection}.${route.name}`;
      return prefix === ''
        ? [route.name, qualified]
        : [route.name, qualified, `${dotted(prefix)}.${qualified}`];
    }),
    ...prefixes.map((prefix) => (prefix === '' ? ['health'] : ['health', `${dotted(prefix)}.health`])),
  ]);

  const paths: OpenApiDocument['paths'] = {};
  const tags: OpenApiTag[] = [];
  const addOperation = (method: HttpMethod, path: string, operation: OpenApiOperation) => {
    const item = paths[openApiPath(path)] ?? {};
    item[lowerMethod(method)] = operation;
    paths[openApiPath(path)] = item;
    for (const tag of operation.tags) if (!tags.some((known) => known.name === tag)) tags.push({ name: tag });
  };
  routes.forEach((planned, index) => {
    addOperation(planned.route.method, planned.route.path, builder.operation(planned, ids[index] ?? ''));
  });
  prefixes.forEach((prefix, index) => {
    const operation = builder.health(prefix, ids[routes.length + index] ?? 'health');
    addOperation('GET', `${prefix}/health`, operation);
  });

  const unmatched = builder.unmatchedRateLimits();
  if (unmatched.length > 0) {
    throw new ProceedConfigError(
      `rateLimitedRoutes: no documented route matches ${unmatched.map((entry) => `"${entry}"`).join(', ')}`,
    );
  }

  builder.components.add('Problem', problemSchema, 'the problem responses');
  const responses: Record<string, OpenApiResponse> = {};
  for (const status of [...builder.usedProblems].sort((a, b) => a - b)) {
    const { name, response } = problemResponse(status);
    responses[name] = response;
  }

  const document: OpenApiDocument = {
    openapi: '3.1.0',
    info: { ...options.info },
    tags,
    paths,
    components: {
      schemas: builder.components.schemas,
      responses,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'An access token, sent as `Authorization: Bearer <token>`',
        },
      },
    },
  };
  if (options.servers !== undefined) document.servers = options.servers.map((server) => ({ ...server }));
  // A fresh tree: tools that dereference in place must not reach the shared constants or views.
  return structuredClone(document);
}
