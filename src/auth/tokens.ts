/**
 * Token lifecycle: issuing a pair at login, rotating it on refresh (with reuse detection),
 * verifying access tokens against the revocation store, logout and user-wide revocation.
 */
import { randomBytes } from 'node:crypto';
import {
  type AccessClaims,
  createJwtCodec,
  type JwtCodec,
  type RefreshClaims,
  type TokenClaims,
  TokenRevokedError,
  type TokenType,
} from './jwt.js';
import { MemoryRevocationStore, type RevocationStore } from './revocation.js';

type MaybePromise<T> = T | Promise<T>;

/** What login, register and refresh answer with (docs/auth.md). */
export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  tokenType: 'Bearer';
  /** The access token's lifetime in seconds. */
  expiresIn: number;
}

export interface TokenServiceOptions {
  /** The HS256 secret; pass it through `resolveSecret()` first. */
  secret: string | Buffer;
  /** Where revocations live. Default: a {@link MemoryRevocationStore} (one instance only). */
  store?: RevocationStore;
  /** Access token lifetime in seconds. Default 900 (15 minutes). */
  accessTokenTtl?: number;
  /** Refresh token lifetime in seconds. Default 604,800 (7 days). */
  refreshTokenTtl?: number;
  /** Seconds of clock skew accepted on `exp` and `nbf`. Default 5. */
  clockTolerance?: number;
}

export interface RefreshOptions {
  /**
   * Called with the user id before a new pair is issued; answering false refuses the refresh
   * (401 `INVALID_TOKEN`). Use it so that a deleted or deactivated user cannot refresh.
   */
  allowUser?: (userId: string) => MaybePromise<boolean>;
}

