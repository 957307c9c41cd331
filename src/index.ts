/**
 * Proceed: named procedures become a clean, documented, secure REST API.
 *
 * Subpath exports: `proceedjs/resource` (views), `proceedjs/auth`, `proceedjs/pagination`,
 * `proceedjs/openapi`, `proceedjs/client`, `proceedjs/config` (settings checks that load nothing heavy).
 *
 * @module proceed
 */

export type { EntryContext } from './cli/entry.js';
export * from './core/errors.js';
export {
  conventionOf,
  fillPath,
  type HttpMethod,
  httpMethods,
  type InputMode,
  type ProcedureKind,
  type RestOverride,
  resolveRoute,
  type SuccessStatus,
} from './core/naming.js';
export * from './core/procedure.js';
export { planRoutes, type RouteEntry } from './core/routes.js';
export { isZodSchema, type JsonSchema, type StandardSchemaV1, toJsonSchema } from './core/schema.js';
export * from './server/app.js';
export type { LoggerOptions, LoggerSetting } from './server/logger.js';
