/**
 * Builds the OpenAPI 3.1 document of an app from its route table. Routes come from the core's
 * planner (which owns the naming rules), schemas from the core's JSON Schema converter; this
 * module only arranges them in OpenAPI's shape.
 */

import type { CorsOptions } from '../config/cors.js';
import { distinctProblems, routeFacts } from '../core/documentation.js';
import { type ErrorDefinition, errorStatus, ProceedConfigError } from '../core/errors.js';
import { type HttpMethod, pathTemplate } from '../core/naming.js';
import type { Collection } from '../core/procedure.js';
import { lowestViewFirst } from '../core/record-views.js';
import { type DocumentationSource, healthPaths, type MountedRoute, RouteTable } from '../core/route-table.js';
import type { RouteEntry } from '../core/routes.js';
import { type JsonSchema, type StandardSchemaV1, toJsonSchema, whyNoJsonSchema } from '../core/schema.js';
import type { HeaderDocumentation } from '../core/steps.js';
import { type FileField, uploadShapeOf } from '../core/uploads.js';
import { SchemaComponents, stableJson } from './components.js';
import { exampleFor, hasOwnExample } from './examples.js';
import { problemReference, problemSchemaWith } from './problems.js';
import { answeredByRoute, isRateLimited, problemComponents, SharedHeaders } from './response-headers.js';
import { strictBody, withImpliedFacts } from './schema-facts.js';
import type {
  OpenApiDocument,
  OpenApiHeader,
  OpenApiInfo,
  OpenApiMediaType,
  OpenApiMethod,
  OpenApiOperation,
  OpenApiParameter,
  OpenApiRequestBody,
  OpenApiResponse,
  OpenApiServer,
  OpenApiTag,
} from './types.js';

/**
 * Collections mounted under one prefix.
 *
 * @example
 * const mount: OpenApiMount = { prefix: '/api', collections: [posts, users] };
 */
export interface OpenApiMount {
  prefix: string;
  collections: readonly Collection[];
}

/**
 * What the generator reads from an app: its route table (routes, mounts, health routes, and what
 * plugins added to the routes' documentation). An `App` is one.
 *
 * @example
 * const source: OpenApiRouteSource = createApp().mount([posts]);
 */
export interface OpenApiRouteSource {
  readonly routeTable: RouteTable;
}

/**
 * Everything but the source of the routes: what `docsPlugin` takes as `openapi`.
 *
 * @example
 * const options: OpenApiDocumentOptions = { info: { title: 'Blog API', version: '1.0.0' } };
 */
export interface OpenApiDocumentOptions {
  info: OpenApiInfo;
  /**
   * Where the API is served. Default `[{ url: '/' }]`: the origin the document was loaded from
   * (what OpenAPI assumes anyway, written out because linters such as Redocly require it).
   */
  servers?: readonly OpenApiServer[];
  /**
   * A description per tag (each collection is a tag, named after it), shown above its
   * operations by documentation UIs. The health routes' tag has one already.
   */
  tags?: Readonly<Record<string, string>>;
}

/**
 * The options of {@link generateOpenApi}: the document options and either `app` or `mounts`.
 *
 * @example
 * const options: OpenApiOptions = { app, info: { title: 'Blog API', version: '1.0.0' } };
 */
export type OpenApiOptions = OpenApiDocumentOptions &
  (
    | {
        /** Collections per prefix, planned here. */
        mounts: readonly OpenApiMount[];
        /**
         * What plugins would add to the routes' documentation on an app (`app.document(…)`), e.g.
         * `authDocumentation` from `proceedjs/auth`. An app-less document cannot learn it otherwise.
         */
        documentation?: readonly DocumentationSource[];
        /** The CORS policy the app would have (`createApp({ cors })`): its headers are declared. */
        cors?: CorsOptions;
        app?: never;
      }
    | {
        /** A created app (or anything with its route table). */ app: OpenApiRouteSource;
        /** Document only these collections; each must be mounted. Default: all of them. */
        collections?: readonly Collection[];
        mounts?: never;
        documentation?: never;
        cors?: never;
      }
  );

const healthTag = 'health';
const healthTagDescription = 'Readiness and liveness probes for load balancers and orchestrators';

