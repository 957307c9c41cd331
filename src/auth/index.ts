/**
 * `proceedjs/auth`: JWT access and refresh tokens (HS256, rotation with reuse detection,
 * revocation stores), scrypt password hashing, guards, the auth plugin and the account
 * procedures (register, login, refresh, logout, me, password change and reset). Rate limits are a
 * step of their own: `rateLimit()` from `proceedjs`.
 * See docs/auth.md.
 */
// The secret policy and AUTH_RATE_LIMIT live in `proceedjs/config` (light to import); here too.
export {
  checkSecret,
  minSecretBytes,
  type ResolveSecretOptions,
  rateLimitFromEnv,
  resolveSecret,
  type WarningLogger,
} from '../config/index.js';
export {
  type AccountLimit,
  type AccountOptions,
  type AccountStore,
  type AccountUser,
  accountProcedures,
  accountRateLimit,
  failedAttemptLimit,
  type PasswordResetOptions,
  type ResetTokenStore,
  resetMailLimit,
} from './accounts.js';
export {
  admin,
  allOf,
  anyOf,
  authenticated,
  hasRole,
  type RoleContext,
} from './guards.js';
export {
  type AccessClaims,
  createJwtCodec,
  InvalidTokenError,
  JwtCodec,
  type JwtCodecOptions,
  type RefreshClaims,
  TokenAlgorithmError,
  type TokenClaims,
  TokenExpiredError,
  TokenMalformedError,
  TokenNotActiveError,
  TokenRevokedError,
  TokenSignatureError,
  type TokenType,
  TokenTypeError,
} from './jwt.js';
export {
  dummyVerify,
  hashPassword,
  needsRehash,
  type ScryptCost,
  verifyPassword,
  verifyPasswordOrDummy,
} from './password.js';
export {
  type AuthContext,
  type AuthPluginOptions,
  type AuthState,
  authDocumentation,
  authPlugin,
  bearerTokenOf,
  type UserLoader,
} from './plugin.js';
export { MemoryRevocationStore, type RevocationCheck, type RevocationStore } from './revocation.js';
export {
  PostgresRevocationStore,
  type PostgresRevocationStoreOptions,
  type SqlClient,
} from './revocation-postgres.js';
export {
  type RedisClient,
  RedisRevocationStore,
  type RedisRevocationStoreOptions,
} from './revocation-redis.js';
export {
  type IssueOptions,
  type RefreshOptions,
  type TokenPair,
  TokenService,
  type TokenServiceOptions,
  uuidv7,
} from './tokens.js';
