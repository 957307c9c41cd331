/**
 * Proceed: named procedures become a clean, documented, secure REST API.
 *
 * Subpath exports: `proceedjs/resource` (views), `proceedjs/auth`, `proceedjs/pagination`,
 * `proceedjs/openapi`, `proceedjs/client`, `proceedjs/idempotency`, `proceedjs/metrics`,
 * `proceedjs/config` (settings checks that load nothing heavy).
 *
 * @module proceed
 */

export { ContextPipeline, type ContextResolver, type RequestContext } from './core/context.js';
export {
  distinctProblems,
  entityTagDocumentation,
  type RouteFacts,
  routeFacts,
} from './core/documentation.js';
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
export type { EntityVersion, Precondition } from './core/precondition.js';
export * from './core/procedure.js';
export {
  type DocumentationSource,
  type Mount,
  type MountedRoute,
  type MountPlan,
  RouteTable,
} from './core/route-table.js';
export { planRoutes, type RouteEntry } from './core/routes.js';
export { isZodSchema, type JsonSchema, type StandardSchemaV1, toJsonSchema } from './core/schema.js';
export { outageRetryAfter, UnavailableError, unavailableProblem } from './core/unavailable.js';
export * from './server/app.js';
export type { CorsOptions } from './server/cors.js';
export type { EntryContext } from './server/entry-context.js';
export type { HealthOptions } from './server/health.js';
export type { CompressionOptions } from './server/http-cache.js';
export type { Listening, ListenOptions, Phase } from './server/lifecycle.js';
export type { LoggerOptions, LoggerSetting } from './server/logger.js';
export type { MountOptions } from './server/options.js';
export type { IdempotencyRuntime } from './server/procedure-route.js';
export type { RateLimitChange, RateLimitOptions, RateLimitRedis } from './server/rate-limit.js';
