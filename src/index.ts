/**
 * Proceed: named procedures become a clean, documented, secure REST API. This is `proceedjs` on
 * Node; Bun, Deno and Workers resolve the package to src/index-fetch.ts, the same names with an
 * app that never loads Fastify (docs/deployment.md, "Fetch runtimes").
 *
 * Subpath exports: `proceedjs/resource` (views), `proceedjs/auth`, `proceedjs/pagination`,
 * `proceedjs/openapi`, `proceedjs/client`, `proceedjs/idempotency`, `proceedjs/metrics`,
 * `proceedjs/config` (settings checks that load nothing heavy).
 *
 * @module proceed
 */
export * from './public.js';
export { createApp } from './server/create-app.js';
