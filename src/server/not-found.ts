/**
 * The routes added on `app.server`, by method and path: the app's pipeline answers every other
 * request, and reads this to answer a path of Fastify's with another method 405 + `Allow`, and a
 * preflight for it with its methods (src/http/not-found.ts decides the answers).
 */
import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import type FindMyWayModule from 'find-my-way';
import { maxParamLength } from '../http/url.js';

export class FastifyRoutes {
  // Matched as Fastify's own router matches (src/server/fastify.ts).
  readonly #known = (createRequire(import.meta.url)('find-my-way') as typeof FindMyWayModule)({
    ignoreTrailingSlash: true,
    maxParamLength,
  });
  /** `GET /path` of each, in the order added. */
  readonly lines: string[] = [];

  /** Starts recording routes; call before any route is added. */
  constructor(server: FastifyInstance) {
    server.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) {
        if (method !== 'HEAD') this.lines.push(`${method} ${route.url}`);
        if (!this.#known.hasRoute(method as never, route.url))
          this.#known.on(method as never, route.url, () => {});
      }
    });
  }

  /** Whether any route was added. */
  get any(): boolean {
    return this.lines.length > 0;
  }

  /** Whether a route of Fastify's takes this request (its method on its path). */
  takesRequest(request: IncomingMessage): boolean {
    const url = request.url ?? '/';
    const query = url.indexOf('?');
    return this.takes(request.method ?? 'GET', query === -1 ? url : url.slice(0, query));
  }

  /** Whether a route of Fastify's takes this method on this path. */
  readonly takes = (method: string, path: string): boolean =>
    this.#known.find(method as 'GET', path) !== null;
}
