/**
 * Pure JWT signing and verification on fast-jwt, with the algorithm pinned to HS256. Every
 * failure is a named error whose message is the `detail` a client sees; the errors are
 * `ProceedError`s with code `INVALID_TOKEN`, so wherever they are thrown they become a 401.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createSigner, createVerifier, TokenError as FastJwtError } from 'fast-jwt';
import { ProceedConfigError, ProceedError } from '../core/errors.js';

/** The two kinds of token Proceed issues. */
export type TokenType = 'access' | 'refresh';

/** The claims of every token Proceed issues (CONTRACT §4, plus `fam`, the login's family id). */
export interface TokenClaims {
  /** The user id. */
  sub: string;
  /** The token's own id: a UUIDv7, so it also records the issue time to the millisecond. */
  jti: string;
  type: TokenType;
  /** The token family: one per login, kept through every refresh. */
  fam: string;
  /** Issued at, seconds since the epoch. */
  iat: number;
  /** Expires at, seconds since the epoch. */
  exp: number;
  /** Not before, seconds since the epoch (Proceed does not set it; foreign tokens may). */
  nbf?: number;
}

/** The claims of an access token. */
export interface AccessClaims extends TokenClaims {
  type: 'access';
}

/** The claims of a refresh token. */
export interface RefreshClaims extends TokenClaims {
  type: 'refresh';
}

/** CONTRACT §3: every 401 carries exactly `WWW-Authenticate: Bearer`. */
const invalidTokenHeaders = { 'www-authenticate': 'Bearer' };

/**
 * Any token that cannot be accepted. Answers 401 `INVALID_TOKEN` with `WWW-Authenticate: Bearer`;
 * the message is the problem's `detail`.
 *
 * @example
 * try { await tokens.verifyAccess(token); } catch (error) { if (error instanceof InvalidTokenError) ... }
 */
export class InvalidTokenError extends ProceedError {
  constructor(detail: string, cause?: unknown) {
    super('INVALID_TOKEN', detail, { headers: invalidTokenHeaders, cause });
  }
}

/** @example throw new TokenMalformedError(); // detail "jwt malformed" */
export class TokenMalformedError extends InvalidTokenError {
  constructor(cause?: unknown) {
    super('jwt malformed', cause);
  }
}

/** The signature does not verify with this server's secret. @example new TokenSignatureError() */
export class TokenSignatureError extends InvalidTokenError {
  constructor(detail = 'invalid signature', cause?: unknown) {
    super(detail, cause);
  }
}

/**
 * The token names an algorithm other than HS256. A kind of signature error, so catching
 * {@link TokenSignatureError} covers it.
 *
 * @example new TokenAlgorithmError(); // detail "invalid algorithm"
 */
export class TokenAlgorithmError extends TokenSignatureError {
  constructor(cause?: unknown) {
    super('invalid algorithm', cause);
  }
}

/** @example new TokenExpiredError(); // detail "jwt expired" */
export class TokenExpiredError extends InvalidTokenError {
  constructor(cause?: unknown) {
    super('jwt expired', cause);
  }
}

/** The token's `nbf` lies in the future. @example new TokenNotActiveError(); // "jwt not active" */
export class TokenNotActiveError extends InvalidTokenError {
  constructor(cause?: unknown) {
    super('jwt not active', cause);
  }
}

/**
 * A valid token of the wrong kind: a refresh token sent as an access token or the reverse.
 *
 * @example new TokenTypeError('access'); // detail "expected an access token"
 */
export class TokenTypeError extends InvalidTokenError {
  readonly expected: TokenType;

  constructor(expected: TokenType) {
    super(expected === 'access' ? 'expected an access token' : 'expected a refresh token');
    this.expected = expected;
  }
}

/**
 * A token that verifies but was revoked (logout, refresh-token reuse, a user-wide revocation).
 *
 * @example new TokenRevokedError(); // detail "jwt revoked"
 */
export class TokenRevokedError extends InvalidTokenError {
  constructor(detail = 'jwt revoked') {
    super(detail);
  }
}

const codes = FastJwtError.codes;

function translate(error: unknown): unknown {
  if (!(error instanceof FastJwtError)) return error;
  switch (error.code) {
    case codes.expired:
      return new TokenExpiredError(error);
    case codes.inactive:
      return new TokenNotActiveError(error);
    case codes.invalidAlgorithm:
      return new TokenAlgorithmError(error);
    case codes.invalidSignature:
    case codes.missingSignature:
      return new TokenSignatureError('invalid signature', error);
    default:
      return new TokenMalformedError(error);
  }
}

/** Fast-jwt returns the decoded payload as `any`; nothing leaves this module unchecked. */
function claimsOf(payload: unknown): TokenClaims {
  if (typeof payload !== 'object' || payload === null) throw new TokenMalformedError();
  const claims = payload as Record<string, unknown>;
  const valid =
    typeof claims.sub === 'string' &&
    claims.sub !== '' &&
    typeof claims.jti === 'string' &&
    claims.jti !== '' &&
    (claims.fam === undefined || (typeof claims.fam === 'string' && claims.fam !== '')) &&
    (claims.type === 'access' || claims.type === 'refresh') &&
    typeof claims.iat === 'number' &&
    typeof claims.exp === 'number';
  if (!valid) throw new TokenMalformedError();
  // The contract's claims are sub, jti, type, iat and exp; a token without a login family (made
  // elsewhere with the shared secret) is a family of its own.
  return { ...claims, fam: claims.fam ?? claims.jti } as unknown as TokenClaims;
}

