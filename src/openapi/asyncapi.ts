/**
 * The AsyncAPI 3.0 document of an app's socket procedures (docs/sockets.md, "AsyncAPI"), made
 * from its OpenAPI document, so that both say the same of every schema (in AsyncAPI's default
 * schema format, draft 07's superset): each socket route becomes
 * a channel at its path, with the message the server receives, the messages it sends (its own and
 * the error frame) and its handshake's query parameters as the WebSocket binding.
 */
import type { JsonSchema, OpenApiDocument, OpenApiOperation, OpenApiResponse } from './types.js';

/** A message: JSON text on the socket, its payload a JSON Schema. */
interface AsyncApiMessage {
  name: string;
  title: string;
  contentType: 'application/json';
  payload: JsonSchema;
}

type Ref = { $ref: string };

interface AsyncApiChannel {
  address: string;
  title?: string;
  description?: string;
  parameters?: Record<string, { description: string }>;
  messages: Record<string, Ref>;
  bindings: { ws: { method: 'GET'; query?: JsonSchema; bindingVersion: '0.1.0' } };
  'x-proceed-max-message-size': number;
}

interface AsyncApiOperation {
  action: 'send' | 'receive';
  channel: Ref;
  title: string;
  summary?: string;
  messages: Ref[];
  security?: Ref[];
  tags?: { name: string }[];
}

/** The document: AsyncAPI 3.0.0, JSON Schema payloads (its default schema format). */
export interface AsyncApiDocument {
  asyncapi: '3.0.0';
  info: { title: string; version: string; description?: string };
  defaultContentType: 'application/json';
  servers?: Record<string, { host: string; protocol: 'ws' | 'wss'; pathname?: string; description?: string }>;
  channels: Record<string, AsyncApiChannel>;
  operations: Record<string, AsyncApiOperation>;
  components: {
    schemas: Record<string, JsonSchema>;
    messages: Record<string, AsyncApiMessage>;
    securitySchemes?: Record<string, { type: 'httpApiKey'; name: string; in: 'query'; description: string }>;
  };
}

interface SocketFacts {
  receive: JsonSchema;
  send: JsonSchema;
  maxMessageSize: number;
}

const schemaRef = '#/components/schemas/';

/**
 * A JSON Schema of OpenAPI 3.1 (draft 2020-12) in AsyncAPI's default schema format, a superset
 * of draft 07: a `$ref` with other keywords beside it (ignored there) moves into `allOf`, a
 * tuple's `prefixItems` become `items` and `additionalItems`, `$defs` become `definitions`.
 */
export function toDraft07(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toDraft07);
  if (typeof schema !== 'object' || schema === null) return schema;
  const converted: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$ref' && typeof value === 'string')
      converted.$ref = value.replace('#/$defs/', '#/definitions/');
    else if (key === '$defs' || key === 'properties' || key === 'patternProperties' || key === 'definitions')
      converted[key === '$defs' ? 'definitions' : key] = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([name, inner]) => [name, toDraft07(inner)]),
      );
    else if (
      key === 'examples' ||
      key === 'enum' ||
      key === 'const' ||
      key === 'default' ||
      key === 'required'
    )
      converted[key] = value;
    else converted[key] = toDraft07(value);
  }
  if (Array.isArray(converted.prefixItems)) {
    const rest = converted.items;
    converted.items = converted.prefixItems;
    delete converted.prefixItems;
    if (rest !== undefined) converted.additionalItems = rest;
  }
  if (typeof converted.$ref === 'string' && Object.keys(converted).length > 1) {
    const { $ref, ...beside } = converted;
    return { ...beside, allOf: [{ $ref }, ...((beside.allOf as unknown[] | undefined) ?? [])] };
  }
  return converted;
}

function socketOf(operation: OpenApiOperation): SocketFacts | undefined {
  const switching = operation.responses['101'] as
    | (OpenApiResponse & { 'x-proceed-socket'?: SocketFacts })
    | undefined;
  return switching?.['x-proceed-socket'];
}

/** The component schemas `roots` reach, by name, through `$ref`s. */
function reachable(
  roots: readonly unknown[],
  schemas: Record<string, JsonSchema>,
): Record<string, JsonSchema> {
  const found: Record<string, JsonSchema> = {};
  const pending = [...roots];
  while (pending.length > 0) {
    const value = pending.pop();
    if (Array.isArray(value)) pending.push(...value);
    else if (typeof value === 'object' && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        if (key === '$ref' && typeof inner === 'string' && inner.startsWith(schemaRef)) {
          const name = inner.slice(schemaRef.length);
          const schema = schemas[name];
          if (schema !== undefined && found[name] === undefined) {
            found[name] = schema;
            pending.push(schema);
          }
        } else pending.push(inner);
      }
    }
  }
  return found;
}

/** The servers of the OpenAPI document, as WebSocket servers. */
function serversOf(document: OpenApiDocument): AsyncApiDocument['servers'] {
  const servers: NonNullable<AsyncApiDocument['servers']> = {};
  (document.servers ?? []).forEach((server, index) => {
    let url: URL;
    try {
      url = new URL(server.url);
    } catch {
      // A relative server URL names no host: a WebSocket client needs one.
      return;
    }
    const pathname = url.pathname.replace(/\/+$/, '');
    servers[index === 0 ? 'default' : `server${index}`] = {
      host: url.host,
      protocol: url.protocol === 'https:' ? 'wss' : 'ws',
      ...(pathname === '' ? {} : { pathname }),
      ...(server.description === undefined ? {} : { description: server.description }),
    };
  });
  return Object.keys(servers).length === 0 ? undefined : servers;
}

