/**
 * What `createApp` and `mount` accept (docs/procedures.md, docs/deployment.md).
 */
import type { CorsOptions as CorsSettings } from '../config/cors.js';
import type { ServerTimeouts } from '../config/server.js';
import { ProceedConfigError } from '../core/errors.js';
import { optionKeys, refuseUnknownOptions } from '../core/options.js';
import type { RequestInfo } from '../core/request-context.js';
import { checkUploadOptions, type UploadOptions } from '../core/uploads.js';
import type { CompressionOptions } from '../http/compression.js';
import type { CsrfOptions } from '../http/csrf.js';
import type { HealthOptions } from '../http/health.js';
import type { RateLimitOptions } from '../http/rate-limit.js';
import type { RequestTracing } from '../http/tracing.js';
import type { CorsOptions } from './cors.js';
import type { LoggerOptions, LoggerSetting } from './logger.js';

export type MaybePromise<T> = T | Promise<T>;

export interface AppOptions<TCtx extends object> {
  /**
   * Builds the app's part of each request's context (a database handle, services, …). `TCtx`
   * may be the whole context type: `request` is added by Proceed, optional parts (such as the
   * `user` the auth plugin sets) may be left out.
   */
  context?: (request: RequestInfo) => MaybePromise<Omit<TCtx, 'request'>>;
  /** `false` silences logs; `true` or omitted: JSON in production, readable otherwise. */
  logger?: LoggerSetting;
  /** Bodies above this many bytes are refused with 413. Default 1 MiB. */
  bodyLimit?: number;
  /** How long shutdown waits for in-flight requests, in ms. Default 10,000. */
  shutdownTimeout?: number;
  /**
   * After SIGTERM/SIGINT (or `shutdown()`), how long readiness answers 503 while every route
   * still serves, in ms. Default `SHUTDOWN_DRAIN_MS`, else 5,000 with `NODE_ENV=production`, else 0.
   */
  drainDelay?: number;
  /**
   * How long clients may take, in ms: `headers` (default `HEADERS_TIMEOUT_MS`, else 10,000),
   * the whole `request` with its body (`REQUEST_TIMEOUT_MS`, else 30,000), an idle keep-alive
   * connection (`keepAlive`: `KEEP_ALIVE_TIMEOUT_MS`, else 72,000). Over time: 408, connection closed.
   */
  timeouts?: Partial<ServerTimeouts>;
  /**
   * Connections this process holds at most (docs/deployment.md, "Connection limits"). At the
   * limit a new connection sheds the one that has waited longest on its client; when none has,
   * it gets a 503 at once. Default `MAX_CONNECTIONS`, else the open-file limit less a reserve.
   */
  maxConnections?: number;
  /**
   * WebSockets this process holds open at most (docs/sockets.md, "Limits"); a handshake past it
   * gets 503 with `Retry-After`. Default 10,000.
   */
  maxSockets?: number;
  /**
   * WebSockets one client holds open at most: a signed-in user wherever it connects from, anyone
   * else by address. A handshake past it gets 429. Default 1,000 (a tenth of `maxSockets`' default).
   */
  maxSocketsPerClient?: number;
  /**
   * Event streams one client holds open at most, counted as `maxSocketsPerClient` counts sockets
   * (docs/events.md, "Limits"); a request past it gets 429. Default 1,000.
   */
  maxStreamsPerClient?: number;
  /** Readiness check behind `GET {prefix}/health`. */
  health?: HealthOptions;
  /**
   * Trust `X-Forwarded-*` from proxies in front (Fastify's `trustProxy`): how many hops (`1`: the
   * one proxy the app sits behind), or the proxies' addresses or subnets. `true` trusts every hop,
   * so the client's own `X-Forwarded-For` counts: only behind a proxy that replaces that header
   * (docs/deployment.md, "The client's address"). Default false.
   */
  trustProxy?: boolean | number | string | string[];
  /**
   * Show internal error messages in 500 answers. Default off, in every environment: such a
   * message can hold SQL and its parameters (a password hash, say). The log always has it.
   */
  exposeErrors?: boolean;
  /**
   * Let browsers on these origins call the API (docs/cors.md). Off by default: no CORS headers,
   * and a preflight gets the 405 any OPTIONS request gets.
   */
  cors?: CorsOptions;
  /**
   * Brotli or gzip, as the client accepts, for answers above `threshold` bytes (default 1024).
   * On by default; `false` turns it off (a proxy in front compresses, say). docs/http-caching.md.
   */
  compression?: CompressionOptions | false;
  /**
   * A strong `ETag` (a hash of the exact body) on every 200 to a GET of a procedure, and 304 for
   * an `If-None-Match` that holds it. Default true. docs/http-caching.md.
   */
  entityTags?: boolean;
  /**
   * An `X-Request-Id` on every answer of a procedure and every problem: the client's own when it
   * sent a well-formed one (tracing across services), else a new UUID; the log lines of the
   * request carry it. Default true; `false` sends none and numbers requests in the log instead.
   */
  requestIds?: boolean;
  /** Where `rateLimit()` steps count (Redis) and changes to their numbers by rule name. */
  rateLimit?: RateLimitOptions;
  /**
   * Secrets for signed cookies, newest first, each of 32 bytes or more: the first signs, every
   * one verifies, so a secret rotates by putting the new one first and dropping the old one once
   * its cookies have expired. docs/procedures.md, "Headers and cookies per request".
   */
  cookies?: CookieSettings;
  /**
   * Refuses a write (POST, PUT, PATCH, DELETE) that carries cookies and comes from another site
   * (`Sec-Fetch-Site`, `Origin`) with 403: a page elsewhere cannot act with a user's cookies.
   * Requests without cookies pass untouched. On by default; `trustedOrigins` adds origins to the
   * app's own (CORS origins with `credentials: true` count too); `false` turns it off.
   * docs/procedures.md, "Cross-site requests".
   */
  csrf?: CsrfOptions | false;
  /**
   * The app's `context` sets `ctx.user` itself (its own sign-in: a session cookie, say), so
   * guards that need a user may run without an auth plugin. Default false: such a guard on an
   * app where no plugin provides a user is a start-up error (docs/auth.md).
   */
  userFromContext?: boolean;
  /**
   * The app is only read (routes, OpenAPI, manifest), never served: `listen` refuses, and what a
   * plugin resolves once the app serves (authPlugin's options given as a function) never is, so
   * the app opens nothing. Default: true while `proceed routes`, `openapi` or `manifest` loads
   * the entry (docs/cli.md, "Inspecting an app"), else false.
   */
  inspect?: boolean;
  /**
   * Upload limits of every route that takes files, under each procedure's own `.uploads()`:
   * `fileSize` (10 MiB), `files` (10), `fields` (100), `fieldSize` (64 KiB), `total`
   * (`fileSize × files` + 1 MiB) and `memory` (256 KiB; larger files wait on disk); and
   * `checkContent` (false): each file's first bytes checked against its `.mime()`, with the
   * `file-type` package (install it). docs/uploads.md.
   */
  uploads?: UploadOptions;
  /**
   * Traces every request (docs/observability.md): `openTelemetry()` from
   * `proceedjs/opentelemetry`. Without it nothing is traced, and nothing is spent per request.
   */
  tracing?: RequestTracing;
}

