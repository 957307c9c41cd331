/**
 * The documentation plugin (docs/openapi.md): the OpenAPI document as JSON and YAML and
 * Swagger UI, every asset served by the app itself through `app.route()`, so the same on every
 * adapter. The document is generated once, when the app becomes ready, so it sees every mount
 * whatever the order of `mount` and `register`. Its YAML (and the YAML library) and Swagger UI's
 * files are made at the first request for them, which a start should not wait for (docs/openapi.md).
 */
import { NotFoundError, ProceedConfigError } from '../core/errors.js';
import { normalizePrefix } from '../core/naming.js';
import { optionKeys, refuseUnknownOptions } from '../core/options.js';
import type { Collection } from '../core/procedure.js';
import type { AppRouteMethod, RouteAnswer, RouteHandler } from '../http/app-routes.js';
import { refusedOnWorkers, runtime } from '../http/runtime.js';
import { asyncApiOf } from './asyncapi.js';
import {
  checkDocumentOptions,
  generateOpenApi,
  type OpenApiDocumentOptions,
  type OpenApiRouteSource,
} from './generate.js';
import {
  docsAsset,
  type SwaggerUiAssets,
  swaggerUiAssets,
  swaggerUiDirectory,
  swaggerUiFileNames,
} from './swagger-ui.js';
import type { OpenApiDocument } from './types.js';

/**
 * The options of {@link docsPlugin} (the seed's names).
 *
 * @example
 * const options: DocsPluginOptions = {
 *   routePrefix: '/api/docs',
 *   collections: [posts, users],
 *   openapi: { info: { title: 'Blog API', version: '1.0.0' } },
 * };
 */
export interface DocsPluginOptions {
  /** Where the UI lives; the document is at `{routePrefix}/json` and `{routePrefix}/yaml`. Default `/api/docs`. */
  routePrefix?: string;
  /** Document only these collections (each must be mounted). Default: every mounted collection. */
  collections?: readonly Collection[];
  /** `info` (title, version, description) and `servers` of the document. */
  openapi: OpenApiDocumentOptions;
}

/** What the plugin needs of an app: its route table, a route of its own, a step at start-up. An `App` is one. */
export interface DocsHost extends OpenApiRouteSource {
  route(method: AppRouteMethod, path: string, handler: RouteHandler): unknown;
  onReady(task: () => Promise<void> | void): unknown;
}

/**
 * Serves the interactive documentation at `routePrefix` (Swagger UI, no CDN: its scripts and
 * styles come from this server), the document at `{routePrefix}/json` and `{routePrefix}/yaml`.
 * The UI's "Try it out" calls this same server; its Authorize button takes a bearer token.
 *
 * @example
 * const app = createApp().mount([posts, users]);
 * await app.register(docsPlugin, {
 *   routePrefix: '/api/docs',
 *   openapi: { info: { title: 'Blog API', version: '1.0.0' } },
 * });
 */