/** The error frame every socket may send (docs/sockets.md, "On the wire"). */
function errorFrame(schemas: Record<string, JsonSchema>): AsyncApiMessage {
  return {
    name: 'SocketError',
    title: 'A message the server refused, or why the socket closes',
    contentType: 'application/json',
    payload: {
      type: 'object',
      required: ['type', 'problem'],
      properties: {
        type: { const: 'error' },
        problem: schemas.Problem === undefined ? { type: 'object' } : { $ref: `${schemaRef}Problem` },
      },
    },
  };
}

/**
 * The AsyncAPI 3.0 document of the socket procedures an OpenAPI document of Proceed's describes,
 * or undefined when it has none.
 *
 * @example
 * const asyncapi = asyncApiOf(generateOpenApi({ app, info: { title: 'Blog', version: '1.0.0' } }));
 */
export function asyncApiOf(document: OpenApiDocument): AsyncApiDocument | undefined {
  const channels: AsyncApiDocument['channels'] = {};
  const operations: AsyncApiDocument['operations'] = {};
  const messages: AsyncApiDocument['components']['messages'] = {};
  const roots: unknown[] = [];
  let secured = false;
  for (const [path, item] of Object.entries(document.paths)) {
    const operation = item?.get as OpenApiOperation | undefined;
    const socket = operation === undefined ? undefined : socketOf(operation);
    if (operation === undefined || socket === undefined) continue;
    const id = operation.operationId.replace(/[^\w.-]/g, '_');
    const channel = `#/channels/${id}`;
    const parameters = operation.parameters ?? [];
    const query = parameters.filter((parameter) => parameter.in === 'query');
    const inPath = parameters.filter((parameter) => parameter.in === 'path');
    messages[`${id}Received`] = {
      name: `${id}Received`,
      title: 'What the client sends',
      contentType: 'application/json',
      payload: toDraft07(socket.receive) as JsonSchema,
    };
    messages[`${id}Sent`] = {
      name: `${id}Sent`,
      title: 'What the server sends',
      contentType: 'application/json',
      payload: toDraft07(socket.send) as JsonSchema,
    };
    roots.push(socket.receive, socket.send, ...query.map((parameter) => parameter.schema));
    channels[id] = {
      address: path,
      ...(operation.summary === undefined ? {} : { title: operation.summary }),
      ...(operation.description === undefined ? {} : { description: operation.description }),
      ...(inPath.length === 0
        ? {}
        : {
            parameters: Object.fromEntries(
              inPath.map((parameter) => [
                parameter.name,
                { description: parameter.description ?? parameter.name },
              ]),
            ),
          }),
      messages: {
        received: { $ref: `#/components/messages/${id}Received` },
        sent: { $ref: `#/components/messages/${id}Sent` },
        error: { $ref: '#/components/messages/SocketError' },
      },
      // The ws binding says, whatever the servers, that the channel is a WebSocket opened by a GET.
      bindings: {
        ws: {
          method: 'GET' as const,
          ...(query.length === 0
            ? {}
            : {
                query: {
                  type: 'object',
                  properties: Object.fromEntries(
                    query.map((parameter) => [parameter.name, toDraft07(parameter.schema)]),
                  ),
                  ...(query.some((parameter) => parameter.required)
                    ? {
                        required: query
                          .filter((parameter) => parameter.required)
                          .map((parameter) => parameter.name),
                      }
                    : {}),
                },
              }),
          bindingVersion: '0.1.0' as const,
        },
      },
      'x-proceed-max-message-size': socket.maxMessageSize,
    };
    // Only a token the handshake must carry: an optional one (`{}` among the requirements) is not security.
    const requirements = operation.security ?? [];
    const security =
      requirements.length > 0 && requirements.every((requirement) => Object.keys(requirement).length > 0)
        ? { security: [{ $ref: '#/components/securitySchemes/accessToken' }] }
        : {};
    if ('security' in security) secured = true;
    const tags = operation.tags.length === 0 ? {} : { tags: operation.tags.map((name) => ({ name })) };
    operations[`${id}Receive`] = {
      action: 'receive',
      channel: { $ref: channel },
      title: `${operation.summary ?? id}: what the client sends`,
      messages: [{ $ref: `${channel}/messages/received` }],
      ...security,
      ...tags,
    };
    operations[`${id}Send`] = {
      action: 'send',
      channel: { $ref: channel },
      title: `${operation.summary ?? id}: what the server sends`,
      messages: [{ $ref: `${channel}/messages/sent` }, { $ref: `${channel}/messages/error` }],
      ...security,
      ...tags,
    };
  }
  if (Object.keys(channels).length === 0) return undefined;
  const schemas = document.components.schemas;
  messages.SocketError = errorFrame(schemas);
  roots.push(messages.SocketError.payload);
  const servers = serversOf(document);
  return {
    asyncapi: '3.0.0',
    info: {
      title: document.info.title,
      version: document.info.version,
      ...(document.info.description === undefined ? {} : { description: document.info.description }),
    },
    defaultContentType: 'application/json',
    ...(servers === undefined ? {} : { servers }),
    channels,
    operations,
    components: {
      schemas: Object.fromEntries(
        Object.entries(reachable(roots, schemas)).map(([name, schema]) => [
          name,
          toDraft07(schema) as JsonSchema,
        ]),
      ),
      messages,
      ...(secured
        ? {
            securitySchemes: {
              accessToken: {
                type: 'httpApiKey' as const,
                name: 'access_token',
                in: 'query' as const,
                description:
                  'The bearer token in the handshake\'s query: a browser\'s WebSocket sends no Authorization header (docs/sockets.md, "Authentication")',
              },
            },
          }
        : {}),
    },
  };
}
