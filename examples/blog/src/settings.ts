/**
 * The blog's settings: what the caller passed, else the environment (docs/blog.md,
 * "Configuration"). main.ts reads and checks them before the app's modules load, so a refusal
 * (no JWT_SECRET with NODE_ENV=production, an embedded database with several workers) comes at
 * once, not after a database has started. Light on purpose: `proceedjs/config` and node only.
 */
import { resolve } from 'node:path';
import type { LoggerSetting } from 'proceedjs';
import type { ScryptCost } from 'proceedjs/auth';
import {
  type CorsOptions,
  checkCorsOptions,
  checkSecret,
  corsFromEnv,
  ProceedConfigError,
  rateLimitFromEnv,
  serverSettingsFromEnv,
} from 'proceedjs/config';
import type { AttachmentStore } from './db/attachments.js';
import type { Database } from './db/connect.js';
import { type DatabaseLocation, databaseLocation } from './db/location.js';
import type { Mailer } from './mailer.js';
import type { Telemetry } from './telemetry.js';

export interface BlogOptions {
  /** Default `DATABASE_URL`, else `./.data/db`. */
  databaseUrl?: string;
  /** Default `JWT_SECRET`. */
  jwtSecret?: string;
  /**
   * scrypt's cost for password hashes. Default `PASSWORD_HASH_COST` (`N,r,p`), else
   * `hashPassword`'s, OWASP's minimum (16384,8,5). A cheaper one (tests, a development machine) is
   * refused in production.
   */
  passwordCost?: ScryptCost;
  /** Default `NODE_ENV === 'production'`. */
  production?: boolean;
  /** Default `ADMIN_EMAIL` and `ADMIN_PASSWORD`: when both are set, this admin exists at start-up. */
  admin?: { email: string; password: string };
  /** Requests per minute per client IP on the auth routes. Default `AUTH_RATE_LIMIT`, else 10. */
  authRateLimit?: number;
  /** Where reset links go. Default: the log (the token is logged only outside production). */
  mailer?: Mailer;
  /**
   * Where post attachments are kept: another store than the default's directory (an object
   * store). Every instance must be given the same store (docs/blog.md, "Attachments").
   */
  attachments?: AttachmentStore;
  /**
   * The directory the default store writes attachments' bytes to, created if missing. Default
   * `ATTACHMENTS_DIR`, else beside an embedded database's directory (`<dir>-attachments`), a
   * temporary directory for `memory://` (removed when the app closes), `./.data/attachments` for
   * a PostgreSQL server. Every instance on one database must see the same directory.
   */
  attachmentsDirectory?: string;
  /**
   * A database opened already (tests, an app that embeds the blog), used instead of opening
   * `databaseUrl`'s. The app closes it when it closes.
   */
  database?: Database;
  logger?: LoggerSetting;
  /** Trust `X-Forwarded-For` from a proxy in front (client IPs for rate limits). Default `TRUST_PROXY`. */
  trustProxy?: boolean | number | string;
  /**
   * Redis for the auth rate limits, shared by every instance. Default `REDIS_URL`; unset: each
   * instance counts on its own.
   */
  redisUrl?: string;
  /**
   * With Redis configured but unreachable: `allow` lets sign-ins through unlimited (logged once
   * per outage), `refuse` answers them 503. Default `RATE_LIMIT_ON_STORE_ERROR`, else `allow`.
   */
  rateLimitOnStoreError?: 'allow' | 'refuse';
  /**
   * Serve Prometheus metrics at `GET /metrics` on this port: a listener of its own, never the
   * API's, on the same interface (`HOST`). Default `METRICS_PORT`; unset: no metrics.
   */
  metricsPort?: number;
  /**
   * Browser origins allowed to call the API (CORS, credentials off). Default `CORS_ORIGINS`
   * (comma-separated, or `*`); unset: no CORS headers.
   */
  corsOrigins?: readonly string[] | '*';
  /**
   * The OpenTelemetry SDK this process started (src/telemetry.ts, which the entry runs when
   * `OTEL_*` asks for it): every request is traced (docs/observability.md), and the SDK is shut
   * down, its last spans sent, once everything else of the app has closed. Default: none.
   */
  telemetry?: Telemetry;
  /** How many processes serve this app at once (`proceed start --workers N`). Default 1. */
  workers?: number;
  /**
   * Run as workers of `proceed start --workers` (any count): needs a PostgreSQL server, and
   * above one worker a JWT_SECRET. Default false.
   */
  clustered?: boolean;
  /**
   * Build the routes and the documentation only, for `proceed routes`, `openapi` and `manifest`:
   * no database is opened and nothing is seeded, so the app must not serve. Default false.
   */
  inspect?: boolean;
}

