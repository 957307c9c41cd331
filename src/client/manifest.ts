/**
 * The route manifest: where each procedure lives, as plain JSON. Conventional names need no
 * manifest (the client derives their routes with the same naming module as the server);
 * `.rest()` overrides do, because an override lives only in server code.
 */
import { ProceedConfigError } from '../core/errors.js';
import { type HttpMethod, type InputMode, normalizePrefix, resolveRoute } from '../core/naming.js';
import type { Collection } from '../core/procedure.js';
import type { ApiShape } from './types.js';

/** One procedure's route; `path` is relative to the mount prefix, e.g. `/posts/:id/publish`. */
export interface ManifestRoute {
  method: HttpMethod;
  path: string;
  inputMode: InputMode;
  /** Present when the handler chooses among several statuses: the client answers `{ status, data }`. */
  statuses?: readonly number[];
  /** Present when the procedure answers a file (`.output(download())`): the client answers a `Blob`. */
  download?: true;
  /** Present when the procedure answers server-sent events: the client answers an async iterable. */
  events?: true;
  /** Present when the procedure opens a WebSocket: the client answers a typed socket (docs/sockets.md). */
  socket?: true;
  /** Present when the procedure takes files: a form (`multipart/form-data`) or the raw body (docs/uploads.md). */
  upload?: 'form' | 'raw';
}

/** Collection name → procedure name → route. JSON-serializable. */
export type RouteManifest = Record<string, Record<string, ManifestRoute>>;

/** The parts of a mounted route the manifest needs; an App's `routes` has them. */
export interface MountedRouteLike {
  readonly collection: string;
  readonly name: string;
  readonly method: HttpMethod;
  readonly path: string;
  readonly prefix: string;
  readonly inputMode: InputMode;
  readonly successStatuses?: readonly number[];
  readonly definition?: { readonly output?: { readonly kind: string } | undefined };
  /** How the route takes files, when it does. */
  readonly upload?: 'form' | 'raw' | undefined;
}

/** Only a route that takes files says so. */
const uploadOf = (upload: 'form' | 'raw' | undefined): { upload?: 'form' | 'raw' } =>
  upload === undefined ? {} : { upload };

/** Only an answer that is not JSON says what it is. */
const downloadOf = (
  output: { readonly kind: string } | undefined,
): { download?: true; events?: true; socket?: true } =>
  output?.kind === 'download'
    ? { download: true }
    : output?.kind === 'events'
      ? { events: true }
      : output?.kind === 'socket'
        ? { socket: true }
        : {};

export interface RouteManifestOptions {
  /**
   * With an app: keep only the routes mounted under this prefix. Needed when the app mounts
   * the same collection name under two prefixes.
   */
  prefix?: string;
}

function isApp(source: ApiShape | { readonly routes: readonly MountedRouteLike[] }): source is {
  readonly routes: readonly MountedRouteLike[];
} {
  return !Array.isArray(source) && Array.isArray((source as { routes?: unknown }).routes);
}

/** Only a route with a choice of statuses says so: the others answer their data alone. */
function statusesOf(statuses: readonly number[] | undefined): { statuses?: readonly number[] } {
  return statuses !== undefined && statuses.length > 1 ? { statuses: [...statuses] } : {};
}

function add(manifest: RouteManifest, collection: string, name: string, route: ManifestRoute): void {
  const procedures = manifest[collection] ?? {};
  manifest[collection] = procedures;
  if (procedures[name] !== undefined) {
    throw new Error(
      `Procedure "${collection}.${name}" appears twice (two mounts of one collection?); build the manifest of one prefix with { prefix }`,
    );
  }
  procedures[name] = route;
}

/**
 * Builds the route manifest of some collections (or of a whole app) on the server side, with the
 * framework's own naming rules. Write it to a JSON file the browser bundle imports, or let
 * `proceed manifest` do that.
 *
 * @example
 * // server side, e.g. a build script
 * writeFileSync('routes.json', JSON.stringify(routeManifest([posts, users])));
 * // client side
 * const client = createClient<typeof api>({ baseUrl, routes });
 */
export function routeManifest(
  source: ApiShape | { readonly routes: readonly MountedRouteLike[] },
  options: RouteManifestOptions = {},
): RouteManifest {
  const manifest: RouteManifest = {};
  if (isApp(source)) {
    const only = options.prefix === undefined ? undefined : normalizePrefix(options.prefix);
    // A prefix no mount has gave `{}`, and a client whose every call went to the default path.
    const prefixes = [...new Set(source.routes.map((route) => route.prefix))];
    if (only !== undefined && !prefixes.includes(only))
      throw new ProceedConfigError(
        `routeManifest: no collection is mounted at ${JSON.stringify(only)} (prefixes: ${prefixes.map((each) => JSON.stringify(each)).join(', ')})`,
      );
    for (const route of source.routes) {
      if (only !== undefined && route.prefix !== only) continue;
      add(manifest, route.collection, route.name, {
        method: route.method,
        path: route.path.slice(route.prefix.length) || '/',
        inputMode: route.inputMode,
        ...statusesOf(route.successStatuses),
        ...downloadOf(route.definition?.output),
        ...uploadOf(route.upload),
      });
    }
    return manifest;
  }
  // Collections carry no prefix: a client is given its own (createClient({ prefix })).
  if (options.prefix !== undefined)
    throw new ProceedConfigError(
      'routeManifest: prefix selects among the mounts of an app; collections have none (pass the app, or give createClient the prefix)',
    );
  const collections: readonly Collection[] = Array.isArray(source)
    ? (source as readonly Collection[])
    : Object.values(source as Readonly<Record<string, Collection>>);
  for (const collection of collections) {
    for (const [name, procedure] of Object.entries(collection.procedures)) {
      const definition = procedure['~proceed'];
      const { method, path, inputMode, successStatuses } = resolveRoute(
        collection.name,
        name,
        definition.kind,
        definition.rest,
      );
      add(manifest, collection.name, name, {
        method,
        path,
        inputMode,
        ...statusesOf(successStatuses),
        ...downloadOf(definition.output),
        // As a mounted route says (src/core/routes.ts): a form route sends a form without a file too.
        ...uploadOf(definition.uploadMode(inputMode)),
      });
    }
  }
  return manifest;
}
