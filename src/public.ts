/**
 * Proceed's public names.
 *
 * Subpath exports: `proceedjs/resource` (views), `proceedjs/auth`, `proceedjs/pagination`,
 * `proceedjs/openapi`, `proceedjs/client`, `proceedjs/idempotency`, `proceedjs/metrics`,
 * `proceedjs/config` (settings checks that load nothing heavy).
 *
 * Everything `proceedjs` exports but `createApp`, which each entry point adds: src/index.ts on
 * Node (with the Fastify adapter), src/index-fetch.ts on Bun, Deno and Workers (without it).
 */

export type { ContextResolver, RequestContext } from './core/context.js';
export { type Credentials, holdCredentials } from './core/credentials.js';
export {
  entityTagDocumentation,
  type RouteFacts,
  routeFacts,
} from './core/documentation.js';
export {
  ConflictError,
  defineErrors,
  type ErrorCode,
  type ErrorDefinition,
  type FieldError,
  ForbiddenError,
  NotFoundError,
  PreconditionFailedError,
  type Problem,
  type ProblemCode,
  ProceedConfigError,
  ProceedError,
  type ProceedErrorOptions,
  UnauthenticatedError,
  ValidationError,
} from './core/errors.js';
export { type EventQueue, eventQueue } from './core/event-queue.js';
export {
  type EventLogBounds,
  EventSequence,
  type EventStreamOf,
  type EventStreamOptions,
  type EventStreamOutput,
  eventStream,
  reconnectStream,
  resumeAfter,
  ServerEvent,
  StreamReconnect,
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
  type AnswerKind,
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
export type { BaseContext, RequestInfo, RequestLog } from './core/request-context.js';
export type { CookieOptions, ResponseControl } from './core/response.js';
export type { DocumentationSource, Mount, MountedRoute, RouteTable } from './core/route-table.js';
export {
  type JsonSchema,
  type SchemaInput,
  type SchemaLike,
  type SchemaOutput,
  type StandardSchemaV1,
  toJsonSchema,
} from './core/schema.js';
export {
  type SocketHandlerOptions,
  type SocketLimits,
  type SocketOf,
  type SocketOutput,
  webSocket,
} from './core/sockets.js';
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
export type {
  AppRouteMethod,
  AppRouteOptions,
  RouteAnswer,
  RouteHandler,
  RouteRequest,
} from './http/app-routes.js';
export type { CompressionOptions } from './http/compression.js';
export type { CorsOptions } from './http/cors.js';
export type { HealthOptions } from './http/health.js';
export type { Answer, ObservedRoute } from './http/observed.js';
export type { IdempotencyRuntime } from './http/procedure-call.js';
export type { RateLimitChange, RateLimitOptions, RateLimitRedis } from './http/rate-limit.js';
export { saveFile } from './http/spool.js';
export {
  App,
  type AppOptions,
  type ContextualPlugin,
  type Plugin,
  type PluginOptions,
  type PluginOptionsKind,
} from './server/app.js';
export type { EntryContext } from './server/entry-context.js';
export type { Listening, ListenOptions, Phase } from './server/lifecycle.js';
export type { LoggerOptions, LoggerSetting } from './server/logger.js';
export type { MountOptions } from './server/options.js';
