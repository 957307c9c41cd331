/** The JWT secret policy (docs/auth.md, "Secrets"): what production refuses, what development tolerates. */
import { randomBytes } from 'node:crypto';
import { ProceedConfigError } from '../core/errors.js';

/** Anything with a `warn(message)`: the app's pino logger, `console`. */
export interface WarningLogger {
  warn(message: string): void;
}

export interface ResolveSecretOptions {
  /** The configured secret; default `process.env.JWT_SECRET`. An empty string counts as unset. */
  secret?: string | undefined;
  /** Refuse weak or missing secrets; default `process.env.NODE_ENV === 'production'`. */
  production?: boolean;
  /** Where the development warnings go; default `console`. */
  logger?: WarningLogger;
  /**
   * How many processes of this app sign and verify tokens at once (`proceed start --workers N`
   * passes N to the entry). Above 1, a secret is required in every environment: a random one
   * per process would make each worker refuse the others' tokens. Default 1.
   */
  workers?: number;
}

/** The minimum secret length in bytes: HS256's key should be at least as long as its hash. */
export const minSecretBytes = 32;

/** Fewer different characters than this, and a secret of any length is no random one. */
const minDistinctCharacters = 8;

const generate = `generate one with: node -e "console.log(require('node:crypto').randomBytes(48).toString('base64url'))"`;

function configured(options: ResolveSecretOptions): string | undefined {
  const secret = 'secret' in options ? options.secret : process.env.JWT_SECRET;
  return secret === undefined || secret === '' ? undefined : secret;
}

/**
 * Throws the {@link ProceedConfigError} that {@link resolveSecret} would throw, and nothing else:
 * no warning, no random secret. For an entry that checks its settings before anything loads.
 *
 * @example
 * checkSecret({ secret: process.env.JWT_SECRET, production: process.env.NODE_ENV === 'production' });
 */
export function checkSecret(options: ResolveSecretOptions = {}): void {
  const secret = configured(options);
  const production = options.production ?? process.env.NODE_ENV === 'production';
  const bytes = secret === undefined ? 0 : Buffer.byteLength(secret, 'utf8');
  if (production && bytes < minSecretBytes) {
    throw new ProceedConfigError(
      secret === undefined
        ? `JWT_SECRET is not set. With NODE_ENV=production a secret of at least ${minSecretBytes} bytes is required; ${generate}`
        : `JWT_SECRET is ${bytes} bytes long. With NODE_ENV=production it must be at least ${minSecretBytes} bytes; ${generate}`,
    );
  }
  // 32 bytes of one or two characters repeated (`aaaa…`, 32 spaces, a placeholder) pass the
  // length and are guessed at once; 32 random bytes in any encoding show 16 or more.
  const distinct = secret === undefined ? 0 : new Set(secret).size;
  if (production && secret !== undefined && distinct < minDistinctCharacters) {
    throw new ProceedConfigError(
      `JWT_SECRET is made of ${distinct} different character${distinct === 1 ? '' : 's'}: no random secret is. With NODE_ENV=production it must be random; ${generate}`,
    );
  }
  const workers = options.workers ?? 1;
  if (secret === undefined && workers > 1) {
    throw new ProceedConfigError(
      `JWT_SECRET is not set, and ${workers} workers would each sign tokens with a random secret of ` +
        "their own and refuse the others' tokens. Set JWT_SECRET (at least 32 bytes) to run several workers.",
    );
  }
}

/**
 * Applies the secret policy. In production a missing secret, one shorter than 32 bytes or one of
 * fewer than 8 different characters throws;
 * so does a missing one with several workers. In development a missing secret becomes a random
 * per-process one (tokens die with the process) and a short one is accepted, each with a loud
 * warning.
 *
 * @example
 * const secret = resolveSecret({ secret: process.env.JWT_SECRET, logger: app.log });
 */
export function resolveSecret(options: ResolveSecretOptions = {}): string {
  checkSecret(options);
  const secret = configured(options);
  const logger = options.logger ?? console;
  if (secret === undefined) {
    logger.warn(
      '!!! JWT_SECRET is not set: using a random secret for this process only. Every token becomes ' +
        'invalid on restart and other instances reject it. Set JWT_SECRET (at least 32 bytes) before deploying. !!!',
    );
    return randomBytes(48).toString('base64url');
  }
  const bytes = Buffer.byteLength(secret, 'utf8');
  if (bytes < minSecretBytes) {
    logger.warn(
      `JWT_SECRET is only ${bytes} bytes long; use at least ${minSecretBytes} (production refuses to start with it).`,
    );
  }
  return secret;
}
