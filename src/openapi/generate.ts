/**
 * Builds the OpenAPI 3.1 document of an app from its route table. Routes come from the core's
 * planner (which owns the naming rules), schemas from the core's JSON Schema converter; this
 * module selects the routes and assembles the document, each operation made in
 * src/openapi/operations.ts (its parameters and body: src/openapi/parameters.ts).
 */

import type { CorsOptions } from '../config/cors.js';
import { errorStatus, ProceedConfigError } from '../core/errors.js';
import { type HttpMethod, pathTemplate } from '../core/naming.js';
import { refuseUnknownOptions } from '../core/options.js';
import type { Collection } from '../core/procedure.js';
import { type DocumentationSource, healthPaths, type MountedRoute, RouteTable } from '../core/route-table.js';
import { DocumentBuilder, healthTag } from './operations.js';
import { problemSchemaWith } from './problems.js';
import { problemComponents } from './response-headers.js';
import type {
  OpenApiDocument,
  OpenApiInfo,
  OpenApiMethod,
  OpenApiOperation,
  OpenApiSecurityScheme,
  OpenApiServer,
  OpenApiTag,
} from './types.js';

/**
 * Collections mounted under one prefix.
 *
 * @example
 * const mount: OpenApiMount = { prefix: '/api', collections: [posts, users] };
 */
export interface OpenApiMount {
  prefix: string;
  collections: readonly Collection[];
}

/**
 * What the generator reads from an app: its route table (routes, mounts, health routes, and what
 * plugins added to the routes' documentation). An `App` is one.
 *
 * @example
 * const source: OpenApiRouteSource = createApp().mount([posts]);
 */
export interface OpenApiRouteSource {
  readonly routeTable: RouteTable;
}

/**
 * Everything but the source of the routes: what `docsPlugin` takes as `openapi`.
 *
 * @example
 * const options: OpenApiDocumentOptions = { info: { title: 'Blog API', version: '1.0.0' } };
 */
export interface OpenApiDocumentOptions {
  info: OpenApiInfo;
  /**
   * Where the API is served. Default `[{ url: '/' }]`: the origin the document was loaded from
   * (what OpenAPI assumes anyway, written out because linters such as Redocly require it).
   */
  servers?: readonly OpenApiServer[];
  /**
   * A description per tag (each collection is a tag, named after it), shown above its
   * operations by documentation UIs. The health routes' tag has one already.
   */
  tags?: Readonly<Record<string, string>>;
}

const infoKeys = ['title', 'version', 'summary', 'description', 'termsOfService', 'contact', 'license'];
const serverKeys = ['url', 'description', 'variables'];

/**
 * `info` and `servers` as OpenAPI 3.1 has them (extensions, `x-…`, allowed): they were copied
 * as given, so that `info.descripton` was published and `servers: [{ uri }]` made a document
 * with a server and no URL, which validators refuse.
 */
export function checkDocumentOptions({ info, servers }: OpenApiDocumentOptions): void {
  const known = (where: string, value: unknown, keys: readonly string[]) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new ProceedConfigError(`openapi ${where} must be an object, not ${JSON.stringify(value)}`);
    refuseUnknownOptions(
      `openapi ${where}`,
      Object.fromEntries(Object.entries(value).filter(([key]) => !key.startsWith('x-'))),
      keys,
    );
  };
  known('info', info, infoKeys);
  if (typeof info.title !== 'string' || typeof info.version !== 'string')
    throw new ProceedConfigError('openapi info.title and info.version must be strings');
  if (servers === undefined) return;
  if (!Array.isArray(servers))
    throw new ProceedConfigError(`openapi servers must be a list of { url }, not ${JSON.stringify(servers)}`);
  for (const server of servers) {
    known('servers entry', server, serverKeys);
    if (typeof server.url !== 'string' || server.url === '')
      throw new ProceedConfigError(`openapi servers: each entry has a url, not ${JSON.stringify(server)}`);
  }
}

/**
 * The options of {@link generateOpenApi}: the document options and either `app` or `mounts`.
 *
 * @example
 * const options: OpenApiOptions = { app, info: { title: 'Blog API', version: '1.0.0' } };
 */
