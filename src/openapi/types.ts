/**
 * The parts of the OpenAPI 3.1 object model Proceed writes. Schemas are plain JSON Schema
 * (draft 2020-12), which OpenAPI 3.1 uses as is.
 */
import type { JsonSchema } from '../core/schema.js';

export type { JsonSchema };

/** A reference to a reusable component, e.g. `{ $ref: '#/components/responses/NotFound' }`. */
export interface Reference {
  $ref: string;
}

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
}

export interface OpenApiServer {
  url: string;
  description?: string;
}

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: JsonSchema;
  description?: string;
  deprecated?: boolean;
  style?: 'form' | 'simple';
  explode?: boolean;
}

export interface OpenApiMediaType {
  schema: JsonSchema;
  example?: unknown;
}

export interface OpenApiHeader {
  description: string;
  required?: boolean;
  schema: JsonSchema;
}

export interface OpenApiResponse {
  description: string;
  headers?: Record<string, OpenApiHeader>;
  content?: Record<string, OpenApiMediaType>;
}

export interface OpenApiRequestBody {
  required: boolean;
  content: Record<string, OpenApiMediaType>;
}

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

export type OpenApiMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export type OpenApiPathItem = Partial<Record<OpenApiMethod, OpenApiOperation>>;

export interface OpenApiSecurityScheme {
  type: 'http';
  scheme: 'bearer';
  bearerFormat: string;
  description?: string;
}

export interface OpenApiComponents {
  schemas: Record<string, JsonSchema>;
  responses: Record<string, OpenApiResponse>;
  securitySchemes: Record<string, OpenApiSecurityScheme>;
}

export interface OpenApiTag {
  name: string;
  description?: string;
}

/** An OpenAPI 3.1.0 document, as {@link generateOpenApi} builds it. */
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: OpenApiInfo;
  servers?: OpenApiServer[];
  tags: OpenApiTag[];
  paths: Record<string, OpenApiPathItem>;
  components: OpenApiComponents;
}