/** A UUIDv7: 48 bits of ms timestamp, then randomness. Sortable, and it dates the token. */
export function uuidv7(now: number = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x70;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const uuidv7Pattern = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * When a token was issued, in ms. `iat` has only second precision, which would let a token issued
 * in the same second as a user-wide revocation (before or after it) fall on the wrong side; the
 * UUIDv7 `jti` carries the millisecond.
 */
export function issuedAtMs(claims: Pick<TokenClaims, 'jti' | 'iat'>): number {
  if (uuidv7Pattern.test(claims.jti)) {
    return Number.parseInt(claims.jti.slice(0, 8) + claims.jti.slice(9, 13), 16);
  }
  return claims.iat * 1000;
}

export interface IssueOptions {
  /**
   * When the credentials were checked, in ms (default: now). The pair counts as issued then, so
   * a user-wide revocation (a password reset) that lands between the check and the issue also
   * covers it: take the time before reading the password hash.
   */
  checkedAt?: number;
}

/**
 * Issues, rotates, verifies and revokes tokens. One per app; share it between the auth plugin
 * (`authPlugin(app, { tokens })`) and the login, refresh and logout handlers.
 *
 * @example
 * const tokens = new TokenService({ secret: resolveSecret({ logger: app.log }), store });
 * const pair = await tokens.issuePair(user.id);          // login
 * const next = await tokens.refresh(input.refreshToken); // refresh
 * await tokens.revoke(ctx.auth!.claims);                 // logout
 */
export class TokenService {
  /** The revocation store in use. */
  readonly store: RevocationStore;
  /** Access token lifetime in seconds. */
  readonly accessTokenTtl: number;
  /** Refresh token lifetime in seconds. */
  readonly refreshTokenTtl: number;
  readonly #jwt: JwtCodec;
  readonly #toleranceMs: number;

  constructor(options: TokenServiceOptions) {
    this.store = options.store ?? new MemoryRevocationStore();
    this.accessTokenTtl = positiveSeconds(options.accessTokenTtl ?? 900, 'accessTokenTtl');
    this.refreshTokenTtl = positiveSeconds(options.refreshTokenTtl ?? 7 * 24 * 3600, 'refreshTokenTtl');
    const clockTolerance = options.clockTolerance ?? 5;
    this.#toleranceMs = clockTolerance * 1000;
    this.#jwt = createJwtCodec({ secret: options.secret, clockTolerance });
  }

  /**
   * Issues an access and a refresh token for a new login (a new token family).
   *
   * @example
   * return { user, ...(await tokens.issuePair(user.id)) };
   */
  async issuePair(userId: string, options: IssueOptions = {}): Promise<TokenPair> {
    if (typeof userId !== 'string' || userId === '') throw new TypeError('issuePair needs a user id');
    const checkedAt = options.checkedAt ?? Date.now();
    return this.#pair(userId, uuidv7(checkedAt), checkedAt);
  }

  /**
   * Verifies a refresh token, marks it used and issues the next pair of the same family. A
   * refresh token presented a second time (even concurrently) revokes the whole family: every
   * token of that login stops working, and the caller must sign in again.
   *
   * @example
   * const pair = await tokens.refresh(input.refreshToken, {
   *   allowUser: async (id) => (await db.users.find(id))?.isActive === true,
   * });
   */
  async refresh(refreshToken: string, options: RefreshOptions = {}): Promise<TokenPair> {
    // Taken before any check, so that a revocation landing while they run covers the new pair.
    const checkedAt = Date.now();
    const claims = await this.verifyRefresh(refreshToken);
    if (options.allowUser !== undefined && !(await options.allowUser(claims.sub))) {
      throw new TokenRevokedError();
    }
    const first = await this.store.markUsed(claims.jti, claims.exp * 1000 + this.#toleranceMs);
    if (!first) {
      await this.store.revokeFamily(claims.fam, this.#familyExpiry());
      throw new TokenRevokedError('refresh token already used');
    }
    return this.#pair(claims.sub, claims.fam, checkedAt);
  }

  /**
   * Verifies an access token: signature, algorithm, lifetime, type and revocation (its jti, its
   * family, its user's cut-off). Throws an `InvalidTokenError` subclass on any failure.
   *
   * @example
   * const claims = await tokens.verifyAccess(bearerToken);
   */
  verifyAccess(token: string): Promise<AccessClaims> {
    return this.#verify(token, 'access');
  }

  /**
   * Verifies a refresh token without using it up (refresh() does both).
   *
   * @example
   * const { sub } = await tokens.verifyRefresh(input.refreshToken);
   */
  verifyRefresh(token: string): Promise<RefreshClaims> {
    return this.#verify(token, 'refresh');
  }

  /**
   * Logout: revokes this token and its whole family (the refresh token of the same login too).
   *
   * @example
   * await tokens.revoke(ctx.auth!.claims);
   */
  async revoke(claims: TokenClaims): Promise<void> {
    await Promise.all([
      this.store.revokeToken(claims.jti, claims.exp * 1000 + this.#toleranceMs),
      this.store.revokeFamily(claims.fam, this.#familyExpiry()),
    ]);
  }

  /**
   * Revokes every token the user holds now (after a password reset, say): every token issued up to
   * this millisecond. Tokens issued later are unaffected.
   *
   * @example
   * await tokens.revokeAllForUser(user.id);
   */
  async revokeAllForUser(userId: string): Promise<void> {
    const now = Date.now();
    await this.store.revokeUser(userId, now, now + this.refreshTokenTtl * 1000 + this.#toleranceMs);
  }

  async #verify<T extends TokenType>(token: string, type: T): Promise<TokenClaims & { type: T }> {
    const claims = this.#jwt.verify(token, type) as TokenClaims & { type: T };
    const revoked = await this.store.isRevoked({
      jti: claims.jti,
      family: claims.fam,
      userId: claims.sub,
      issuedAt: issuedAtMs(claims),
    });
    if (revoked) throw new TokenRevokedError();
    return claims;
  }

  /** Every token of a family was issued by now, so none outlives now + the refresh lifetime. */
  #familyExpiry(): number {
    return Date.now() + this.refreshTokenTtl * 1000 + this.#toleranceMs;
  }

  /** `now`: when the credentials were checked; the tokens count as issued then. */
  #pair(userId: string, family: string, now: number): TokenPair {
    const iat = Math.floor(now / 1000);
    const accessToken = this.#jwt.sign({
      sub: userId,
      jti: uuidv7(now),
      type: 'access',
      fam: family,
      iat,
      exp: iat + this.accessTokenTtl,
    });
    const refreshToken = this.#jwt.sign({
      sub: userId,
      jti: uuidv7(now),
      type: 'refresh',
      fam: family,
      iat,
      exp: iat + this.refreshTokenTtl,
    });
    return { accessToken, refreshToken, tokenType: 'Bearer', expiresIn: this.accessTokenTtl };
  }
}

function positiveSeconds(value: number, name: string): number {
  if (!Number.isInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer`);
  return value;
}
