/**
 * What the documentation page adds to Swagger UI (docs/openapi.md): its Content-Security-Policy,
 * a top bar that shows the API's title, a stylesheet and an icon served as files, and which
 * operations show a padlock.
 */

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
export const docsThemeCss = `.swagger-ui .topbar .proceed-title {
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

/** The page's icon, instead of the Fastify logo @fastify/swagger-ui would serve: a "P" on Swagger UI's top-bar grey. */
export const docsFavicon = {
  filename: 'favicon.svg',
  rel: 'icon',
  type: 'image/svg+xml',
  sizes: 'any',
  content: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1b1b1b"/><path fill="#fff" fill-rule="evenodd" d="M10 6h8a7 7 0 0 1 0 14h-3v6h-5zm5 5v4h3a2 2 0 0 0 0-4z"/></svg>`,
};

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
 * It runs in the browser: @fastify/swagger-ui writes uiConfig's functions into
 * swagger-initializer.js, a file of the origin, by their source text. It must therefore refer to
 * nothing outside itself, not even a helper of this module.
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
