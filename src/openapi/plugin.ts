/**
 * The documentation plugin (docs/openapi.md): the OpenAPI document as JSON and YAML and
 * Swagger UI, every asset served by the app itself. The document is generated once, when the
 * app becomes ready, so it sees every mount whatever the order of `mount` and `register`.
 */
import swaggerUi, { type FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { stringify } from 'yaml';
import { ProceedConfigError } from '../core/errors.js';
import { normalizePrefix } from '../core/naming.js';
import { optionKeys, refuseUnknownOptions } from '../core/options.js';
import type { Collection } from '../core/procedure.js';
import { refusedOnWorkers, runtime } from '../http/runtime.js';
import { generateOpenApi, type OpenApiDocumentOptions, type OpenApiRouteSource } from './generate.js';
import {
  docsContentSecurityPolicy,
  docsFavicon,
  docsThemeCss,
  proceedSwaggerUiPlugin,
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

interface Specification {
  document: OpenApiDocument;
  yaml: string;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** What the plugin needs of an app: its Fastify instance and its route table. An `App` is one. */
export interface DocsHost extends OpenApiRouteSource {
  readonly server: FastifyInstance;
}

/**
 * Stands in for `@fastify/swagger`, which `@fastify/swagger-ui` declares as a dependency and
 * asks for the document through `fastify.swagger()`. Proceed writes its own document, so the
 * stand-in only hands it over. The symbols are Fastify's documented plugin metadata (what
 * `fastify-plugin` sets): no encapsulation, and the name the UI plugin checks for.
 */
const specificationProvider = Object.assign(
  async (instance: FastifyInstance, options: { read: () => Specification }) => {
    instance.decorate('swagger', (request?: { yaml?: boolean }) =>
      request?.yaml === true ? options.read().yaml : options.read().document,
    );
  },
  {
    [Symbol.for('skip-override')]: true,
    [Symbol.for('fastify.display-name')]: '@fastify/swagger',
    [Symbol.for('plugin-meta')]: { name: '@fastify/swagger' },
  },
);

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
  if (!runtime.runsFastify)
    throw refusedOnWorkers(
      'docsPlugin',
      "serves the docs UI from the app's Fastify server (serve the document from `proceed openapi` as a static file instead)",
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
  const routePrefix = normalizePrefix(options.routePrefix ?? '/api/docs');
  if (routePrefix === '') throw new ProceedConfigError('docsPlugin: routePrefix cannot be the root "/"');

  let specification: Specification | undefined;
  const read = (): Specification => {
    if (specification === undefined)
      throw new Error('docsPlugin: the document is built when the app is ready');
    return specification;
  };

  app.server.addHook('onReady', async () => {
    const source = options.collections === undefined ? { app } : { app, collections: options.collections };
    let document: OpenApiDocument;
    try {
      document = generateOpenApi({ ...options.openapi, ...source });
    } catch (error) {
      if (!(error instanceof ProceedConfigError)) throw error;
      throw new ProceedConfigError(`docsPlugin: ${error.message}`, { cause: error });
    }
    specification = { document, yaml: stringify(document, { aliasDuplicateObjects: false }) };
  });

  app.server.register(async (instance) => {
    await instance.register(specificationProvider, { read });
    await instance.register(swaggerUi, {
      routePrefix,
      theme: {
        title: escapeHtml(`${info.title}: API documentation`),
        css: [{ filename: 'proceed.css', content: docsThemeCss }],
        favicon: [docsFavicon],
      },
      // Left undefined, @fastify/swagger-ui swaps the Fastify logo into the top bar, which shows the
      // API's title instead; `null`, which its types leave out, turns the swap off.
      ...({ logo: null } as unknown as Pick<FastifySwaggerUiOptions, 'logo'>),
      uiConfig: {
        deepLinking: true,
        displayOperationId: true,
        displayRequestDuration: true,
        // Tokens stay in the page's memory: kept in localStorage, any script on the origin could read them.
        persistAuthorization: false,
        docExpansion: 'list',
        // The validator badge would send the document's URL to validator.swagger.io.
        validatorUrl: null,
        plugins: [proceedSwaggerUiPlugin],
      },
      staticCSP: docsContentSecurityPolicy,
    });
  });
}
