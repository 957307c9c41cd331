/**
 * The app's route table: every mount, every planned route, the health routes and what plugins
 * add to the routes' documentation. The server registers from it, the OpenAPI generator, CLI
 * and start-up log read it: one source of truth, transport-neutral.
 */
import { ProceedConfigError } from './errors.js';
import { normalizePrefix } from './naming.js';
import type { Collection } from './procedure.js';
import { planRoutes, type RouteEntry, routeKey, type TakenRoute } from './routes.js';
import type { RouteDocumentation } from './steps.js';

/** A planned route with the prefix it was mounted under. */
export interface MountedRoute extends RouteEntry {
  readonly prefix: string;
}

/** One `app.mount()` call: its prefix and collections. */
export interface Mount {
  readonly prefix: string;
  readonly collections: readonly Collection[];
}

/**
 * What a plugin adds to the documentation of procedure routes: the same for every route, or
 * chosen per route (a function of the planned route, never of a route string).
 */
export type DocumentationSource =
  | RouteDocumentation
  | ((route: MountedRoute) => RouteDocumentation | undefined);

/** The app's CORS policy as its documentation declares it (docs/cors.md). */
export interface CorsFacts {
  /** The origins answered with `Access-Control-Allow-Origin`, or `'*'` for any. */
  readonly origins: readonly string[] | '*';
  /** Whether answers say `Access-Control-Allow-Credentials: true`. */
  readonly credentials: boolean;
}

/** Routes mounted so far, in order, with the facts plugins added about them. */
/** The health routes of a prefix: readiness, then liveness (docs/deployment.md, "Health probes"). */
export function healthPaths(prefix: string): [readiness: string, liveness: string] {
  return [`${prefix}/health`, `${prefix}/health/live`];
}

/** Routes planned by {@link RouteTable.plan}, not yet in the table. */
export interface MountPlan {
  readonly routes: MountedRoute[];
  /** Whether the prefix's health route is new. */
  readonly newHealth: boolean;
  /** Adds the routes to the table. */
  commit(): void;
}

export class RouteTable {
  readonly #routes: MountedRoute[] = [];
  readonly #mounts: Mount[] = [];
  readonly #healthPrefixes: string[] = [];
  readonly #taken = new Map<string, TakenRoute>();
  readonly #sources: DocumentationSource[] = [];
  #cors: CorsFacts | undefined;
  #generation = 0;

  /** Every procedure route, in mount order. */
  get routes(): readonly MountedRoute[] {
    return this.#routes;
  }

  /** Every mount, in order. */
  get mounts(): readonly Mount[] {
    return this.#mounts;
  }

  /** The prefixes with a health route (`GET {prefix}/health`), one per distinct mount prefix. */
  get healthPrefixes(): readonly string[] {
    return this.#healthPrefixes;
  }

  /**
   * Plans collections under a prefix and adds them. Throws {@link ProceedConfigError} naming the
   * procedure for unroutable names and collisions (with each other, earlier mounts and the
   * health route). Returns the new routes, and whether the prefix's health route is new.
   */
  mount(collections: readonly Collection[], prefix: string): { routes: MountedRoute[]; newHealth: boolean } {
    const plan = this.plan(collections, prefix);
    plan.commit();
    return plan;
  }

  /**
   * Plans collections under a prefix without adding them: `commit()` adds them, so that an
   * adapter can prepare everything a route needs (and fail) before the table changes. Throws
   * like {@link RouteTable.mount}. A plan is stale once another mount is committed.
   */
  plan(collections: readonly Collection[], prefix: string): MountPlan {
    const base = normalizePrefix(prefix);
    const newHealth = !this.#healthPrefixes.includes(base);
    for (const path of newHealth ? healthPaths(base) : []) {
      const earlier = this.#taken.get(routeKey('GET', path));
      if (earlier !== undefined)
        throw new ProceedConfigError(`Procedure "${earlier.owner}" takes GET ${path}, a health route`);
    }
    const taken = new Map(this.#taken);
    const planned = planRoutes(collections, base, taken).map((entry) => ({ ...entry, prefix: base }));
    const healthKeys = new Set(
      [...this.#healthPrefixes, base].flatMap((each) =>
        healthPaths(each).map((path) => routeKey('GET', path)),
      ),
    );
    for (const route of planned) {
      if (healthKeys.has(routeKey(route.method, route.path)))
        throw new ProceedConfigError(
          `Procedure "${route.collection}.${route.name}" takes GET ${route.path}, a health route`,
        );
    }
    const generation = this.#generation;
    return {
      routes: planned,
      newHealth,
      commit: () => {
        if (generation !== this.#generation)
          throw new ProceedConfigError('A route plan was committed after another mount');
        this.#generation++;
        for (const [key, owner] of taken) this.#taken.set(key, owner);
        if (newHealth) this.#healthPrefixes.push(base);
        this.#mounts.push({ prefix: base, collections });
        this.#routes.push(...planned);
      },
    };
  }

  /** Adds documentation to every procedure route (or, with a function, to the routes it picks). */
  document(source: DocumentationSource): void {
    if (typeof source !== 'function' && (typeof source !== 'object' || source === null))
      throw new ProceedConfigError('document() takes route documentation or a function of the route');
    this.#sources.push(source);
  }

  /** The CORS policy every answer of the app follows; undefined when CORS is off. */
  get cors(): CorsFacts | undefined {
    return this.#cors;
  }

  /** Records the app's CORS policy, so that the document declares its headers. */
  documentCors(facts: CorsFacts): void {
    this.#cors = Object.freeze({
      origins: facts.origins === '*' ? '*' : Object.freeze([...facts.origins]),
      credentials: facts.credentials,
    });
  }

  /** What plugins added to one route's documentation. */
  documentationOf(route: MountedRoute): RouteDocumentation[] {
    const found: RouteDocumentation[] = [];
    for (const source of this.#sources) {
      const documentation = typeof source === 'function' ? source(route) : source;
      if (documentation !== undefined) found.push(documentation);
    }
    return found;
  }

  /** One line per route, procedures then health checks: `GET /api/posts/:id`. */
  lines(): string[] {
    return [
      ...this.#routes.map((route) => `${route.method} ${route.path}`),
      ...this.#healthPrefixes.flatMap((prefix) => healthPaths(prefix).map((path) => `GET ${path}`)),
    ];
  }
}
