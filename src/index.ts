/**
 * Proceed: named procedures become a clean, documented, secure REST API.
 *
 * Subpath exports: `proceedjs/resource` (views), `proceedjs/auth`, `proceedjs/pagination`,
 * `proceedjs/openapi`, `proceedjs/client`, `proceedjs/idempotency`, `proceedjs/metrics`,
 * `proceedjs/config` (settings checks that load nothing heavy).
 *
 * @module proceed
 */

export type { ContextResolver, RequestContext } from './core/context.js';
export {
  entityTagDocumentation,
  type RouteFacts,
  routeFacts,
} from './core/documentation.js';
export * from './core/errors.js';
export {
  type EventLogBounds,
  EventSequence,
  type EventStreamOf,
  type EventStreamOptions,
  type EventStreamOutput,
  eventStream,
  resumeAfter,
  ServerEvent,
  serverEvent,
  type UnplacedEventId,
} from './core/events.js';
export {
  type DownloadOutput,
  download,
  FileAnswer,
  type FileAnswerOptions,
  type FileBody,
  fileAt,
  sendFile,
} from './core/files.js';
export {
  type Guard,
  type GuardFailure,
  guard,
  type UserField,
  type UserGuard,
  type UserOf,
  type WithUser,
} from './core/guards.js';
export {
  type HttpMethod,
  type InputMode,
  type ProcedureKind,
  type RestOverride,
  resolveRoute,
  type SuccessStatus,
} from './core/naming.js';
export type { EntityVersion, Precondition } from './core/precondition.js';
export {
  type AnyHandler,
  type AnyMiddleware,
  type AnyProcedure,
  type Collection,
  type OutputDeclaration,
  type OutputSelection,
  type Procedure,
  ProcedureBuilder,
  type ProcedureDefinition,
  type ProcedureMeta,
  type ProcedureTypes,
  procedure,
  procedures,
  type Versioning,
} from './core/procedure.js';
export type { BaseContext, RequestInfo } from './core/request-context.js';
export type { CookieOptions, ResponseControl } from './core/response.js';
export {
  type DocumentationSource,
  type Mount,
  type MountedRoute,
  type MountPlan,
  RouteTable,
} from './core/route-table.js';
export { planRoutes, type RouteEntry } from './core/routes.js';
export { type JsonSchema, type StandardSchemaV1, toJsonSchema } from './core/schema.js';
export {
  type HeaderDocumentation,
  type Middleware,
  type MiddlewareNext,
  type MiddlewareResult,
  type RateLimitRule,
  type RouteDocumentation,
  rateLimit,
  type Step,
  step,
} from './core/steps.js';
export {
  type ConnectingPool,
  UnavailableError,
  unavailableProblem,
  unavailableWhenConnectFails,
} from './core/unavailable.js';
export type { UploadLimits, UploadOptions } from './core/uploads.js';
export type { CompressionOptions } from './http/compression.js';
export type { CorsOptions } from './http/cors.js';
export type { HealthOptions } from './http/health.js';
export type { RateLimitChange, RateLimitOptions, RateLimitRedis } from './http/rate-limit.js';
export { saveFile } from './http/spool.js';
export * from './server/app.js';
export type { EntryContext } from './server/entry-context.js';
export type { Listening, ListenOptions, Phase } from './server/lifecycle.js';
export type { LoggerOptions, LoggerSetting } from './server/logger.js';
export type { MountOptions } from './server/options.js';
export type { IdempotencyRuntime } from './server/procedure-route.js';
