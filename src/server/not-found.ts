/**
 * 404 and 405. Fastify answers an unmatched request through the not-found handler whatever the
 * reason; a second router, filled from every registered route, tells a path that exists with
 * another method (405 + `Allow`) from one that does not (404).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import FindMyWay from 'find-my-way';
import type { ProceedError } from '../core/errors.js';
import { routeMethods, unmatchedProblem } from '../http/not-found.js';

/** Every route of a Fastify instance, by method and path. */
export class MethodIndex {
  readonly #known = FindMyWay();

  /** Starts recording routes; call before any route is added. */
  constructor(server: FastifyInstance) {
    server.addHook('onRoute', (route) => {
      // A catch-all (the preflight route of CORS) is not a path that exists.
      if (route.url === '*') return;
      for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
        if (!this.#known.hasRoute(method as never, route.url))
          this.#known.on(method as never, route.url, () => {});
      }
    });
  }

  /** Whether a route takes this method on this path. */
  allows(method: string, path: string): boolean {
    return this.#known.find(method as 'GET', path) !== null;
  }

  /** The methods a path takes, in a fixed order. */
  methodsOf(path: string): string[] {
    return routeMethods.filter((method) => this.#known.find(method, path) !== null);
  }

  /** The problem for a request no route took: 405 with `Allow` when the path exists, else 404. */
  problemFor(request: FastifyRequest): ProceedError {
    const path = request.url.split('?', 1)[0] ?? '/';
    // A route for this very method exists and sent us here (say, a static file that is missing): 404.
    const ownRoute = this.#known.find(request.method as 'GET', path) !== null;
    return unmatchedProblem(request.method, path, (method) => !ownRoute && this.allows(method, path));
  }
}