/** The settings once defaults are applied and every value is checked. */
export interface BlogSettings {
  production: boolean;
  database: DatabaseLocation;
  /** As configured; unset outside production means a random per-process secret, with a warning. */
  jwtSecret: string | undefined;
  /** Unset: `hashPassword`'s default. */
  passwordCost: ScryptCost | undefined;
  admin: { email: string; password: string } | undefined;
  authRateLimit: number;
  trustProxy: boolean | number | string | undefined;
  workers: number;
  redisUrl: string | undefined;
  rateLimitOnStoreError: 'allow' | 'refuse';
  metricsPort: number | undefined;
  cors: CorsOptions | undefined;
  /**
   * Where the default store keeps attachments (unused when `attachments` gives another store);
   * `temporary`: a new directory, gone with the app.
   */
  attachments: AttachmentsLocation;
}

/** Where the default attachment store writes (docs/blog.md, "Where the files are kept"). */
export type AttachmentsLocation = { kind: 'directory'; path: string } | { kind: 'temporary' };

/** The default store's directory: configured, else what suits the database. */
function attachmentsLocation(
  options: BlogOptions,
  env: NodeJS.ProcessEnv,
  database: DatabaseLocation,
): AttachmentsLocation {
  const configured = options.attachmentsDirectory ?? env.ATTACHMENTS_DIR;
  const given = configured === undefined || configured.trim() === '' ? undefined : configured.trim();
  if (options.attachments !== undefined && options.attachmentsDirectory !== undefined)
    throw new ProceedConfigError(
      'attachments and attachmentsDirectory both say where attachments go: give one of them',
    );
  if (given !== undefined) return { kind: 'directory', path: resolve(given) };
  if (database.kind === 'memory') return { kind: 'temporary' };
  if (database.kind === 'directory') return { kind: 'directory', path: `${database.path}-attachments` };
  return { kind: 'directory', path: resolve(defaultAttachmentsDirectory) };
}

/** The default attachments directory beside a PostgreSQL server: the working directory's `.data`. */
export const defaultAttachmentsDirectory = './.data/attachments';

function checkedCors(options: CorsOptions): CorsOptions {
  checkCorsOptions(options);
  return options;
}

/** The work (N × r × p) and memory (N × r) of OWASP's minimum scrypt cost, 16384,8,5, which production keeps to. */
const minimumPasswordWork = 16_384 * 8 * 5;
const minimumPasswordMemory = 16_384 * 8;

/** `PASSWORD_HASH_COST`: `N,r,p`, as a hash spells it (`scrypt$N$r$p$…`), or the option. */
function passwordCostOf(
  option: ScryptCost | undefined,
  value: string | undefined,
  production: boolean,
): ScryptCost | undefined {
  if (option === undefined && (value === undefined || value === '')) return undefined;
  const parts = option === undefined ? (value ?? '').split(',').map((part) => Number(part.trim())) : [];
  const { N = 16_384, r = 8, p = 5 } = option ?? { N: parts[0], r: parts[1], p: parts[2] };
  const spelled = option === undefined ? `"${value}"` : JSON.stringify(option);
  if (option === undefined && parts.length !== 3)
    throw new ProceedConfigError(`PASSWORD_HASH_COST must be N,r,p, say 16384,8,5 (got ${spelled})`);
  if (!Number.isInteger(N) || N < 2 || N > 2 ** 20 || (N & (N - 1)) !== 0)
    throw new ProceedConfigError(`PASSWORD_HASH_COST: N must be a power of two up to 2^20 (got ${spelled})`);
  if (!Number.isInteger(r) || r < 1 || r > 32 || !Number.isInteger(p) || p < 1 || p > 16)
    throw new ProceedConfigError(`PASSWORD_HASH_COST: r must be 1 to 32 and p 1 to 16 (got ${spelled})`);
  if (production && (N * r * p < minimumPasswordWork || N * r < minimumPasswordMemory))
    throw new ProceedConfigError(
      `PASSWORD_HASH_COST ${spelled} is cheaper than OWASP's minimum for scrypt (16384,8,5): it is for tests and development, not production`,
    );
  return { N, r, p };
}