export type OpenApiOptions = OpenApiDocumentOptions &
  (
    | {
        /** Collections per prefix, planned here. */
        mounts: readonly OpenApiMount[];
        /**
         * What plugins would add to the routes' documentation on an app (`app.document(…)`), e.g.
         * `authDocumentation` from `proceedjs/auth`. An app-less document cannot learn it otherwise.
         */
        documentation?: readonly DocumentationSource[];
        /** The CORS policy the app would have (`createApp({ cors })`): its headers are declared. */
        cors?: CorsOptions;
        app?: never;
      }
    | {
        /** A created app (or anything with its route table). */ app: OpenApiRouteSource;
        /** Document only these collections; each must be mounted. Default: all of them. */
        collections?: readonly Collection[];
        mounts?: never;
        documentation?: never;
        cors?: never;
      }
  );

const healthTagDescription = 'Readiness and liveness probes for load balancers and orchestrators';

const isBuiltIn = (code: string) => Object.hasOwn(errorStatus, code);

function lowerMethod(method: HttpMethod): OpenApiMethod {
  return method.toLowerCase() as OpenApiMethod;
}

function dotted(prefix: string): string {
  return prefix.slice(1).replaceAll('/', '.');
}

/**
 * Gives every operation a unique id: the procedure name when no other operation shares it,
 * else `collection.name`, else `prefix.collection.name` (the same collection under two prefixes).
 */
function uniqueIds(candidates: readonly string[][]): string[] {
  const level = candidates.map(() => 0);
  const chosen = candidates.map((list) => list[0] ?? 'operation');
  for (let round = 0; round < 4; round++) {
    const counts = new Map<string, number>();
    for (const id of chosen) counts.set(id, (counts.get(id) ?? 0) + 1);
    let clashed = false;
    chosen.forEach((id, index) => {
      if ((counts.get(id) ?? 0) < 2) return;
      clashed = true;
      const list = candidates[index] ?? [];
      const next = (level[index] ?? 0) + 1;
      level[index] = next;
      chosen[index] = list[next] ?? `${list[list.length - 1] ?? 'operation'}.${index + 1}`;
    });
    if (!clashed) break;
  }
  return chosen;
}

interface Selection {
  table: RouteTable;
  routes: readonly MountedRoute[];
  prefixes: readonly string[];
}

function select(options: OpenApiOptions): Selection {
  if (options.app === undefined) {
    const table = new RouteTable();
    for (const mount of options.mounts) table.mount(mount.collections, mount.prefix);
    for (const source of options.documentation ?? []) table.document(source);
    if (options.cors !== undefined)
      table.documentCors({ origins: options.cors.origins, credentials: options.cors.credentials === true });
    return { table, routes: table.routes, prefixes: table.healthPrefixes };
  }
  const table = options.app.routeTable;
  const wanted = options.collections;
  if (wanted === undefined) return { table, routes: table.routes, prefixes: table.healthPrefixes };
  for (const collection of wanted) {
    if (!table.mounts.some((mount) => mount.collections.includes(collection))) {
      throw new ProceedConfigError(
        `collection "${collection.name}" is not mounted; mount it with app.mount([...]) before the app starts`,
      );
    }
  }
  const mounts = table.mounts.filter((mount) => mount.collections.some((each) => wanted.includes(each)));
  const collectionsOf = (prefix: string) =>
    mounts.filter((mount) => mount.prefix === prefix).flatMap((mount) => mount.collections);
  return {
    table,
    routes: table.routes.filter((route) =>
      collectionsOf(route.prefix).some(
        (collection) => wanted.includes(collection) && collection.name === route.collection,
      ),
    ),
    prefixes: [...new Set(mounts.map((mount) => mount.prefix))],
  };
}

const sameOrigin: OpenApiServer = { url: '/', description: 'The server this document was loaded from' };

/**
 * Generates the OpenAPI 3.1.0 document of mounted collections: one operation per procedure
 * (`operationId` = procedure name, tag = collection), parameters and bodies from the input
 * schemas, success responses from the declared outputs (views become `components.schemas`), the
 * problem responses each route can produce, `bearerAuth` on guarded routes, and the health route.
 * Throws a {@link ProceedConfigError} when two different schemas share an id.
 *
 * @example
 * const document = generateOpenApi({ app, info: { title: 'Blog API', version: '1.0.0' } });
 * const same = generateOpenApi({
 *   mounts: [{ prefix: '/api', collections: [posts, users] }],
 *   documentation: [authDocumentation],
 *   info: { title: 'Blog API', version: '1.0.0' },
 * });
 */
