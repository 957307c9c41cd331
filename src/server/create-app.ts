/**
 * `createApp` as `proceedjs` gives it on Node: the app with its Fastify adapter (`app.listen`,
 * `app.inject`, `app.server`). On Bun, Deno and Workers the package resolves to
 * src/server/create-app-fetch.ts instead, which never loads Fastify (docs/deployment.md).
 */
import { App } from './app.js';
import { fastifyAdapter } from './fastify-adapter.js';
import type { AppOptions } from './options.js';

/**
 * Creates an app. The type argument is what `context` adds to every request's context.
 *
 * @example
 * const app = createApp<{ db: Db }>({ context: () => ({ db }) }).mount([posts]);
 */
export function createApp<TCtx extends object = object>(options: AppOptions<TCtx> = {}): App<TCtx> {
  return new App(options, fastifyAdapter);
}
