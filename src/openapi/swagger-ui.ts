/**
 * What the documentation page adds to Swagger UI (docs/openapi.md): its Content-Security-Policy,
 * a top bar that shows the API's title, a stylesheet and an icon served as files, and which
 * operations show a padlock.
 */
import { createHash } from 'node:crypto';
import type { RouteAnswer } from '../http/app-routes.js';

/**
 * The page's policy: everything from the origin, nothing inline. `data:` images are Swagger UI's
 * own icons, written into its stylesheet. No `upgrade-insecure-requests`: the page must work on
 * plain http, as on a developer's machine.
 */
export const docsContentSecurityPolicy = [
  "default-src 'self'",
  "base-uri 'self'",
  "connect-src 'self'",
  "font-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self'",
].join('; ');

/** Styles the title that replaces Swagger UI's logo; a file, since the policy refuses inline styles. */
const docsThemeCss = `.swagger-ui .topbar .proceed-title {
  color: #fff;
  flex: 1;
  font-family: sans-serif;
  font-size: 1.5em;
  font-weight: 700;
  overflow: hidden;
  text-overflow: ellipsis;
  white-space: nowrap;
}
`;

/** The page's icon: a "P" on Swagger UI's top-bar grey. */
const docsFavicon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1b1b1b"/><path fill="#fff" fill-rule="evenodd" d="M10 6h8a7 7 0 0 1 0 14h-3v6h-5zm5 5v4h3a2 2 0 0 0 0-4z"/></svg>`;

/** The few methods of Swagger UI's Immutable.js values that the plugin calls. */
interface ImmutableMap {
  get(key: string): unknown;
  set(key: string, value: unknown): ImmutableMap;
  isEmpty(): boolean;
}

interface ImmutableList<T> {
  some(predicate: (value: T) => boolean): boolean;
  clear(): ImmutableList<T>;
}

interface SwaggerUiSystem {
  React: { createElement(type: unknown, props?: object | null, ...children: unknown[]): unknown };
}

interface TopbarProps {
  getComponent(name: string): unknown;
  specSelectors: { info(): ImmutableMap };
}

interface OperationSummaryProps {
  operationProps: ImmutableMap | null;
}

/**
 * A Swagger UI plugin: the top bar shows the document's `info.title` (Swagger UI's logo carries
 * an inline `<style>` the policy refuses, and its URL field would load other documents), and a
 * padlock is shown only where a token is required.
 *
 * Swagger UI shows a padlock on every operation with a security requirement, closed once every
 * scheme of one requirement is authorized. An operation that also accepts no credentials (`{}`
 * among its requirements) therefore shows a closed padlock before anything is authorized. Its
 * padlock is hidden here, in the summary only: the request still carries the token once one is
 * authorized, which is what optional bearer routes need.
 *
 * It runs in the browser: {@link swaggerUiAssets} writes it into swagger-initializer.js, a file
 * of the origin, by its source text. It must therefore refer to nothing outside itself, not even
 * a helper of this module.
 */
export function proceedSwaggerUiPlugin(system: SwaggerUiSystem) {
  const h = system.React.createElement;
  return {
    components: {
      Topbar: (props: TopbarProps) => {
        const title = props.specSelectors.info().get('title');
        return h(
          'div',
          { className: 'topbar' },
          h(
            'div',
            { className: 'wrapper' },
            h(
              'div',
              { className: 'topbar-wrapper' },
              h('span', { className: 'proceed-title' }, typeof title === 'string' ? title : ''),
              h(props.getComponent('DarkModeToggle')),
            ),
          ),
        );
      },
    },
    wrapComponents: {
      OperationSummary: (Original: unknown) => (props: OperationSummaryProps) => {
        const operation = props.operationProps;
        const security = operation?.get('security') as ImmutableList<ImmutableMap> | undefined;
        if (operation == null || security === undefined || !security.some((each) => each.isEmpty())) {
          return h(Original, props);
        }
        return h(Original, { ...props, operationProps: operation.set('security', security.clear()) });
      },
    },
  };
}

/** The files of swagger-ui-dist the page loads, served as they are. */
const distFiles = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
} as const;

/** Every file under `{routePrefix}/static/`: Swagger UI's, and the page's own. */
export const swaggerUiFileNames = [
  ...Object.keys(distFiles),
  'swagger-initializer.js',
  'theme/proceed.css',
  'theme/favicon.svg',
] as const;

