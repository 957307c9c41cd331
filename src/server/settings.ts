/**
 * An app's options with every default applied, resolved once as the app is made and frozen
 * (docs/procedures.md, "The app"): the app, its adapter and `app.fetch` read these, never the
 * options again.
 */
import type { Logger } from 'pino';
import { type ServerTimeouts, serverSettingsFromEnv } from '../config/server.js';
import { ProceedConfigError } from '../core/errors.js';
import type { UploadOptions } from '../core/uploads.js';
import { compressionThreshold } from '../http/compression.js';
import { CookieSigner } from '../http/cookies.js';
import { CorsPolicy } from '../http/cors.js';
import { trustedOriginsOf } from '../http/csrf.js';
import type { HealthOptions } from '../http/health.js';
import { runtime } from '../http/runtime.js';
import type { RequestTracing } from '../http/tracing.js';
import { appLogger, workersLogger } from './logger.js';
import type { AppOptions } from './options.js';

export interface AppSettings {
  readonly requestIds: boolean;
  /**
   * With `requestIds: false`, each request's id: the app's one count of its requests, whatever
   * serves them (the pipeline, or a route of Fastify's on `app.server`), so no two share a number.
   */
  readonly countRequest: () => string;
  readonly exposeErrors: boolean;
  readonly entityTags: boolean;
  /** The most a JSON body (or a route's body, unless it says) may hold. */
  readonly bodyLimit: number;
  readonly trustProxy: boolean | string | string[];
  readonly timeouts: ServerTimeouts;
  readonly maxConnections: number;
  readonly maxSockets: number;
  readonly drainDelay: number;
  readonly shutdownTimeout: number;
  /** Bodies of this many bytes or more are compressed; undefined: never (Workers: the edge does). */
  readonly compressAbove: number | undefined;
  readonly cookieSigner: CookieSigner;
  /** Origins that may write with cookies; undefined when the app turned the check off. */
  readonly csrfTrusted: ReadonlySet<string> | undefined;
  readonly cors: CorsPolicy | undefined;
  readonly uploads: UploadOptions | undefined;
  readonly tracing: RequestTracing | undefined;
  readonly healthCheck: HealthOptions['check'];
  /** The app's logger; undefined when `logger: false` (the app then logs to a silent one). */
  readonly logger: Logger | undefined;
  /** Whether one line per request is logged (`logger` not false). */
  readonly logsRequests: boolean;
}

export function resolveSettings(options: AppOptions<object>): AppSettings {
  const server = serverSettingsFromEnv(process.env, {
    ...(options.timeouts === undefined ? {} : { timeouts: options.timeouts }),
    ...(options.drainDelay === undefined ? {} : { drainDelay: options.drainDelay }),
    ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
  });
  const traceFields = options.tracing?.logFields;
  return Object.freeze({
    requestIds: options.requestIds ?? true,
    countRequest: requestCounter(),
    exposeErrors: options.exposeErrors ?? false,
    entityTags: options.entityTags ?? true,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    trustProxy: options.trustProxy ?? false,
    timeouts: server.timeouts,
    maxConnections: server.maxConnections,
    maxSockets: socketLimit(options.maxSockets),
    drainDelay: server.drainDelay,
    shutdownTimeout: options.shutdownTimeout ?? 10_000,
    // On Workers, Cloudflare compresses at its edge for what the client accepts (docs/deployment.md).
    compressAbove: runtime.compresses ? compressionThreshold(options.compression) : undefined,
    cookieSigner: new CookieSigner(options.cookies?.secrets),
    csrfTrusted: options.csrf === false ? undefined : trustedOriginsOf(options.csrf, options.cors),
    cors: options.cors === undefined ? undefined : new CorsPolicy(options.cors),
    uploads: options.uploads,
    tracing: options.tracing,
    healthCheck: options.health?.check,
    // Workers have no standard output: a Worker logs through console.
    logger: runtime.hasStandardOutput
      ? appLogger(options.logger, traceFields)
      : workersLogger(options.logger, traceFields),
    logsRequests: options.logger !== false,
  });
}

function socketLimit(max: number | undefined): number {
  if (max === undefined) return 10_000;
  if (!Number.isInteger(max) || max < 1)
    throw new ProceedConfigError(`createApp: maxSockets must be a whole number of 1 or more (got ${max})`);
  return max;
}

/** Request numbers from 1, as text. */
function requestCounter(): () => string {
  let count = 0;
  return () => String(++count);
}