export function generateOpenApi(options: OpenApiOptions): OpenApiDocument {
  checkDocumentOptions(options);
  const { table, routes, prefixes } = select(options);
  const builder = new DocumentBuilder(table);
  const ids = uniqueIds([
    ...routes.map((route) => {
      const qualified = `${route.collection}.${route.name}`;
      return route.prefix === ''
        ? [route.name, qualified]
        : [route.name, qualified, `${dotted(route.prefix)}.${qualified}`];
    }),
    ...prefixes.flatMap((prefix) =>
      ['health', 'healthLive'].map((name) => (prefix === '' ? [name] : [name, `${dotted(prefix)}.${name}`])),
    ),
  ]);

  const paths: OpenApiDocument['paths'] = {};
  const tags: OpenApiTag[] = [];
  const addOperation = (method: HttpMethod, path: string, operation: OpenApiOperation) => {
    const item = paths[pathTemplate(path)] ?? {};
    item[lowerMethod(method)] = operation;
    paths[pathTemplate(path)] = item;
    for (const tag of operation.tags) {
      if (tags.some((known) => known.name === tag)) continue;
      const description = options.tags?.[tag] ?? (tag === healthTag ? healthTagDescription : undefined);
      tags.push(description === undefined ? { name: tag } : { name: tag, description });
    }
  };
  routes.forEach((route, index) => {
    addOperation(route.method, route.path, builder.operation(route, ids[index] ?? ''));
  });
  prefixes.forEach((prefix, index) => {
    const [readiness, liveness] = healthPaths(prefix);
    const first = routes.length + 2 * index;
    addOperation('GET', readiness, builder.health(ids[first] ?? 'health', 'readiness'));
    addOperation('GET', liveness, builder.health(ids[first + 1] ?? 'healthLive', 'liveness'));
  });

  const unknownTags = Object.keys(options.tags ?? {}).filter(
    (name) => !tags.some((tag) => tag.name === name),
  );
  if (unknownTags.length > 0)
    throw new ProceedConfigError(
      `openapi.tags names ${unknownTags.map((name) => `"${name}"`).join(', ')}, which no documented collection has (tags: ${tags.map((tag) => tag.name).join(', ')})`,
    );
  const used = [...builder.usedProblems.values()];
  const appCodes = used.filter((problem) => !isBuiltIn(problem.code));
  builder.components.add('Problem', problemSchemaWith(appCodes), 'the problem responses');
  const responses = problemComponents(builder.problemStatuses, appCodes, builder.headers);

  const document: OpenApiDocument = {
    openapi: '3.1.0',
    info: { ...options.info },
    tags,
    paths,
    components: {
      schemas: builder.components.schemas,
      responses,
      ...(builder.headers.components === undefined ? {} : { headers: builder.headers.components }),
      // Only where an operation takes a token: a scheme nothing uses is a linter's warning.
      securitySchemes: takesBearer(paths) ? { bearerAuth } : {},
    },
  };
  document.servers =
    options.servers === undefined ? [{ ...sameOrigin }] : options.servers.map((server) => ({ ...server }));
  // A fresh tree: tools that dereference in place must not reach the shared constants or views.
  return structuredClone(document);
}

const bearerAuth: OpenApiSecurityScheme = {
  type: 'http',
  scheme: 'bearer',
  bearerFormat: 'JWT',
  description:
    'An access token, sent as `Authorization: Bearer <token>`: a JWT checked as RFC8725 advises (one algorithm, pinned, so `alg: none` and any other are refused; signature, expiry and token type verified)',
};

/** Whether an operation of the document names the bearer scheme. */
function takesBearer(paths: OpenApiDocument['paths']): boolean {
  return Object.values(paths).some((item) =>
    Object.values(item ?? {}).some(
      (operation) =>
        typeof operation === 'object' &&
        operation !== null &&
        (operation as OpenApiOperation).security?.some((requirement) => 'bearerAuth' in requirement) === true,
    ),
  );
}