export interface MountOptions {
  /** Default `/api`. */
  prefix?: string;
}

const appKeys = optionKeys<AppOptions<object>>()(
  'context',
  'logger',
  'bodyLimit',
  'shutdownTimeout',
  'drainDelay',
  'maxConnections',
  'maxSockets',
  'maxSocketsPerClient',
  'maxStreamsPerClient',
  'timeouts',
  'health',
  'trustProxy',
  'exposeErrors',
  'cors',
  'compression',
  'entityTags',
  'requestIds',
  'rateLimit',
  'cookies',
  'csrf',
  'userFromContext',
  'inspect',
  'uploads',
  'tracing',
);
const nested: Record<string, readonly string[]> = {
  timeouts: optionKeys<ServerTimeouts>()('headers', 'request', 'keepAlive', 'send'),
  health: optionKeys<HealthOptions>()('check', 'timeout'),
  cors: optionKeys<CorsSettings>()('origins', 'credentials', 'maxAge'),
  compression: optionKeys<CompressionOptions>()('threshold'),
  rateLimit: optionKeys<RateLimitOptions>()('redis', 'onStoreError', 'limits'),
  cookies: optionKeys<CookieSettings>()('secrets'),
  csrf: optionKeys<CsrfOptions>()('trustedOrigins'),
};

export interface CookieSettings {
  secrets: readonly string[];
}

/** Refuses an unknown key in `createApp`'s options, nested objects included. */
export function checkAppOptions(options: unknown): void {
  refuseUnknownOptions('createApp', options, appKeys);
  const given = (options ?? {}) as Record<string, unknown>;
  for (const [key, known] of Object.entries(nested)) {
    const value = given[key];
    // `false` turns off compression or csrf, the only non-object values an option here takes.
    if (value !== false) refuseUnknownOptions(`createApp ${key}`, value, known);
  }
  checkLoggerSetting(given.logger);
  if (given.uploads !== undefined) checkUploadOptions('createApp uploads', given.uploads);
  const { tracing } = given as { tracing?: Partial<RequestTracing> };
  if (
    tracing !== undefined &&
    (typeof tracing?.begin !== 'function' || typeof tracing.logFields !== 'function')
  )
    throw new ProceedConfigError(
      'createApp tracing takes what openTelemetry() from proceedjs/opentelemetry returns (docs/observability.md)',
    );
}

const loggerKeys = optionKeys<LoggerOptions>()('level', 'pretty', 'stream');
const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * `logger`: a boolean or `{ level, pretty, stream }`. `{ levl }` and `'debug'` were taken as the
 * default logger, and a level pino does not have failed with its own message.
 */
function checkLoggerSetting(logger: unknown): void {
  if (logger === undefined || typeof logger === 'boolean') return;
  if (typeof logger !== 'object' || logger === null)
    throw new ProceedConfigError(
      `createApp: logger is true, false or { level, pretty, stream }, not ${JSON.stringify(logger)}`,
    );
  refuseUnknownOptions('createApp logger', logger, loggerKeys);
  const { level, pretty, stream } = logger as LoggerOptions;
  if (level !== undefined && !logLevels.includes(level))
    throw new ProceedConfigError(
      `createApp logger: level is one of ${logLevels.join(', ')}, not ${JSON.stringify(level)}`,
    );
  if (pretty !== undefined && typeof pretty !== 'boolean')
    throw new ProceedConfigError(`createApp logger: pretty is true or false, not ${JSON.stringify(pretty)}`);
  if (stream !== undefined && typeof (stream as { write?: unknown })?.write !== 'function')
    throw new ProceedConfigError('createApp logger: stream has a write(line) method');
}

/** Refuses an unknown key in `mount`'s options. */
export function checkMountOptions(options: unknown, ready: boolean): void {
  // The pipeline is made once the app is ready: what is mounted later was documented, never served.
  if (ready)
    throw new ProceedConfigError(
      'app.mount() after the app is ready: mount collections before listen() or the first request',
    );
  refuseUnknownOptions('mount', options, optionKeys<MountOptions>()('prefix'));
}
