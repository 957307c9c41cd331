/**
 * OpenAPI 3.1 for Proceed apps: the document generator, the interactive documentation plugin
 * (`GET /api/docs`, `/api/docs/json`, `/api/docs/yaml`) and a response validator for
 * conformance tests.
 *
 * @module proceed/openapi
 */
export { type AsyncApiDocument, asyncApiOf } from './asyncapi.js';
export { createResponseValidator, exampleErrors, type ResponseValidator } from './conformance.js';
export {
  generateOpenApi,
  type OpenApiDocumentOptions,
  type OpenApiMount,
  type OpenApiOptions,
  type OpenApiRouteSource,
} from './generate.js';
export { type DocsHost, type DocsPluginOptions, docsPlugin } from './plugin.js';
export { problemSchema } from './problems.js';
export type * from './types.js';
