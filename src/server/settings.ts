/**
 * An app's options with every default applied, resolved once as the app is made and frozen
 * (docs/procedures.md, "The app"): the app, its adapter and `app.fetch` read these, never the
 * options again.
 */
import type { Logger } from 'pino';
import { type ServerTimeouts, serverSettingsFromEnv } from '../config/server.js';
import { ProceedConfigError } from '../core/errors.js';
import { durationOption } from '../core/options.js';
import type { UploadOptions } from '../core/uploads.js';
import { ProxyTrust } from '../http/client-address.js';
import { compressionThreshold } from '../http/compression.js';
import { CookieSigner } from '../http/cookies.js';
import { CorsPolicy } from '../http/cors.js';
import { trustedOriginsOf } from '../http/csrf.js';
import { defaultHealthTimeout, type HealthOptions } from '../http/health.js';
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
  readonly trustProxy: boolean | number | string | string[];
  readonly timeouts: ServerTimeouts;
  readonly maxConnections: number;
  readonly maxSockets: number;
  readonly maxSocketsPerClient: number;
  readonly maxStreamsPerClient: number;
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
  /** ms readiness waits for `healthCheck`. */
  readonly healthTimeout: number;
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
  checkFunctions(options);
  return Object.freeze({
    requestIds: flag(options, 'requestIds', true),
    countRequest: requestCounter(),
    exposeErrors: flag(options, 'exposeErrors', false),
    entityTags: flag(options, 'entityTags', true),
    bodyLimit: bodyLimitOf(options.bodyLimit),
    trustProxy: trustProxyOf(options.trustProxy),
    timeouts: server.timeouts,
    maxConnections: server.maxConnections,
    maxSockets: socketLimit(options.maxSockets),
    maxSocketsPerClient: socketLimit(options.maxSocketsPerClient, 'maxSocketsPerClient', 1000),
    maxStreamsPerClient: socketLimit(options.maxStreamsPerClient, 'maxStreamsPerClient', 1000),
    drainDelay: server.drainDelay,
    // A bad one fired at once: requests in flight were cut at close().
    shutdownTimeout: durationOption('createApp', 'shutdownTimeout', options.shutdownTimeout, 10_000, 0),
    // On Workers, Cloudflare compresses at its edge for what the client accepts (docs/deployment.md).
    compressAbove: runtime.compresses ? compressionThreshold(options.compression) : undefined,
    cookieSigner: new CookieSigner(options.cookies?.secrets),
    csrfTrusted: options.csrf === false ? undefined : trustedOriginsOf(options.csrf, options.cors),
    cors: options.cors === undefined ? undefined : new CorsPolicy(options.cors),
    uploads: options.uploads,
    tracing: options.tracing,
    healthCheck: options.health?.check,
    healthTimeout: healthTimeoutOf(options.health?.timeout),
    // Workers have no standard output: a Worker logs through console.
    logger: runtime.hasStandardOutput
      ? appLogger(options.logger, traceFields)
      : workersLogger(options.logger, traceFields),
    logsRequests: options.logger !== false,
  });
}

type BooleanOption = 'requestIds' | 'exposeErrors' | 'entityTags' | 'inspect' | 'userFromContext';

/**
 * A yes-or-no option: a boolean or left out. Read by truthiness, `exposeErrors: 'no'` showed
 * internal messages in 500 answers and `entityTags: 'false'` kept tags on.
 */
export function flag(options: AppOptions<object>, name: BooleanOption, fallback: boolean): boolean {
  const value = options[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean')
    throw new ProceedConfigError(`createApp: ${name} must be true or false (got ${JSON.stringify(value)})`);
  return value;
}

/** Options that are functions the app calls: a value of another kind failed every request. */
function checkFunctions(options: AppOptions<object>): void {
  if (options.context !== undefined && typeof options.context !== 'function')
    throw new ProceedConfigError('createApp: context must be a function of the request');
  const check = options.health?.check;
  if (check !== undefined && typeof check !== 'function')
    throw new ProceedConfigError('createApp: health.check must be a function');
}

/** `health.timeout`: a whole number of ms from 1 to a minute (a probe waits seconds, not more). */
function healthTimeoutOf(timeout: number | undefined): number {
  if (timeout === undefined) return defaultHealthTimeout;
  if (!Number.isSafeInteger(timeout) || timeout < 1 || timeout > 60_000)
    throw new ProceedConfigError(
      `createApp: health.timeout is whole milliseconds from 1 to 60000 (got ${JSON.stringify(timeout)})`,
    );
  return timeout;
}

/**
 * The app-wide body limit in bytes: a whole number of at least 1, as Fastify's own (`NaN` or
 * `'1mb'` turned the limit off on Node's http module and `app.fetch`).
 */
function bodyLimitOf(limit: number | undefined): number {
  if (limit === undefined) return 1024 * 1024;
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new ProceedConfigError(
      `createApp: bodyLimit must be a whole number of bytes, 1 or more (got ${JSON.stringify(limit)})`,
    );
  return limit;
}

/** `trustProxy` in one of its forms; an address or list `proxy-addr` cannot read fails here, named. */
function trustProxyOf(trust: AppOptions<object>['trustProxy']): boolean | number | string | string[] {
  if (trust === undefined) return false;
  const valid =
    typeof trust === 'boolean' ||
    (typeof trust === 'number' && Number.isInteger(trust) && trust >= 1) ||
    typeof trust === 'string' ||
    (Array.isArray(trust) && trust.every((each) => typeof each === 'string'));
  if (!valid)
    throw new ProceedConfigError(
      `createApp: trustProxy is true, false, a number of proxy hops (1 or more), or the proxies' addresses or subnets (a string or a list of strings), not ${JSON.stringify(trust)}`,
    );
  try {
    new ProxyTrust(trust);
  } catch (error) {
    throw new ProceedConfigError(`createApp: trustProxy: ${(error as Error).message}`);
  }
  return trust;
}

function socketLimit(max: number | undefined, name = 'maxSockets', byDefault = 10_000): number {
  if (max === undefined) return byDefault;
  if (!Number.isInteger(max) || max < 1)
    throw new ProceedConfigError(`createApp: ${name} must be a whole number of 1 or more (got ${max})`);
  return max;
}

/** Request numbers from 1, as text. */
function requestCounter(): () => string {
  let count = 0;
  return () => String(++count);
}
