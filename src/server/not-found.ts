/**
 * The routes added on `app.server`, by method and path: the app's pipeline answers every other
 * request, and reads this to answer a path of Fastify's with another method 405 + `Allow`, and a
 * preflight for it with its methods (src/http/not-found.ts decides the answers).
 */
import type { FastifyInstance } from 'fastify';
import FindMyWay from 'find-my-way';
import { pipelineRoute } from './pipeline-route.js';

export class FastifyRoutes {
  readonly #known = FindMyWay();
  /** `GET /path` of each, in the order added. */
  readonly lines: string[] = [];

  /** Starts recording routes; call before any route is added. */
  constructor(server: FastifyInstance) {
    server.addHook('onRoute', (route) => {
      if ((route.config as { [pipelineRoute]?: true } | undefined)?.[pipelineRoute] === true) return;
      for (const method of [route.method].flat()) {
        if (method !== 'HEAD') this.lines.push(`${method} ${route.url}`);
        if (!this.#known.hasRoute(method as never, route.url))
          this.#known.on(method as never, route.url, () => {});
      }
    });
  }

  /** Whether a route of Fastify's takes this method on this path. */
  readonly takes = (method: string, path: string): boolean =>
    this.#known.find(method as 'GET', path) !== null;
}