/** The page, its files and their answers, made once, at the first request for one of them. */
export interface SwaggerUiAssets {
  /** The page with URLs from the root; `relativePage` with URLs from `{routePrefix}/`. */
  readonly page: RouteAnswer;
  readonly relativePage: RouteAnswer;
  readonly files: ReadonlyMap<string, RouteAnswer>;
}

/**
 * A file of the docs, answered with its type, a tag of its bytes (the client revalidates each
 * time: `no-cache`, then a 304 while nothing changed) and the page's policy.
 */
export function docsAsset(type: string, body: string | Uint8Array): RouteAnswer {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const tag = `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"`;
  return {
    headers: {
      'content-type': type,
      etag: tag,
      'cache-control': 'no-cache',
      'content-security-policy': docsContentSecurityPolicy,
    },
    body,
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** The page: Swagger UI's styles and scripts, the theme, and nothing inline (the policy refuses it). */
function pageHtml(title: string, files: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" type="text/css" href="${files}/swagger-ui.css" />
<link rel="stylesheet" type="text/css" href="${files}/index.css" />
<link rel="stylesheet" type="text/css" href="${files}/theme/proceed.css" />
<link rel="icon" type="image/svg+xml" href="${files}/theme/favicon.svg" sizes="any" />
</head>
<body>
<div id="swagger-ui"></div>
<script src="${files}/swagger-ui-bundle.js" charset="UTF-8"></script>
<script src="${files}/swagger-ui-standalone-preset.js" charset="UTF-8"></script>
<script src="${files}/swagger-initializer.js" charset="UTF-8"></script>
</body>
</html>
`;
}

/**
 * Starts Swagger UI on the document beside the page. Tokens stay in the page's memory (kept in
 * localStorage, any script of the origin could read them); no validator badge, which would send
 * the document's URL to validator.swagger.io.
 */
const initializer = `window.onload = function () {
  function resolveUrl(url) {
    var here = window.location.href.split('#', 1)[0];
    var anchor = document.createElement('a');
    anchor.href = (here.endsWith('/') ? here : here + '/') + url;
    return anchor.href;
  }
  var proceedPlugin = ${proceedSwaggerUiPlugin.toString()};
  window.ui = SwaggerUIBundle({
    dom_id: '#swagger-ui',
    url: resolveUrl('./json'),
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl, proceedPlugin],
    layout: 'StandaloneLayout',
    deepLinking: true,
    displayOperationId: true,
    displayRequestDuration: true,
    persistAuthorization: false,
    docExpansion: 'list',
    validatorUrl: null,
  });
};
`;

/**
 * Where Swagger UI's files are: beside this module in the package (the build copies them from
 * swagger-ui-dist, so that an app installs no package of its own for them); from the sources, in
 * the swagger-ui-dist dev dependency. Every file the page loads must be there: the app's start
 * stops otherwise, rather than its docs page failing later.
 */
export async function swaggerUiDirectory(): Promise<string> {
  const { fileURLToPath } = await import('node:url');
  try {
    return await holdsEveryFile(fileURLToPath(new URL('./swagger-ui/', import.meta.url)));
  } catch {
    const { createRequire } = await import('node:module');
    const { dirname } = await import('node:path');
    return holdsEveryFile(dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json')));
  }
}

/** `directory`, once each file of Swagger UI the page loads is found in it; refused otherwise. */
export async function holdsEveryFile(directory: string): Promise<string> {
  const { access } = await import('node:fs/promises');
  const { join } = await import('node:path');
  await Promise.all(Object.keys(distFiles).map((name) => access(join(directory, name))));
  return directory;
}

/** Reads Swagger UI's files from `directory` ({@link swaggerUiDirectory}) and makes every answer. */
export async function swaggerUiAssets(
  title: string,
  routePrefix: string,
  directory: string,
): Promise<SwaggerUiAssets> {
  const { readFile } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const files = new Map<string, RouteAnswer>();
  for (const [name, type] of Object.entries(distFiles))
    files.set(name, docsAsset(type, new Uint8Array(await readFile(join(directory, name)))));
  files.set('swagger-initializer.js', docsAsset('text/javascript; charset=utf-8', initializer));
  files.set('theme/proceed.css', docsAsset('text/css; charset=utf-8', docsThemeCss));
  files.set('theme/favicon.svg', docsAsset('image/svg+xml', docsFavicon));
  return {
    page: docsAsset('text/html; charset=utf-8', pageHtml(title, `${routePrefix}/static`)),
    relativePage: docsAsset('text/html; charset=utf-8', pageHtml(title, './static')),
    files,
  };
}