export async function docsPlugin(app: DocsHost, options: DocsPluginOptions): Promise<void> {
  if (!runtime.spoolsToDisk)
    throw refusedOnWorkers(
      'docsPlugin',
      "serves the docs UI from Swagger UI's files on disk (serve the document from `proceed openapi` as a static file instead)",
    );
  refuseUnknownOptions(
    'docsPlugin',
    options,
    optionKeys<DocsPluginOptions>()('routePrefix', 'collections', 'openapi'),
    { required: true },
  );
  if (
    typeof options.openapi === 'object' &&
    options.openapi !== null &&
    'rateLimitedRoutes' in options.openapi
  ) {
    throw new ProceedConfigError(
      'docsPlugin: openapi.rateLimitedRoutes is gone; a rateLimit() step on a procedure documents its 429 itself',
    );
  }
  refuseUnknownOptions(
    'docsPlugin openapi',
    options.openapi,
    optionKeys<OpenApiDocumentOptions>()('info', 'servers', 'tags'),
    { required: true },
  );
  const info = options.openapi.info;
  if (typeof info?.title !== 'string' || typeof info.version !== 'string') {
    throw new TypeError('docsPlugin: openapi.info.title and openapi.info.version must be strings');
  }
  // At registration, not when the document is first made.
  checkDocumentOptions(options.openapi);
  const routePrefix = normalizePrefix(options.routePrefix ?? '/api/docs');
  if (routePrefix === '') throw new ProceedConfigError('docsPlugin: routePrefix cannot be the root "/"');

  const title = `${info.title}: API documentation`;
  let served:
    | {
        json: RouteAnswer;
        yaml: () => Promise<RouteAnswer>;
        /** Swagger UI's files, read at the first request for the page or one of them. */
        assets: () => Promise<SwaggerUiAssets>;
        /** Present when the app has WebSocket procedures (docs/sockets.md, "AsyncAPI"). */
        asyncapi?: { json: RouteAnswer; yaml: () => Promise<RouteAnswer> };
      }
    | undefined;
  app.onReady(async () => {
    const source = options.collections === undefined ? { app } : { app, collections: options.collections };
    let document: OpenApiDocument;
    try {
      document = generateOpenApi({ ...options.openapi, ...source });
    } catch (error) {
      if (!(error instanceof ProceedConfigError)) throw error;
      throw new ProceedConfigError(`docsPlugin: ${error.message}`, { cause: error });
    }
    const asyncapi = asyncApiOf(document);
    // Found now, so that a package without them stops the start; read at the first request.
    const directory = await swaggerUiDirectory();
    served = {
      json: docsAsset('application/json; charset=utf-8', JSON.stringify(document)),
      yaml: yamlAsset(document),
      assets: once(() => swaggerUiAssets(title, routePrefix, directory)),
      ...(asyncapi === undefined
        ? {}
        : {
            asyncapi: {
              json: docsAsset('application/json; charset=utf-8', JSON.stringify(asyncapi)),
              yaml: yamlAsset(asyncapi),
            },
          }),
    };
  });
  const ready = () => {
    if (served === undefined) throw new Error('docsPlugin: the document is built when the app is ready');
    return served;
  };
  // Every file carries its tag (`no-cache` revalidates): a tag the client holds is the
  // pipeline's 304, as for any route (docs/routes.md).
  // With a trailing slash the page's URLs are relative, as a browser resolves them from there.
  app.route('GET', routePrefix, (request) =>
    ready()
      .assets()
      .then((assets) => (request.path.endsWith('/') ? assets.relativePage : assets.page)),
  );
  app.route('GET', `${routePrefix}/json`, () => ready().json);
  app.route('GET', `${routePrefix}/yaml`, () => ready().yaml());
  // The AsyncAPI document beside it, for an app with WebSocket procedures (a 404 problem otherwise).
  const asyncApi =
    (format: 'json' | 'yaml'): RouteHandler =>
    () => {
      const files = ready();
      if (files.asyncapi === undefined)
        throw new NotFoundError('This app has no WebSocket procedures: there is no AsyncAPI document');
      const { json, yaml } = files.asyncapi;
      return format === 'json' ? json : yaml();
    };
  app.route('GET', `${routePrefix}/asyncapi/json`, asyncApi('json'));
  app.route('GET', `${routePrefix}/asyncapi/yaml`, asyncApi('yaml'));
  for (const name of swaggerUiFileNames)
    app.route('GET', `${routePrefix}/static/${name}`, () =>
      ready()
        .assets()
        .then((assets) => assets.files.get(name) as RouteAnswer),
    );
}

/**
 * What `make` gives, made at the first call and kept; calls meanwhile share the one making, and
 * a failed making is tried again at the next call rather than failing every call after it.
 */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make().catch((error: unknown) => {
      made = undefined;
      throw error;
    });
    return made;
  };
}

/**
 * A document's YAML answer, written at the first request for it: the `yaml` library and the
 * writing (about 100 ms for the blog's document) are left out of the app's start.
 */
const yamlAsset = (document: object): (() => Promise<RouteAnswer>) =>
  once(async () => {
    const { stringify } = await import('yaml');
    return docsAsset(
      'application/x-yaml; charset=utf-8',
      stringify(document, { aliasDuplicateObjects: false }),
    );
  });
