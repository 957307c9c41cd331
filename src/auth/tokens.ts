/**
 * Token lifecycle: issuing a pair at login, rotating it on refresh (with reuse detection),
 * verifying access tokens against the revocation store, logout and user-wide revocation.
 */
import { ProceedConfigError } from '../core/errors.js';
import { optionKeys, refuseUnknownOptions } from '../core/options.js';
import type { StandardSchemaV1 } from '../core/schema.js';
import {
  type AccessClaims,
  createJwtCodec,
  InvalidTokenError,
  type JwtCodec,
  type RefreshClaims,
  type TokenClaims,
  TokenMalformedError,
  TokenRevokedError,
  type TokenType,
} from './jwt.js';
import { MemoryRevocationStore, type RevocationCheck, type RevocationStore } from './revocation.js';
import { RevocationSignal } from './revocation-signal.js';
import { claimOption, positiveSeconds, userIdCheck } from './token-options.js';
import { uuidv7 } from './uuidv7.js';

export { uuidv7 };

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
  /**
   * The shape of the app's user ids, as a synchronous Standard Schema (`z.uuid()`): a token whose
   * `sub` does not match is refused as malformed (401) before any store or user loader sees it,
   * and `issuePair` refuses to sign such an id. Without it, any `sub` of 1 to 255 characters
   * without control characters passes (docs/auth.md, "What a token must hold").
   */
  userId?: StandardSchemaV1<string>;
  /**
   * The `iss` claim: written into every token issued, and required of every token verified
   * (docs/auth.md, "Issuer and audience"). Set it where another service signs with the same
   * secret, so that its tokens are not taken here.
   */
  issuer?: string;
  /**
   * The `aud` claim: written into every token issued; a token verified must name it (as its
   * `aud`, or in its `aud` list). Give each service, or each environment sharing a secret, its own.
   */
  audience?: string;
  /**
   * The longest a login lasts, in seconds, however often it is refreshed: past it a refresh is
   * refused (401) and the user signs in again. Default: none, each refresh renews the login
   * (docs/auth.md, "Lifetimes and claims").
   */
  sessionLifetime?: number;
}

export interface RefreshOptions {
  /**
   * Called with the user id before a new pair is issued; answering false refuses the refresh
   * (401 `INVALID_TOKEN`). Use it so that a deleted or deactivated user cannot refresh.
   */
  allowUser?: (userId: string) => MaybePromise<boolean>;
}

const uuidv7Pattern = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * When a token without `gen` was issued, in ms: 0.1 revoked users by time, and its cut-offs are
 * checked against this until they expire. The UUIDv7 `jti` carries the millisecond; `iat` only
 * the second.
 */
function issuedAtMs(claims: Pick<TokenClaims, 'jti' | 'iat'>): number {
  if (uuidv7Pattern.test(claims.jti)) {
    return Number.parseInt(claims.jti.slice(0, 8) + claims.jti.slice(9, 13), 16);
  }
  return claims.iat * 1000;
}

/**
 * When a token's login began, in ms: its family's id, a UUIDv7 made at the login, says so; a
 * family made elsewhere (a token's own id, or another kind of id) says it no later than the
 * token's own issue.
 */
function loginTime(claims: Pick<TokenClaims, 'fam' | 'iat'>): number {
  return uuidv7Pattern.test(claims.fam)
    ? Number.parseInt(claims.fam.slice(0, 8) + claims.fam.slice(9, 13), 16)
    : claims.iat * 1000;
}

/** What the revocation store checks of a verified token. */
export function revocationCheckOf(claims: TokenClaims): RevocationCheck {
  return {
    jti: claims.jti,
    family: claims.fam,
    userId: claims.sub,
    generation: claims.gen ?? 0,
    ...(claims.gen === undefined ? { legacyIssuedAt: issuedAtMs(claims) } : {}),
  };
}

/**
 * Verifies an access token's signature, algorithm, lifetime and type, and leaves its revocation
 * to the caller: the auth plugin, when its user loader checks revocation in the same statement
 * (`PostgresRevocationStore.userLoader`). Not exported from the package.
 */
export const verifyAccessLeavingRevocation: unique symbol = Symbol('verifyAccessLeavingRevocation');

