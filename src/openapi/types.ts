/**
 * The parts of the OpenAPI 3.1 object model Proceed writes. Schemas are plain JSON Schema
 * (draft 2020-12), which OpenAPI 3.1 uses as is.
 */
import type { JsonSchema } from '../core/schema.js';

export type { JsonSchema };

/**
 * A reference to a reusable component.
 *
 * @example
 * const notFound: Reference = { $ref: '#/components/responses/NotFound' };
 */
export interface Reference {
  $ref: string;
}

/**
 * The document's `info`: what the API is called and which version it documents.
 *
 * @example
 * const info: OpenApiInfo = { title: 'Blog API', version: '1.0.0', description: 'Posts and users.' };
 */
export interface OpenApiInfo {
  title: string;
  version: string;
  summary?: string;
  description?: string;
  termsOfService?: string;
  contact?: { name?: string; url?: string; email?: string };
  /** `identifier` is an SPDX id (`MIT`); OpenAPI 3.1 allows it or `url`, not both. */
  license?: { name: string; identifier?: string; url?: string };
  /** Extensions (`x-logo`, say), written as given. */
  [extension: `x-${string}`]: unknown;
}

/**
 * A base URL the API is served at.
 *
 * @example
 * const server: OpenApiServer = { url: 'https://api.example.com', description: 'Production' };
 */
export interface OpenApiServer {
  url: string;
  description?: string;
  /** Values of the `{name}` placeholders of `url` (OpenAPI's server variables). */
  variables?: Readonly<Record<string, { default: string; enum?: readonly string[]; description?: string }>>;
  /** Extensions, written as given. */
  [extension: `x-${string}`]: unknown;
}

/**
 * A path or query parameter.
 *
 * @example
 * const limit: OpenApiParameter = { name: 'limit', in: 'query', required: false, schema: { type: 'integer', default: 20 } };
 */
export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
  description?: string;
  deprecated?: boolean;
  style?: 'form' | 'simple';
  explode?: boolean;
  example?: unknown;
}

/**
 * The body of one content type.
 *
 * @example
 * const json: OpenApiMediaType = { schema: { $ref: '#/components/schemas/PostPublic' } };
 */
export interface OpenApiMediaType {
  schema: JsonSchema;
  example?: unknown;
  /** On `text/event-stream`: the schema of each event's JSON `data` (OpenAPI 3.1 has no field for it). */
  'x-proceed-event-data'?: JsonSchema;
  /** On `multipart/form-data`: the media types a file field takes. */
  encoding?: Record<string, { contentType: string }>;
}

/**
 * A documented response header.
 *
 * @example
 * const location: OpenApiHeader = { description: 'Where the new post lives', schema: { type: 'string' } };
 */
export interface OpenApiHeader {
  description: string;
  required?: boolean;
  schema: JsonSchema;
}

/**
 * One documented response of an operation.
 *
 * @example
 * const ok: OpenApiResponse = { description: 'OK', content: { 'application/json': { schema: {} } } };
 */
export interface OpenApiResponse {
  description: string;
  /** A header shared by many responses is a reference to `components.headers`. */
  headers?: Record<string, OpenApiHeader | Reference>;
  content?: Record<string, OpenApiMediaType>;
}

/**
 * The JSON body an operation takes.
 *
 * @example
 * const body: OpenApiRequestBody = { required: true, content: { 'application/json': { schema: { type: 'object' } } } };
 */
export interface OpenApiRequestBody {
  required: boolean;
  content: Record<string, OpenApiMediaType>;
}

/**
 * One procedure as an OpenAPI operation.
 *
 * @example
 * const operation: OpenApiOperation = document.paths['/api/posts']?.get!;
 * operation.operationId; // 'listPosts'
 */
export interface OpenApiOperation {
  operationId: string;
  tags: string[];
  summary?: string;
  description?: string;
  deprecated?: boolean;
  parameters?: OpenApiParameter[];
  requestBody?: OpenApiRequestBody;
  responses: Record<string, OpenApiResponse | Reference>;
  security?: Array<Record<string, string[]>>;
  /** The names of the guards in front of the procedure, in order. */
  'x-proceed-guards'?: string[];
}

/**
 * The methods a path item can hold (the ones Proceed routes).
 *
 * @example
 * const method: OpenApiMethod = 'get';
 */
export type OpenApiMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * The operations of one path, by method.
 *
 * @example
 * const item: OpenApiPathItem | undefined = document.paths['/api/posts/{id}'];
 * item?.delete?.security; // [{ bearerAuth: [] }]
 */
export type OpenApiPathItem = Partial<Record<OpenApiMethod, OpenApiOperation>>;

/**
 * The bearer token scheme guarded routes use.
 *
 * @example
 * const bearer: OpenApiSecurityScheme = { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' };
 */
export interface OpenApiSecurityScheme {
  type: 'http';
  scheme: 'bearer';
  bearerFormat: string;
  description?: string;
}

/**
 * The reusable parts: view schemas, the problem responses, the headers many responses share
 * (rate limits, CORS) and the security scheme.
 *
 * @example
 * Object.keys(document.components.schemas); // ['PostPublic', 'PostAuthenticated', …, 'Problem']
 */
export interface OpenApiComponents {
  schemas: Record<string, JsonSchema>;
  responses: Record<string, OpenApiResponse>;
  /** Present when some response shares a header: `X-RateLimit-Limit`, `Access-Control-Allow-Origin`, … */
  headers?: Record<string, OpenApiHeader>;
  /** `bearerAuth` when some operation takes a bearer token; empty otherwise. */
  securitySchemes: Record<string, OpenApiSecurityScheme>;
}

/**
 * A tag; Proceed makes one per collection.
 *
 * @example
 * const tag: OpenApiTag = { name: 'posts' };
 */
export interface OpenApiTag {
  name: string;
  description?: string;
}

/**
 * An OpenAPI 3.1.0 document, as `generateOpenApi` builds it.
 *
 * @example
 * const document: OpenApiDocument = generateOpenApi({ app, info: { title: 'Blog API', version: '1.0.0' } });
 */
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: OpenApiInfo;
  servers?: OpenApiServer[];
  tags: OpenApiTag[];
  paths: Record<string, OpenApiPathItem>;
  components: OpenApiComponents;
}
