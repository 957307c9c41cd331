/**
 * `proceedjs` on Bun, Deno and Cloudflare Workers (the package's `bun`, `deno` and `workerd`
 * conditions): the same names as on Node, with an app that serves through `app.fetch` and never
 * loads Fastify (docs/deployment.md, "Fetch runtimes").
 *
 * @module proceed
 */
export * from './public.js';
export { createApp } from './server/create-app-fetch.js';
