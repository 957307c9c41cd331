/**
 * Pure JWT signing and verification on fast-jwt, with the algorithm pinned to HS256. Every
 * failure is a named error whose message is the `detail` a client sees; the errors are
 * `ProceedError`s with code `INVALID_TOKEN`, so wherever they are thrown they become a 401.
 */
import { createHash } from 'node:crypto';
import { createSigner, createVerifier, TokenError as FastJwtError } from 'fast-jwt';
import { ProceedConfigError, ProceedError } from '../core/errors.js';
import { assignOwn } from '../core/objects.js';

/** The two kinds of token Proceed issues. */
export type TokenType = 'access' | 'refresh';

/** The claims of every token Proceed issues (docs/auth.md, plus `fam`, the login's family id). */
export interface TokenClaims {
  /** The user id. */
  sub: string;
  /** The token's own id: a UUIDv7, so it also records the issue time to the millisecond. */
  jti: string;
  type: TokenType;
  /** The token family: one per login, kept through every refresh. */
  fam: string;
  /**
   * The user's revocation generation when the login began (docs/auth.md, "Revocation"): a
   * user-wide revocation moves it on, ending every token that carries an older one. Absent on
   * tokens issued by 0.1 and on tokens made elsewhere with the shared secret: those count as 0.
   */
  gen?: number;
  /** Issued at, seconds since the epoch. */
  iat: number;
  /** Expires at, seconds since the epoch. */
  exp: number;
  /** Not before, seconds since the epoch (Proceed does not set it; foreign tokens may). */
  nbf?: number;
  /** The issuer: set, and required, where the `TokenService` has an `issuer`. */
  iss?: string;
  /** The audience, one name or a list: set, and required, where the `TokenService` has an `audience`. */
  aud?: string | string[];
}

/** The claims of an access token. */
export interface AccessClaims extends TokenClaims {
  type: 'access';
}

/** The claims of a refresh token. */
export interface RefreshClaims extends TokenClaims {
  type: 'refresh';
}

/** docs/errors.md: every 401 carries exactly `WWW-Authenticate: Bearer`. */
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

/**
 * A claim that names something (`sub`, `jti`, `fam`): stores and user loaders use it as a key, so
 * it must be text a database column can hold. A control character (NUL above all, which
 * PostgreSQL refuses in text) or a key longer than any id would make the lookup fail instead of
 * refusing the token.
 */
const maxKeyClaimLength = 255;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const controlCharacter = /[\u0000-\u001f\u007f]/;

export function isKeyClaim(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value !== '' &&
    value.length <= maxKeyClaimLength &&
    !controlCharacter.test(value)
  );
}

/** The most names an `aud` list may hold: more is no token an issuer would make. */
const maxAudiences = 16;

/** An `aud` claim: one name, or a list of them (RFC 7519, section 4.1.3). */
function isAudience(value: unknown): boolean {
  if (!Array.isArray(value)) return isKeyClaim(value);
  return value.length > 0 && value.length <= maxAudiences && value.every(isKeyClaim);
}

/**
 * The latest NumericDate accepted: 9999-12-31T23:59:59Z. Later (1e300, say) would overflow the
 * millisecond arithmetic of expiries and the bigint columns of the revocation stores.
 */
const latestNumericDate = 253_402_300_799;

function isNumericDate(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= latestNumericDate;
}

/**
 * Fast-jwt returns the decoded payload as `any`; nothing leaves this module unchecked. A token is
 * input like any other: each claim is checked for type and shape before any store or loader sees
 * it (docs/auth.md, "What a token must hold").
 */
function claimsOf(payload: unknown): TokenClaims {
  if (typeof payload !== 'object' || payload === null) throw new TokenMalformedError();
  const claims = payload as Record<string, unknown>;
  const valid =
    isKeyClaim(claims.sub) &&
    isKeyClaim(claims.jti) &&
    (claims.fam === undefined || isKeyClaim(claims.fam)) &&
    (claims.gen === undefined || (Number.isSafeInteger(claims.gen) && (claims.gen as number) >= 0)) &&
    (claims.type === 'access' || claims.type === 'refresh') &&
    isNumericDate(claims.iat) &&
    isNumericDate(claims.exp) &&
    (claims.nbf === undefined || isNumericDate(claims.nbf)) &&
    (claims.iss === undefined || isKeyClaim(claims.iss)) &&
    (claims.aud === undefined || isAudience(claims.aud));
  if (!valid) throw new TokenMalformedError();
  // The contract's claims are sub, jti, type, iat and exp; a token without a login family (made
  // elsewhere with the shared secret) is a family of its own.
  // Copied key by key: a spread that adds a key takes V8's slow path (src/core/objects.ts).
  const checked: Record<string, unknown> = assignOwn({}, claims);
  checked.fam = claims.fam ?? claims.jti;
  return checked as unknown as TokenClaims;
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
      // A signed-in client sends one token many times: its checked signature and claims are
      // kept (never past its exp/nbf) so that the next request skips the decode and the HMAC,
      // 3.9 µs → 1.5 µs (docs/auth.md, "What costs what per request"). Revocation is checked
      // after this, on every request.
      cache: verifiedTokenCache,
      // Only successes are worth keeping: a refusal (a token not yet valid, say) is checked again
      // next time rather than remembered for the clock tolerance.
      errorCacheTTL: () => -(tolerance * 1000) - 1,
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
    if (!canonicalSignature(token)) throw new TokenSignatureError();
    // A copy (claimsOf spreads it): a cached payload is shared by the requests sending its token.
    const claims = claimsOf(payload);
    if (type !== undefined && claims.type !== type) throw new TokenTypeError(type);
    return claims;
  }
}

/**
 * Whether an HS256 token's signature is spelled the one way base64url spells 32 bytes: 43
 * characters, the last carrying 2 bits that must be zero. Decoding ignores those bits, so without
 * this each token had four spellings that verify, and a list of tokens kept by their text outside
 * Proceed (a proxy's deny list, a log search) would miss three of them.
 */
function canonicalSignature(token: string): boolean {
  const dot = token.lastIndexOf('.');
  if (token.length - dot - 1 !== 43) return false;
  return lastSignatureCharacters.includes(token.charAt(token.length - 1));
}

/** The base64url characters whose value ends in two zero bits (index a multiple of 4). */
const lastSignatureCharacters = 'AEIMQUYcgkosw048';

/** Verified tokens kept per codec: about one per active session of an instance. */
const verifiedTokenCache = 1000;

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