/** Longer than any token Proceed issues; refusing early keeps garbage cheap. */
const maxTokenLength = 4096;

export interface JwtCodecOptions {
  /** The HS256 secret (see {@link resolveSecret}). */
  secret: string | Buffer;
  /** Seconds of clock skew accepted on `exp` and `nbf`. Default 5. */
  clockTolerance?: number;
}

/**
 * Signs and verifies Proceed tokens with one secret. Build it with {@link createJwtCodec}, which
 * reuses one instance per secret: fast-jwt is fast only when its signer and verifier are reused.
 *
 * @example
 * const jwt = createJwtCodec({ secret });
 * const token = jwt.sign({ sub: 'u1', jti, type: 'access', fam, iat, exp });
 * const claims = jwt.verify(token, 'access');
 */
export class JwtCodec {
  readonly #sign: (payload: Record<string, unknown>) => string;
  readonly #verify: (token: string) => unknown;

  constructor(options: JwtCodecOptions) {
    const key = typeof options.secret === 'string' ? Buffer.from(options.secret, 'utf8') : options.secret;
    if (key.length === 0) throw new ProceedConfigError('The JWT secret is empty');
    const tolerance = options.clockTolerance ?? 5;
    this.#sign = createSigner({ key, algorithm: 'HS256' });
    this.#verify = createVerifier({
      key,
      algorithms: ['HS256'],
      clockTolerance: tolerance * 1000,
      requiredClaims: ['sub', 'jti', 'type', 'iat', 'exp'],
    });
  }

  /** Signs the claims as they are: the caller sets `iat` and `exp`. */
  sign(claims: TokenClaims): string {
    return this.#sign({ ...claims });
  }

  /**
   * Verifies signature, algorithm, `exp`/`nbf` (with the clock tolerance), the claims' shape and,
   * when given, the token type. Throws an {@link InvalidTokenError} subclass on any failure.
   */
  verify(token: string, type: 'access'): AccessClaims;
  verify(token: string, type: 'refresh'): RefreshClaims;
  verify(token: string, type?: TokenType): TokenClaims;
  verify(token: string, type?: TokenType): TokenClaims {
    if (typeof token !== 'string' || token.length === 0 || token.length > maxTokenLength) {
      throw new TokenMalformedError();
    }
    let payload: unknown;
    try {
      payload = this.#verify(token);
    } catch (error) {
      throw translate(error);
    }
    const claims = claimsOf(payload);
    if (type !== undefined && claims.type !== type) throw new TokenTypeError(type);
    return claims;
  }
}

const codecs = new Map<string, JwtCodec>();
const maxCachedCodecs = 16;

/**
 * The codec for a secret, created once and reused.
 *
 * @example
 * const jwt = createJwtCodec({ secret: process.env.JWT_SECRET!, clockTolerance: 5 });
 */
export function createJwtCodec(options: JwtCodecOptions): JwtCodec {
  // The map is keyed by a digest so that the secret itself never becomes a map key.
  const digest = createHash('sha256').update(options.secret).digest('base64url');
  const key = `${options.clockTolerance ?? 5}:${digest}`;
  let codec = codecs.get(key);
  if (codec === undefined) {
    codec = new JwtCodec(options);
    if (codecs.size >= maxCachedCodecs) codecs.delete(codecs.keys().next().value as string);
    codecs.set(key, codec);
  }
  return codec;
}

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
}

/** The minimum secret length in bytes: HS256's key should be at least as long as its hash. */
export const minSecretBytes = 32;

/**
 * Applies the secret policy of CONTRACT §1. In production a missing secret or one shorter than
 * 32 bytes throws; in development a missing secret becomes a random per-process one (tokens die
 * with the process) and a short one is accepted, each with a loud warning.
 *
 * @example
 * const secret = resolveSecret({ secret: process.env.JWT_SECRET, logger: app.log });
 */
export function resolveSecret(options: ResolveSecretOptions = {}): string {
  const configured = 'secret' in options ? options.secret : process.env.JWT_SECRET;
  const production = options.production ?? process.env.NODE_ENV === 'production';
  const logger = options.logger ?? console;
  const secret = configured === undefined || configured === '' ? undefined : configured;
  const bytes = secret === undefined ? 0 : Buffer.byteLength(secret, 'utf8');
  if (production && bytes < minSecretBytes) {
    throw new ProceedConfigError(
      secret === undefined
        ? `JWT_SECRET is not set. With NODE_ENV=production a secret of at least ${minSecretBytes} bytes is required; ` +
            `generate one with: node -e "console.log(require('node:crypto').randomBytes(48).toString('base64url'))"`
        : `JWT_SECRET is ${bytes} bytes long. With NODE_ENV=production it must be at least ${minSecretBytes} bytes; ` +
            `generate one with: node -e "console.log(require('node:crypto').randomBytes(48).toString('base64url'))"`,
    );
  }
  if (secret === undefined) {
    logger.warn(
      '!!! JWT_SECRET is not set: using a random secret for this process only. Every token becomes ' +
        'invalid on restart and other instances reject it. Set JWT_SECRET (at least 32 bytes) before deploying. !!!',
    );
    return randomBytes(48).toString('base64url');
  }
  if (bytes < minSecretBytes) {
    logger.warn(
      `JWT_SECRET is only ${bytes} bytes long; use at least ${minSecretBytes} (production refuses to start with it).`,
    );
  }
  return secret;
}
