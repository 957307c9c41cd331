/**
 * `proceedjs/node`: the same names as `proceedjs`, with an app served by Node's own http module
 * instead of Fastify (docs/deployment.md, "Node without Fastify"). Every request goes through the
 * pipeline `app.fetch` uses on every runtime; nothing of Fastify is loaded, and `app.server` and
 * `app.inject` are not there (send a `Request` to `app.fetch` in tests).
 *
 * @module proceed/node
 */
export * from '../public.js';
export { createApp } from '../server/create-app-fetch.js';