function metricsPortOf(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new ProceedConfigError(`METRICS_PORT must be a port number, 0–65535 (got "${value}")`);
  return port;
}

/** `REDIS_URL`: `redis://` or `rediss://`; anything else is refused without echoing it (it may hold a password). */
function checkRedisUrl(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  let protocol = '';
  try {
    protocol = new URL(value).protocol;
  } catch {
    throw new ProceedConfigError('REDIS_URL is not a URL: expected redis://[user:password@]host:port[/db]');
  }
  if (protocol !== 'redis:' && protocol !== 'rediss:')
    throw new ProceedConfigError(`REDIS_URL must start with redis:// or rediss:// (got ${protocol}//…)`);
  return value;
}

function storeErrorPolicy(value: string | undefined): 'allow' | 'refuse' {
  if (value === undefined || value === '' || value === 'allow') return 'allow';
  if (value === 'refuse') return 'refuse';
  throw new ProceedConfigError(`RATE_LIMIT_ON_STORE_ERROR must be "allow" or "refuse" (got "${value}")`);
}

function adminFromEnv(env: NodeJS.ProcessEnv): BlogOptions['admin'] {
  const { ADMIN_EMAIL: email, ADMIN_PASSWORD: password } = env;
  return email !== undefined && email !== '' && password !== undefined && password !== ''
    ? { email, password }
    : undefined;
}

/**
 * `TRUST_PROXY`: a number of proxy hops (`1`), a comma-separated list of the proxies' addresses
 * or subnets, or `true` (every hop: only behind a proxy that replaces `X-Forwarded-For`).
 */
function trustProxyFromEnv(value: string | undefined): boolean | number | string | undefined {
  if (value === undefined || value === '' || value === 'false') return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  return value === 'true' ? true : value;
}

/**
 * Applies the defaults and checks every setting that can be checked without the database;
 * throws a `ProceedConfigError` naming the first bad one.
 *
 * @example
 * const settings = readSettings({ workers: 2, clustered: true }); // throws: --workers needs a PostgreSQL server
 */
export function readSettings(options: BlogOptions = {}, env: NodeJS.ProcessEnv = process.env): BlogSettings {
  const production = options.production ?? env.NODE_ENV === 'production';
  const workers = options.workers ?? 1;
  const jwtSecret = options.jwtSecret ?? env.JWT_SECRET;
  // An inspected app signs nothing: `proceed openapi` in a build pipeline needs no secret.
  if (options.inspect !== true) checkSecret({ secret: jwtSecret, production, workers });
  const database = databaseLocation(options.databaseUrl ?? env.DATABASE_URL);
  // The app reads these itself; checked here too, so a bad value stops start-up before the database opens.
  serverSettingsFromEnv(env);
  if ((options.clustered === true || workers > 1) && database.kind !== 'postgres') {
    throw new ProceedConfigError(
      '--workers needs a PostgreSQL server: an embedded PGlite database ' +
        `(${database.kind === 'memory' ? 'memory://' : database.path}) lives in one process. ` +
        'Set DATABASE_URL=postgres://… or start without --workers.',
    );
  }
  const redisUrl = checkRedisUrl(options.redisUrl ?? env.REDIS_URL);
  const onStoreError = options.rateLimitOnStoreError ?? env.RATE_LIMIT_ON_STORE_ERROR;
  const rateLimitOnStoreError = storeErrorPolicy(onStoreError);
  if (redisUrl === undefined && onStoreError !== undefined && onStoreError !== '') {
    throw new ProceedConfigError(
      'RATE_LIMIT_ON_STORE_ERROR applies to limits shared in Redis only: set REDIS_URL too, or unset it',
    );
  }
  return {
    production,
    database,
    jwtSecret,
    passwordCost: passwordCostOf(options.passwordCost, env.PASSWORD_HASH_COST, production),
    admin: options.admin ?? adminFromEnv(env),
    authRateLimit: options.authRateLimit ?? rateLimitFromEnv(env),
    trustProxy: options.trustProxy ?? trustProxyFromEnv(env.TRUST_PROXY),
    workers,
    redisUrl,
    rateLimitOnStoreError,
    metricsPort: options.metricsPort ?? metricsPortOf(env.METRICS_PORT),
    cors:
      options.corsOrigins === undefined ? corsFromEnv(env) : checkedCors({ origins: options.corsOrigins }),
    attachments: attachmentsLocation(options, env, database),
  };
}
