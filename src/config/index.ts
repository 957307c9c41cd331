/**
 * `proceedjs/config`: configuration checks that load nothing heavy (no Fastify, no Zod), so an
 * entry can read and check its settings before the app's modules load, and a refusal (no
 * JWT_SECRET in production) comes at once. See docs/deployment.md, "Fail fast".
 *
 * @module proceedjs/config
 */
export { ProceedConfigError } from '../core/errors.js';
export { type CorsOptions, checkCorsOptions, corsFromEnv } from './cors.js';
export { rateLimitFromEnv } from './env.js';
export {
  checkSecret,
  minSecretBytes,
  type ResolveSecretOptions,
  resolveSecret,
  type WarningLogger,
} from './secret.js';
export {
  checkServerSettings,
  defaultTimeouts,
  type ServerSettings,
  type ServerTimeouts,
  serverSettingsFromEnv,
} from './server.js';