const isBuiltIn = (code: string) => Object.hasOwn(errorStatus, code);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
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

interface Selection {
  table: RouteTable;
  routes: readonly MountedRoute[];
  prefixes: readonly string[];
}

function select(options: OpenApiOptions): Selection {
  if (options.app === undefined) {
    const table = new RouteTable();
    for (const mount of options.mounts) table.mount(mount.collections, mount.prefix);
    for (const source of options.documentation ?? []) table.document(source);
    if (options.cors !== undefined)
      table.documentCors({ origins: options.cors.origins, credentials: options.cors.credentials === true });
    return { table, routes: table.routes, prefixes: table.healthPrefixes };
  }
  const table = options.app.routeTable;
  const wanted = options.collections;
  if (wanted === undefined) return { table, routes: table.routes, prefixes: table.healthPrefixes };
  for (const collection of wanted) {
    if (!table.mounts.some((mount) => mount.collections.includes(collection))) {
      throw new ProceedConfigError(
        `collection "${collection.name}" is not mounted; mount it with app.mount([...]) before the app starts`,
      );
    }
  }
  const mounts = table.mounts.filter((mount) => mount.collections.some((each) => wanted.includes(each)));
  const collectionsOf = (prefix: string) =>
    mounts.filter((mount) => mount.prefix === prefix).flatMap((mount) => mount.collections);
  return {
    table,
    routes: table.routes.filter((route) =>
      collectionsOf(route.prefix).some(
        (collection) => wanted.includes(collection) && collection.name === route.collection,
      ),
    ),
    prefixes: [...new Set(mounts.map((mount) => mount.prefix))],
  };
}

/** Builds the operations of one document; holds the state they share. */
class DocumentBuilder {
  readonly components = new SchemaComponents();
  /** Every problem some operation answers, by code. */
  readonly usedProblems = new Map<string, ErrorDefinition>();
  /** The problem statuses answered by routes without limits, and by rate-limited routes. */
  readonly problemStatuses = { plain: new Set<number>(), limited: new Set<number>() };
  readonly headers: SharedHeaders;
  readonly #table: RouteTable;

  constructor(table: RouteTable) {
    this.#table = table;
    this.headers = new SharedHeaders(table.cors);
  }

  /** References to the problem responses; a limited route's own answers carry its limits' headers. */
  problems(problems: readonly ErrorDefinition[], limited = false): Record<string, { $ref: string }> {
    const responses: Record<string, { $ref: string }> = {};
    for (const problem of problems) {
      this.usedProblems.set(problem.code, problem);
      const withLimits = limited && answeredByRoute(problem.status);
      (withLimits ? this.problemStatuses.limited : this.problemStatuses.plain).add(problem.status);
      responses[String(problem.status)] = problemReference(problem.status, withLimits);
    }
    return responses;
  }

