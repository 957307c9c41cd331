/**
 * A typed HTTP client for a Proceed API. It imports no server code: types come from
 * `import type` of the server's collections, routes from the naming convention or a route
 * manifest generated on the server.
 *
 * @module proceed/client
 */
export { type ClientOptions, createClient, type TokenSource } from './client.js';
export { ClientError, type ClientErrorReason, ProblemError, type ReceivedProblem } from './errors.js';
export {
  type ManifestRoute,
  type MountedRouteLike,
  type RouteManifest,
  type RouteManifestOptions,
  routeManifest,
} from './manifest.js';
export {
  type RefreshingSession,
  type RefreshingSessionOptions,
  refreshingSession,
  type SessionTokens,
} from './session.js';
export type { ClientSocket, WebSocketClass, WebSocketLike } from './sockets.js';
export type {
  AnswerHead,
  ApiShape,
  AppErrors,
  CallOptions,
  Client,
  CollectionClient,
  Jsonify,
  ProblemCodeOf,
  ProblemMatcher,
  ProcedureCall,
  ProcedureInput,
  ProcedureOutput,
  ProcedureResult,
} from './types.js';
