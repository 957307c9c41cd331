import { distinctProblems, routeFacts } from '../core/documentation.js';
import { type ErrorDefinition, ProceedConfigError } from '../core/errors.js';
import { pathTemplate } from '../core/naming.js';
import { lowestViewFirst } from '../core/record-views.js';
import type { MountedRoute, RouteTable } from '../core/route-table.js';
import type { RouteEntry } from '../core/routes.js';
import { type JsonSchema, type StandardSchemaV1, toJsonSchema, whyNoJsonSchema } from '../core/schema.js';
import { SchemaComponents, stableJson } from './components.js';
import {
  binaryContent,
  headerSchema,
  isObject,
  parameter,
  queryParameters,
  requestBody,
  requiresId,
  withExample,
} from './parameters.js';
import { problemReference } from './problems.js';
import { answeredByRoute, isRateLimited, SharedHeaders } from './response-headers.js';
import { strictBody, withImpliedFacts } from './schema-facts.js';
import type {
  OpenApiHeader,
  OpenApiMediaType,
  OpenApiOperation,
  OpenApiParameter,
  OpenApiResponse,
} from './types.js';

export const healthTag = 'health';

export function pascal(text: string): string {
  return text
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part !== '')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/** Builds the operations of one document; holds the state they share. */
export class DocumentBuilder {
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
    // Without `.meta({ summary })`, the procedure's name in words: every operation has one, as
    // linters ask (Redocly's operation-summary) and the docs UI shows beside each path.
    operation.summary = definition.meta.summary ?? summaryOfName(route.name);
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
      // A socket's handshake succeeds with 101, whatever the GET's status would be.
      const sent = route.definition.output?.kind === 'socket' ? 101 : status;
      operation.responses[String(sent)] = this.headers.addTo(success, sent, limited);
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
      // The roles that let a caller in, as OpenAPI 3.1 lets a bearer requirement name them (one
      // requirement per choice): an admin's route is told apart from a user's (docs/openapi.md).
      operation.security = facts.roleChoices.map((roles) => ({ bearerAuth: [...roles] }));
      if (facts.guards.length > 0) operation['x-proceed-guards'] = [...facts.guards];
    } else if (facts.bearer === 'optional') {
      // A token is not needed here, but one that is sent is checked (and `ctx.user` set). Bearer
      // first: tools that take the first requirement (Postman, say) then send the token.
      operation.security = [{ bearerAuth: [] }, {}];
    } else {
      // Said, not left out: no credentials at all (linters ask every operation to say).
      operation.security = [];
    }
    return operation;
  }

  #success(route: RouteEntry, status: number, owner: string, hint: string): OpenApiResponse {
    if (status === 204) return { description: 'No content' };
    const { output } = route.definition;
    if (output?.kind === 'download') return { description: 'The file', content: binaryContent(output.types) };
    if (output?.kind === 'socket')
      return {
        description:
          'Switching Protocols: a WebSocket opens. Each message either way is JSON text: what the client sends is `x-proceed-socket.receive`, what the server sends `x-proceed-socket.send`; a message the server refuses is answered with `{"type":"error","problem":{…}}` (docs/sockets.md)',
        'x-proceed-socket': {
          // A key the schema does not name is refused (src/core/socket-reply.ts).
          receive: strictBody(this.convert(output.socket.receive, 'input', owner, `${hint}Message`)),
          send: this.convert(output.socket.send, 'output', owner, `${hint}Sent`),
          maxMessageSize: output.socket.maxMessageSize,
        },
      } as OpenApiResponse;
    if (output?.kind === 'events')
      return {
        description:
          'Server-sent events, open until the client leaves or the stream is over: each `data` is JSON of `x-proceed-event-data`; a keep-alive comment while quiet; an `error` event with a problem when the stream fails after it opened; a `close` event when the server shuts down (reconnect with `Last-Event-ID`); an `end` event when the stream is over (do not reconnect)',
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
    // Only create* answers carry a Location (the new record's path), when the result has an `id`
    // and a GET reads the record there.
    if (status === 201 && route.convention?.prefix === 'create' && route.recordsPath !== undefined) {
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
    if (output.kind === 'events' || output.kind === 'socket') return { type: 'string' };
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

/**
 * A procedure's name as a summary: `listPosts` → `List posts`, `getPostBySlug` → `Get post by
 * slug`; a run of capitals stays one word (`getURL` → `Get URL`).
 */
export function summaryOfName(name: string): string {
  const words = name
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .filter((word) => word !== '')
    .map((word) => (/^[A-Z0-9]{2,}$/.test(word) ? word : word.toLowerCase()));
  const sentence = words.join(' ');
  return sentence.charAt(0).toUpperCase() + sentence.slice(1);
}
