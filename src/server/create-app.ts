/**
 * `createApp` as `proceedjs` gives it on Node: the app served by Node's own http module through
 * the pipeline, with Fastify loaded and made its server when the app first asks for `app.server`
 * (docs/deployment.md, "Fastify: the escape hatch"), and `app.inject()` either way. On Bun, Deno
 * and Workers the package resolves to src/server/create-app-fetch.ts instead, which never loads
 * Fastify (docs/deployment.md).
 */
import { createRequire } from 'node:module';
import type * as LightMyRequest from 'light-my-request';
import { App } from './app.js';
import { fastifyAdapter, type NodeAdapters } from './fastify-adapter.js';
import { PipelineOnNode } from './node-http.js';
import type { AppOptions } from './options.js';

const nodeAdapters: NodeAdapters = {
  fastify: fastifyAdapter,
  inject(host, request) {
    // light-my-request (CommonJS) hands a request without a socket to the same writer as a socket's.
    const inject = createRequire(import.meta.url)('light-my-request') as typeof LightMyRequest;
    const pipeline = new PipelineOnNode(
      {
        handle: host.handle,
        lifecycle: host.lifecycle,
        exposeErrors: host.settings.exposeErrors,
        log: host.log,
        sendTimeout: host.settings.timeouts.send,
      },
      'localhost',
    );
    return inject.inject(pipeline.answer, request);
  },
};

/**
 * Creates an app. The type argument is what `context` adds to every request's context.
 *
 * @example
 * const app = createApp<{ db: Db }>({ context: () => ({ db }) }).mount([posts]);
 */
export function createApp<TCtx extends object = object>(options: AppOptions<TCtx> = {}): App<TCtx> {
  return new App(options, nodeAdapters);
}
