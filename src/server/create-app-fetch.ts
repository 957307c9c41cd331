/**
 * `createApp` as `proceedjs` gives it on Bun, Deno and Cloudflare Workers (the package's `bun`,
 * `deno` and `workerd` conditions): the app without the Fastify adapter, serving through
 * `app.fetch` (and `app.listen` with the runtime's own server on Bun and Deno). Nothing of
 * Fastify is loaded, or bundled into a Worker (docs/deployment.md, "Fetch runtimes").
 */
import { App } from './app.js';
import type { AppOptions } from './options.js';

/**
 * Creates an app. The type argument is what `context` adds to every request's context.
 *
 * @example
 * const app = createApp<{ db: Db }>({ context: () => ({ db }) }).mount([posts]);
 */
export function createApp<TCtx extends object = object>(options: AppOptions<TCtx> = {}): App<TCtx> {
  return new App(options);
}