  convert(schema: StandardSchemaV1, io: 'input' | 'output', owner: string, hint: string): JsonSchema {
    const undescribed = whyNoJsonSchema(schema, io);
    if (undescribed !== undefined)
      throw new ProceedConfigError(
        `${owner}: the OpenAPI document describes its ${io} by JSON Schema, but ${undescribed} (docs/procedures.md, "Validators")`,
      );
    let json: JsonSchema;
    try {
      json = withImpliedFacts(
        toJsonSchema(schema, io === 'input' ? { io } : { io, named: true, override: lowestViewFirst }),
      );
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

  operation(route: MountedRoute, operationId: string): OpenApiOperation {
    const { definition } = route;
    const facts = routeFacts(route, this.#table.documentationOf(route));
    const owner = `procedure "${route.collection}.${route.name}"`;
    const hint = `${pascal(route.collection)}${pascal(route.name)}`;
    const input =
      definition.input === undefined
        ? undefined
        : this.convert(definition.input, 'input', owner, `${hint}Input`);
    const properties = isObject(input?.properties) ? (input.properties as Record<string, JsonSchema>) : {};
    const required = new Set(Array.isArray(input?.required) ? (input.required as string[]) : []);

    const schemas = this.components.schemas;
    const parameters: OpenApiParameter[] = route.params.map((name) => {
      const path = parameter(name, 'path', true, properties[name] ?? { type: 'string' }, schemas);
      path.description ??= `The \`${name}\` of the ${route.collection} record`;
      return path;
    });
    if (route.inputMode === 'query' && input !== undefined) {
      parameters.push(...queryParameters(input, properties, required, route.params, schemas));
    }
    for (const [name, header] of Object.entries(facts.requestHeaders)) {
      parameters.push({
        name,
        in: 'header',
        required: false,
        description: header.description,
        schema: headerSchema(header),
      });
    }

    // Built field by field so the document reads in OpenAPI's usual order.
    const operation = { operationId, tags: [route.collection] } as OpenApiOperation;
    if (definition.meta.summary !== undefined) operation.summary = definition.meta.summary;
    if (definition.meta.description !== undefined) operation.description = definition.meta.description;
    if (definition.meta.deprecated === true) operation.deprecated = true;
    if (parameters.length > 0) operation.parameters = parameters;
    const body = input === undefined ? undefined : requestBody(route, input, properties, required);
    if (body !== undefined) {
      withExample(body.content['application/json'], schemas, new Set(route.params));
      operation.requestBody = body;
    }

    const headers = Object.entries(facts.headers);
    const limited = isRateLimited(route);
    operation.responses = {};
    // Each status the handler may choose is documented; the schema is built once and shared.
    for (const status of route.successStatuses) {
      const success = this.#success(route, status, owner, hint);
      if (headers.length > 0) {
        success.headers = {
          ...success.headers,
          ...Object.fromEntries(
            headers.map(([name, header]): [string, OpenApiHeader] => [
              name,
              { description: header.description, schema: headerSchema(header) },
            ]),
          ),
        };
      }
      operation.responses[String(status)] = this.headers.addTo(success, status, limited);
    }
    const { output } = route.definition;
    if (output?.kind === 'download' && route.method === 'GET') {
      operation.responses['206'] = this.headers.addTo(
        {
          description: 'Part of the file: the one range asked for in `Range`',
          headers: {
            // Three safe integers at most: `bytes ` and 3 × 16 digits and 2 separators.
            'Content-Range': {
              description: '`bytes first-last/size`',
              schema: { type: 'string', maxLength: 56 },
            },
          },
          content: binaryContent(output.types),
        },
        206,
        limited,
      );
    }
    if (facts.notModified) {
      const etag = facts.headers.ETag;
      operation.responses['304'] = this.headers.addTo(
        {
          description: 'Not modified: the `ETag` sent in `If-None-Match` is still current. No body',
          ...(etag === undefined
            ? {}
            : { headers: { ETag: { description: etag.description, schema: headerSchema(etag) } } }),
        },
        304,
        limited,
      );
    }
    Object.assign(operation.responses, this.problems(facts.problems, limited));
    if (facts.bearer === 'required') {
      operation.security = [{ bearerAuth: [] }];
      if (facts.guards.length > 0) operation['x-proceed-guards'] = [...facts.guards];
    } else if (facts.bearer === 'optional') {
      // A token is not needed here, but one that is sent is checked (and `ctx.user` set). Bearer
      // first: tools that take the first requirement (Postman, say) then send the token.
      operation.security = [{ bearerAuth: [] }, {}];
    }
    return operation;
  }

  #success(route: RouteEntry, status: number, owner: string, hint: string): OpenApiResponse {
    if (status === 204) return { description: 'No content' };
    const { output } = route.definition;
    if (output?.kind === 'download') return { description: 'The file', content: binaryContent(output.types) };
    if (output?.kind === 'events')
      return {
        description:
          'Server-sent events, open until the client leaves: each `data` is JSON of `x-proceed-event-data`; a keep-alive comment while quiet; an `error` event with a problem when the stream fails after it opened; a `close` event when the server shuts down (reconnect with `Last-Event-ID`)',
        content: {
          'text/event-stream': {
            schema: { type: 'string' },
            'x-proceed-event-data': this.convert(output.schema, 'output', owner, `${hint}Event`),
          },
        },
      };
    const schema = this.#outputSchema(route, owner, hint);
    const json: OpenApiMediaType = { schema };
    withExample(json, this.components.schemas);
    const response: OpenApiResponse = {
      description: status === 201 ? 'Created' : status === 202 ? 'Accepted' : 'OK',
      content: { 'application/json': json },
    };
    // Only create* answers carry a Location (the new record's path), when the result has an `id`.
    if (status === 201 && route.convention?.prefix === 'create') {
      const always = requiresId(schema, this.components.schemas);
      // Under a nested path, `{id}` may already name a parameter of the path itself.
      const where =
        route.recordsPath === route.collectionPath
          ? `${route.collectionPath}/{id}`
          : `${pathTemplate(route.recordsPath)}/{the new record's id}`;
      response.headers = {
        Location: {
          description: `Where the new record lives: \`${where}\`${always ? '' : ' (sent when the result has an `id`)'}`,
          ...(always ? { required: true } : {}),
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
    if (output.kind === 'download') return { type: 'string', format: 'binary' };
    if (output.kind === 'events') return { type: 'string' };
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

  health(operationId: string, probe: 'readiness' | 'liveness'): OpenApiOperation {
    const ok: OpenApiResponse = {
      description: probe === 'readiness' ? 'Ready' : 'Alive',
      content: {
        'application/json': {
          schema:
            probe === 'liveness'
              ? {
                  type: 'object',
                  properties: { status: { type: 'string', const: 'ok' } },
                  required: ['status'],
                  additionalProperties: false,
                }
              : {
                  type: 'object',
                  properties: {
                    status: {
                      type: 'string',
                      enum: ['ok', 'degraded'],
                      description: '`degraded`: serving, with a dependency listed in `checks` unreachable',
                    },
                    checks: {
                      type: 'object',
                      description: 'The shared rate-limit store, when the app has one',
                      properties: { rateLimitStore: { type: 'string', enum: ['ok', 'unreachable'] } },
                      additionalProperties: false,
                    },
                  },
                  required: ['status'],
                  additionalProperties: false,
                },
        },
      },
    };
    withExample(ok.content?.['application/json'], this.components.schemas);
    this.headers.addTo(ok, 200, false);
    if (probe === 'liveness') {
      return {
        operationId,
        tags: [healthTag],
        summary: 'Liveness check',
        description: 'Answers 200 while the process can answer at all, shutting down included.',
        security: [],
        responses: { '200': ok, ...this.problems(distinctProblems(['HEADERS_TOO_LARGE'])) },
      };
    }
    return {
      operationId,
      tags: [healthTag],
      summary: 'Readiness check',
      description:
        'Answers 200 while the app can serve (its health check passes), 503 when it cannot or is shutting down.',
      security: [],
      responses: {
        '200': ok,
        ...this.problems(distinctProblems(['HEADERS_TOO_LARGE', 'UNAVAILABLE'])),
      },
    };
  }
}

/** A documented header's schema: its type and whatever else the server bounds. */
function headerSchema(header: HeaderDocumentation): JsonSchema {
  return { type: header.type, ...header.schema };
}

function parameter(
  name: string,
  location: 'path' | 'query',
  required: boolean,
  schema: JsonSchema,
  components: Record<string, JsonSchema>,
): OpenApiParameter {
  const result: OpenApiParameter = { name, in: location, required, schema };
  if (typeof schema.description === 'string') result.description = schema.description;
  if (schema.deprecated === true) result.deprecated = true;
  if (location === 'query' && schema.type === 'array') {
    result.style = 'form';
    result.explode = true;
  }
  if (required || hasOwnExample(schema)) {
    const example = exampleFor(schema, components, name);
    if (example !== undefined) result.example = example;
  }
  return result;
}

/** Sets a body's `example` when one can be made that its schema accepts. */
function withExample(
  media: OpenApiMediaType | undefined,
  components: Record<string, JsonSchema>,
  omit?: ReadonlySet<string>,
): void {
  if (media === undefined) return;
  const example = exampleFor(media.schema, components, '', omit);
  if (example !== undefined) media.example = example;
}

/** Whether every answer of this schema has an `id` (so a create always sends `Location`). */
function requiresId(schema: JsonSchema, components: Record<string, JsonSchema>, depth = 0): boolean {
  if (depth > 8) return false;
  if (typeof schema.$ref === 'string') {
    const target = components[decodeURIComponent(schema.$ref.replace('#/components/schemas/', ''))];
    return target !== undefined && requiresId(target, components, depth + 1);
  }
  if (Array.isArray(schema.oneOf)) {
    return (schema.oneOf as JsonSchema[]).every((choice) => requiresId(choice, components, depth + 1));
  }
  return Array.isArray(schema.required) && schema.required.includes('id');
}

function queryParameters(
  input: JsonSchema,
  properties: Record<string, JsonSchema>,
  required: ReadonlySet<string>,
  pathParams: readonly string[],
  components: Record<string, JsonSchema>,
): OpenApiParameter[] {
  if (isObject(input.properties)) {
    return Object.entries(properties)
      .filter(([name]) => !pathParams.includes(name))
      .map(([name, schema]) => parameter(name, 'query', required.has(name), schema, components));
  }
  // An input that is not a plain object (a record, a union) still arrives as a query string.
  if (Object.keys(input).length === 0) return [];
  return [{ name: 'query', in: 'query', required: false, schema: input, style: 'form', explode: true }];
}

/**
 * A file as OpenAPI tools read one: a binary string (Swagger UI offers a file picker for it), its
 * media type when it takes one, its size limit in words.
 */
function fileSchema(field: FileField, description: unknown): JsonSchema {
  const schema: JsonSchema = { type: 'string', format: 'binary' };
  if (field.types?.length === 1) schema.contentMediaType = field.types[0];
  // A binary string's length is its size in bytes.
  if (field.maxSize !== undefined) schema.maxLength = field.maxSize;
  const said = [
    typeof description === 'string' ? description.replace(/([^.!?])$/, '$1.') : undefined,
    field.types !== undefined && field.types.length > 1 ? `One of ${field.types.join(', ')}.` : undefined,
    field.maxSize !== undefined ? `At most ${field.maxSize} bytes.` : undefined,
  ].filter((text) => text !== undefined);
  if (said.length > 0) schema.description = said.join(' ');
  return schema;
}

/** The body of a route that takes files: a form, or the raw bytes of one file (docs/uploads.md). */
function uploadBody(
  route: RouteEntry,
  properties: Record<string, JsonSchema>,
  required: ReadonlySet<string>,
): OpenApiRequestBody | undefined {
  const shape = uploadShapeOf(route.definition, route.inputMode);
  if (shape === undefined) return undefined;
  if (shape.mode === 'raw') {
    const field = shape.fields.values().next().value as FileField;
    // Each media type it takes is a content entry of its own.
    const schema = fileSchema({ ...field, types: undefined }, undefined);
    const types = field.types ?? ['application/octet-stream'];
    return {
      required: true,
      content: Object.fromEntries(types.map((type) => [type, { schema: { ...schema } }])),
    };
  }
  const formProperties: Record<string, JsonSchema> = {};
  const encoding: Record<string, { contentType: string }> = {};
  for (const [name, property] of Object.entries(properties)) {
    if (route.params.includes(name)) continue;
    const field = shape.fields.get(name);
    if (field === undefined) {
      formProperties[name] = property;
      continue;
    }
    const file = fileSchema(field, property.description);
    formProperties[name] = field.multiple ? { type: 'array', items: file } : file;
    if (field.types !== undefined && field.types.length > 1)
      encoding[name] = { contentType: field.types.join(', ') };
  }
  const schema: JsonSchema = { type: 'object', properties: formProperties };
  const bodyRequired = [...required].filter((name) => !route.params.includes(name));
  if (bodyRequired.length > 0) schema.required = bodyRequired;
  const media: OpenApiMediaType = { schema };
  if (Object.keys(encoding).length > 0) media.encoding = encoding;
  return { required: true, content: { 'multipart/form-data': media } };
}

function requestBody(
  route: RouteEntry,
  input: JsonSchema,
  properties: Record<string, JsonSchema>,
  required: ReadonlySet<string>,
): OpenApiRequestBody | undefined {
  if (route.inputMode === 'query') return undefined;
  const upload = uploadBody(route, properties, required);
  if (upload !== undefined) return upload;
  if (route.inputMode === 'update') {
    return {
      required: required.has('data'),
      content: { 'application/json': { schema: strictBody(properties.data ?? {}) } },
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
  return {
    required: bodyRequired.length > 0,
    content: { 'application/json': { schema: strictBody(schema) } },
  };
}

const sameOrigin: OpenApiServer = { url: '/', description: 'The server this document was loaded from' };

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
 *   documentation: [authDocumentation],
 *   info: { title: 'Blog API', version: '1.0.0' },
 * });
 */
export function generateOpenApi(options: OpenApiOptions): OpenApiDocument {
  const { table, routes, prefixes } = select(options);
  const builder = new DocumentBuilder(table);
  const ids = uniqueIds([
    ...routes.map((route) => {
      const qualified = `${route.collection}.${route.name}`;
      return route.prefix === ''
        ? [route.name, qualified]
        : [route.name, qualified, `${dotted(route.prefix)}.${qualified}`];
    }),
    ...prefixes.flatMap((prefix) =>
      ['health', 'healthLive'].map((name) => (prefix === '' ? [name] : [name, `${dotted(prefix)}.${name}`])),
    ),
  ]);

  const paths: OpenApiDocument['paths'] = {};
  const tags: OpenApiTag[] = [];
  const addOperation = (method: HttpMethod, path: string, operation: OpenApiOperation) => {
    const item = paths[pathTemplate(path)] ?? {};
    item[lowerMethod(method)] = operation;
    paths[pathTemplate(path)] = item;
    for (const tag of operation.tags) {
      if (tags.some((known) => known.name === tag)) continue;
      const description = options.tags?.[tag] ?? (tag === healthTag ? healthTagDescription : undefined);
      tags.push(description === undefined ? { name: tag } : { name: tag, description });
    }
  };
  routes.forEach((route, index) => {
    addOperation(route.method, route.path, builder.operation(route, ids[index] ?? ''));
  });
  prefixes.forEach((prefix, index) => {
    const [readiness, liveness] = healthPaths(prefix);
    const first = routes.length + 2 * index;
    addOperation('GET', readiness, builder.health(ids[first] ?? 'health', 'readiness'));
    addOperation('GET', liveness, builder.health(ids[first + 1] ?? 'healthLive', 'liveness'));
  });

  const unknownTags = Object.keys(options.tags ?? {}).filter(
    (name) => !tags.some((tag) => tag.name === name),
  );
  if (unknownTags.length > 0)
    throw new ProceedConfigError(
      `openapi.tags names ${unknownTags.map((name) => `"${name}"`).join(', ')}, which no documented collection has (tags: ${tags.map((tag) => tag.name).join(', ')})`,
    );
  const used = [...builder.usedProblems.values()];
  const appCodes = used.filter((problem) => !isBuiltIn(problem.code));
  builder.components.add('Problem', problemSchemaWith(appCodes), 'the problem responses');
  const responses = problemComponents(builder.problemStatuses, appCodes, builder.headers);

  const document: OpenApiDocument = {
    openapi: '3.1.0',
    info: { ...options.info },
    tags,
    paths,
    components: {
      schemas: builder.components.schemas,
      responses,
      ...(builder.headers.components === undefined ? {} : { headers: builder.headers.components }),
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'An access token, sent as `Authorization: Bearer <token>`: a JWT checked as RFC8725 advises (one algorithm, pinned, so `alg: none` and any other are refused; signature, expiry and token type verified)',
        },
      },
    },
  };
  document.servers =
    options.servers === undefined ? [{ ...sameOrigin }] : options.servers.map((server) => ({ ...server }));
  // A fresh tree: tools that dereference in place must not reach the shared constants or views.
  return structuredClone(document);
}

/** A file's body in OpenAPI 3.1: bytes of each declared media type, or of any. */
function binaryContent(types: readonly string[]): Record<string, OpenApiMediaType> {
  const listed = types.length === 0 ? ['*/*'] : types;
  return Object.fromEntries(
    listed.map((type) => [
      type,
      { schema: { type: 'string', format: 'binary', ...(type === '*/*' ? {} : { contentMediaType: type }) } },
    ]),
  );
}