export interface IssueOptions {
  /**
   * The user's revocation generation, read with {@link TokenService.userGeneration} before the
   * credentials were read (default: read now). A user-wide revocation (a password reset) that
   * lands between that read and the issue then also covers the new pair: read it before the
   * password hash.
   */
  generation?: number;
}

/**
 * How far apart two instances' clocks may be and a revocation or a used refresh token still
 * count on both: marks are kept this long past the token's life (an hour of rows at most).
 */
const skewKept = 60 * 60 * 1000;

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
  /** Revocations made through this service, for the open sockets and streams of this process. */
  readonly revocations = new RevocationSignal();
  readonly #jwt: JwtCodec;
  readonly #toleranceMs: number;
  readonly #isUserId: (sub: string) => boolean;
  readonly #issuer: string | undefined;
  readonly #audience: string | undefined;
  readonly #sessionLifetimeMs: number | undefined;

  constructor(options: TokenServiceOptions) {
    // `{ accessTtl: 60 }` issued 900 s tokens, silently.
    refuseUnknownOptions('TokenService', options, tokenServiceKeys, { required: true });
    this.store = options.store ?? new MemoryRevocationStore();
    this.accessTokenTtl = positiveSeconds(options.accessTokenTtl ?? 900, 'accessTokenTtl');
    this.refreshTokenTtl = positiveSeconds(options.refreshTokenTtl ?? 7 * 24 * 3600, 'refreshTokenTtl');
    const clockTolerance = options.clockTolerance ?? 5;
    // 1e9 accepted a token expired an hour ago: past five minutes a skew is no longer a clock's.
    if (!Number.isInteger(clockTolerance) || clockTolerance < 0 || clockTolerance > 300)
      throw new ProceedConfigError(
        `TokenService: clockTolerance is whole seconds from 0 to 300 (got ${JSON.stringify(clockTolerance)})`,
      );
    this.#toleranceMs = clockTolerance * 1000;
    this.#jwt = createJwtCodec({ secret: options.secret, clockTolerance });
    this.#isUserId = userIdCheck(options.userId);
    this.#issuer = claimOption('issuer', options.issuer);
    this.#audience = claimOption('audience', options.audience);
    this.#sessionLifetimeMs =
      options.sessionLifetime === undefined
        ? undefined
        : positiveSeconds(options.sessionLifetime, 'sessionLifetime') * 1000;
  }

  /**
   * Issues an access and a refresh token for a new login (a new token family).
   *
   * @example
   * return { user, ...(await tokens.issuePair(user.id)) };
   */
  async issuePair(userId: string, options: IssueOptions = {}): Promise<TokenPair> {
    if (typeof userId !== 'string' || userId === '' || !this.#isUserId(userId)) {
      throw new TypeError(
        `issuePair needs a user id of the shape the TokenService's userId option describes`,
      );
    }
    const generation = options.generation ?? (await this.store.userGeneration(userId));
    return this.#pair(userId, uuidv7(), generation);
  }

  /**
   * The user's revocation generation: what a login carries, and what a user-wide revocation moves
   * on. Read it before the password hash when signing in ({@link IssueOptions.generation}).
   *
   * @example
   * const generation = await tokens.userGeneration(user.id);
   */
  userGeneration(userId: string): Promise<number> {
    return this.store.userGeneration(userId);
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
    // The new pair keeps the login's generation: a revocation landing while the checks below run
    // moves the user's on, so it covers the new pair too.
    const claims = await this.verifyRefresh(refreshToken);
    if (options.allowUser !== undefined && !(await options.allowUser(claims.sub))) {
      throw new TokenRevokedError();
    }
    if (this.#sessionLifetimeMs !== undefined && Date.now() >= loginTime(claims) + this.#sessionLifetimeMs)
      throw new TokenRevokedError('the login is older than the session lifetime: sign in again');
    const first = await this.store.markUsed(claims.jti, this.#keptUntil(claims.exp));
    if (!first) {
      await this.store.revokeFamily(claims.fam, this.#familyExpiry());
      this.revocations.revoked(claims.sub);
      throw new TokenRevokedError('refresh token already used');
    }
    return this.#pair(claims.sub, claims.fam, claims.gen ?? 0);
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
      this.store.revokeToken(claims.jti, this.#keptUntil(claims.exp)),
      this.store.revokeFamily(claims.fam, this.#familyExpiry()),
    ]);
    this.revocations.revoked(claims.sub);
  }

  /**
   * Revokes every token the user holds now (after a password reset, say): the user's generation
   * moves on, and every token of an older one is refused on every instance. Logins that begin
   * after it carry the new generation and are unaffected. No clock decides (docs/auth.md).
   *
   * @example
   * await tokens.revokeAllForUser(user.id);
   */
  async revokeAllForUser(userId: string): Promise<void> {
    await this.store.revokeUser(userId);
    this.revocations.revoked(userId);
  }

  [verifyAccessLeavingRevocation](token: string): AccessClaims {
    return this.#verified(token, 'access');
  }

  async #verify<T extends TokenType>(token: string, type: T): Promise<TokenClaims & { type: T }> {
    const claims = this.#verified(token, type);
    if (await this.store.isRevoked(revocationCheckOf(claims))) throw new TokenRevokedError();
    return claims;
  }

  /** Signature, lifetime, type and the shape of every claim, the user id's included. */
  #verified<T extends TokenType>(token: string, type: T): TokenClaims & { type: T } {
    const claims = this.#jwt.verify(token, type) as TokenClaims & { type: T };
    if (!this.#isUserId(claims.sub)) throw new TokenMalformedError();
    if (this.#issuer !== undefined && claims.iss !== this.#issuer)
      throw new InvalidTokenError('jwt issuer invalid');
    if (this.#audience !== undefined && !namesAudience(claims.aud, this.#audience))
      throw new InvalidTokenError('jwt audience invalid');
    return claims;
  }

  /**
   * The first moment (ms since the epoch) a token of this expiry is no longer taken: just past its
   * `exp` and the clock tolerance. What a token opened (a socket, an event stream) ends then, not
   * at `exp`: a request with the same token would still pass until then, so ending sooner only
   * has its client come back with the token, over and over (docs/auth.md).
   */
  acceptedUntil(claims: { readonly exp: number }): number {
    return claims.exp * 1000 + this.#toleranceMs + 1;
  }

  /**
   * How long a mark on a token (used, revoked) is kept: past the token's expiry by the tolerance
   * and by {@link skewKept}, since the instance that prunes it goes by its own clock, and one
   * whose clock lags would still take the token once the mark is gone (docs/auth.md, "Stores").
   */
  #keptUntil(expiresAtSeconds: number): number {
    return expiresAtSeconds * 1000 + this.#toleranceMs + skewKept;
  }

  /** Every token of a family was issued by now, so none outlives now + the refresh lifetime. */
  #familyExpiry(): number {
    return this.#keptUntil(Math.ceil(Date.now() / 1000) + this.refreshTokenTtl);
  }

  #pair(userId: string, family: string, generation: number): TokenPair {
    const now = Date.now();
    const iat = Math.floor(now / 1000);
    const accessToken = this.#jwt.sign(
      this.#claims({
        sub: userId,
        jti: uuidv7(now),
        type: 'access',
        fam: family,
        gen: generation,
        iat,
        exp: iat + this.accessTokenTtl,
      }),
    );
    const refreshToken = this.#jwt.sign(
      this.#claims({
        sub: userId,
        jti: uuidv7(now),
        type: 'refresh',
        fam: family,
        gen: generation,
        iat,
        exp: iat + this.refreshTokenTtl,
      }),
    );
    return { accessToken, refreshToken, tokenType: 'Bearer', expiresIn: this.accessTokenTtl };
  }

  /** A token's claims with the service's issuer and audience, where it has them. */
  #claims(claims: TokenClaims): TokenClaims {
    if (this.#issuer !== undefined) claims.iss = this.#issuer;
    if (this.#audience !== undefined) claims.aud = this.#audience;
    return claims;
  }
}

/** Whether a token's `aud` (one name or a list) names this service's audience. */
function namesAudience(aud: string | readonly string[] | undefined, audience: string): boolean {
  return typeof aud === 'string' ? aud === audience : aud?.includes(audience) === true;
}

const tokenServiceKeys = optionKeys<TokenServiceOptions>()(
  'secret',
  'store',
  'accessTokenTtl',
  'refreshTokenTtl',
  'clockTolerance',
  'userId',
  'issuer',
  'audience',
  'sessionLifetime',
);
