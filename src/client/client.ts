/**
 * The typed HTTP client. It holds no server code: routes come from the procedure names (through
 * the framework's naming module, the same one the server uses) or from a route manifest the
 * server generated, and types come from `typeof api`, erased at compile time.
 */
import { conventionOf, normalizePrefix, resolveRoute } from '../core/naming.js';
import { closestName, optionKeys } from '../core/options.js';
import { ClientError, ProblemError, type ReceivedProblem } from './errors.js';
import { reconnectingEvents } from './events.js';
import { answeredFile } from './files.js';
import type { ManifestRoute, RouteManifest } from './manifest.js';
import { encodeCall } from './request.js';
import { openSocket, type WebSocketClass } from './sockets.js';
import type { ApiShape, AppErrors, CallOptions, Client } from './types.js';

type MaybePromise<T> = T | Promise<T>;

/** A bearer token, or a function asked before every call (return undefined to send none). */
export type TokenSource = string | (() => MaybePromise<string | undefined | null>);

export interface ClientOptions {
  /** Where the server is, e.g. `http://localhost:3030`. A path is kept (`https://host/service`). */
  baseUrl: string | URL;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: TokenSource;
  /** A `fetch` to use instead of the global one (tests, retries, a custom agent). */
  fetch?: typeof fetch;
  /** The mount prefix. Default `/api`. */
  prefix?: string;
  /** Headers for every call, or a function returning them. */
  headers?: HeadersInit | (() => MaybePromise<HeadersInit>);
  /** Routes generated on the server (`routeManifest`, `proceed manifest`); needed for `.rest()` overrides. */
  routes?: RouteManifest;
  /**
   * The WebSocket class socket procedures open (docs/sockets.md): the global one by default;
   * on Node 20, which has none, `ws`'s default export.
   */
  WebSocket?: WebSocketClass;
}

const jsonType = /^application\/(?:[\w.+-]*\+)?json\b/i;
const problemType = /^application\/problem\+json\b/i;

function isReceivedProblem(value: unknown): value is ReceivedProblem {
  return (
    typeof value === 'object' && value !== null && typeof (value as { status?: unknown }).status === 'number'
  );
}

function snippet(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > 120 ? `${oneLine.slice(0, 117)}...` : oneLine;
}

/**
 * Creates a typed client. The type argument is the server's collections (`typeof api`, where
 * `api` is what the server passes to `app.mount`); import it with `import type` so that no
 * server code reaches the bundle.
 *
 * @example
 * import type { api } from '../server/api.js';
 * const client = createClient<typeof api>({ baseUrl: 'http://localhost:3030', token: () => session.accessToken });
 * const { data } = await client.posts.listPosts({ limit: 5 });
 * const post = await client.posts.getPost({ id: data[0].id });
 */
/**
 * An absolute http(s) URL: `localhost:3030` parses too, as a URL of the scheme `localhost:`.
 * `new URL` rather than `URL.canParse`, which browsers before 2023 and React Native lack.
 */
function isHttpUrl(text: string): boolean {
  try {
    const { protocol } = new URL(text);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

const clientKeys = optionKeys<ClientOptions>()(
  'baseUrl',
  'token',
  'fetch',
  'prefix',
  'headers',
  'routes',
  'WebSocket',
);

function nearestKey(key: string): string {
  const near = closestName(key, clientKeys);
  return near === undefined ? '' : ` (did you mean "${near}"?)`;
}

/**
 * The options, checked as they are given: `{ tokne }` sent no `Authorization`, and `{ baseURL }`
 * failed only at the first call.
 */
function checkClientOptions(options: ClientOptions): void {
  if (typeof options !== 'object' || options === null)
    throw new TypeError('createClient: options must be an object');
  for (const key of Object.keys(options))
    if (!clientKeys.includes(key))
      throw new TypeError(
        `createClient: unknown option "${key}"${nearestKey(key)}. Known options: ${clientKeys.join(', ')}`,
      );
  const { baseUrl, prefix } = options;
  // A page's own origin may be left out ('' or a path): fetch resolves it against the page.
  const readable =
    baseUrl instanceof URL ||
    (typeof baseUrl === 'string' && (baseUrl === '' || baseUrl.startsWith('/') || isHttpUrl(baseUrl)));
  if (!readable)
    throw new TypeError(
      `createClient: baseUrl is the API's URL (http://127.0.0.1:3030, or '' for the page's own origin), not ${JSON.stringify(baseUrl)}`,
    );
  if (prefix !== undefined && typeof prefix !== 'string')
    throw new TypeError(`createClient: prefix is a path (/api), not ${JSON.stringify(prefix)}`);
}

export function createClient<A extends ApiShape, E extends AppErrors = Record<never, never>>(
  options: ClientOptions,
): Client<A, E> {
  checkClientOptions(options);
  const base = String(options.baseUrl).replace(/\/+$/, '');
  const prefix = normalizePrefix(options.prefix ?? '/api');
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') {
    throw new TypeError('createClient: no global fetch here; pass { fetch } in the options');
  }
  const routes = new Map<string, ManifestRoute>();

  const routeOf = (collection: string, name: string): ManifestRoute => {
    const key = `${collection}.${name}`;
    const known = routes.get(key);
    if (known !== undefined) return known;
    const listed = options.routes?.[collection]?.[name];
    let route: ManifestRoute;
    if (listed !== undefined) {
      route = listed;
    } else {
      const convention = conventionOf(name);
      if (convention === undefined) {
        const where =
          options.routes === undefined ? 'no route manifest was given' : 'it is not in the route manifest';
        throw new ClientError(
          'unknown-route',
          `No route for "${key}": its name has no conventional prefix (list, get, create, update, delete), so it ` +
            `must have a .rest() override, and ${where}. Pass createClient({ routes }) with a manifest from ` +
            'routeManifest() or `proceed manifest`.',
        );
      }
      const { method, path, inputMode } = resolveRoute(collection, name, convention.kind);
      route = { method, path, inputMode };
    }
    routes.set(key, route);
    return route;
  };

  const headersFor = async (
    hasBody: boolean,
    call: CallOptions | undefined,
    body?: Record<string, string>,
  ): Promise<Headers> => {
    const headers = new Headers({ accept: 'application/json, application/problem+json' });
    const shared = typeof options.headers === 'function' ? await options.headers() : options.headers;
    new Headers(shared).forEach((value, name) => {
      headers.set(name, value);
    });
    const token = typeof options.token === 'function' ? await options.token() : options.token;
    if (token !== undefined && token !== null && token !== '')
      headers.set('authorization', `Bearer ${token}`);
    if (hasBody) headers.set('content-type', 'application/json');
    for (const [name, value] of Object.entries(body ?? {})) headers.set(name, value);
    new Headers(call?.headers).forEach((value, name) => {
      headers.set(name, value);
    });
    return headers;
  };

  const call = async (collection: string, name: string, input: unknown, callOptions?: CallOptions) => {
    const where = `${collection}.${name}`;
    const route = routeOf(collection, name);
    const encoded = encodeCall(where, route, input);
    const url = `${base}${prefix}${encoded.path}`;
    if (route.events === true) return openEvents(url, `${route.method} ${url}`, callOptions);
    if (route.socket === true) return socketAt(url, callOptions);
    const init: RequestInit = {
      method: route.method,
      headers: await headersFor(typeof encoded.body === 'string', callOptions, encoded.headers),
    };
    if (encoded.body !== undefined) init.body = encoded.body;
    if (callOptions?.signal !== undefined) init.signal = callOptions.signal;
    const label = `${route.method} ${url}`;

    let response: Response;
    let text: string;
    let file: File | undefined;
    try {
      response = await fetchImpl(url, init);
      // A file, where the manifest says the procedure answers one (`.output(download())`).
      if (route.download === true && response.ok && response.status !== 204)
        file = answeredFile(await response.blob(), response.headers);
      text = file === undefined ? await response.text() : '';
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new ClientError('network', `${label} failed: ${reason}`, { cause: error });
    }
    callOptions?.onResponse?.({ status: response.status, headers: response.headers });
    if (file !== undefined)
      return route.statuses === undefined ? file : { status: response.status, data: file };
    const contentType = response.headers.get('content-type') ?? '';
    let body: unknown;
    let parsed = false;
    if (jsonType.test(contentType) && text !== '') {
      try {
        body = JSON.parse(text);
        parsed = true;
      } catch (error) {
        throw new ClientError(
          'invalid-response',
          `${label}: the ${response.status} answer is not valid JSON`,
          {
            status: response.status,
            cause: error,
          },
        );
      }
    }
    if (!response.ok) {
      if (parsed && isReceivedProblem(body) && (problemType.test(contentType) || 'code' in body)) {
        // A socket procedure the manifest did not name (a conventional name): open its socket.
        if (body.code === 'UPGRADE_REQUIRED' && route.method === 'GET') {
          routes.set(`${collection}.${name}`, { ...route, socket: true });
          return socketAt(url, callOptions);
        }
        throw new ProblemError(body, response.headers);
      }
      throw new ClientError(
        'invalid-response',
        `${label} answered ${response.status} ${response.statusText} without problem details` +
          (text === '' ? '' : `: ${snippet(text)}`),
        { status: response.status },
      );
    }
    if (text === '')
      return route.statuses === undefined ? undefined : { status: response.status, data: undefined };
    if (!parsed) {
      throw new ClientError(
        'invalid-response',
        `${label}: expected JSON, got ${contentType === '' ? 'no content type' : contentType}` +
          (contentType === ''
            ? ''
            : ' (a procedure that answers a file needs the route manifest: createClient({ routes }))'),
        { status: response.status },
      );
    }
    return route.statuses === undefined ? body : { status: response.status, data: body };
  };

  /** The problem (or the mistake) of an answer that is not what was asked for. */
  const refusal = async (response: Response, label: string): Promise<Error> => {
    const text = await response.text().catch(() => '');
    const contentType = response.headers.get('content-type') ?? '';
    if (jsonType.test(contentType) && text !== '') {
      try {
        const body: unknown = JSON.parse(text);
        if (isReceivedProblem(body)) return new ProblemError(body, response.headers);
      } catch {
        // not JSON after all: described below
      }
    }
    return new ClientError(
      'invalid-response',
      `${label} answered ${response.status} ${response.statusText} without an event stream or problem details`,
      { status: response.status },
    );
  };

  /**
   * A procedure that answers server-sent events (docs/events.md): resolves once the stream is
   * open, with its events as an async iterable that reconnects (with `Last-Event-ID` and fresh
   * headers) until the call's signal aborts; a problem answer rejects, as any call's does.
   */
  const openEvents = async (url: string, label: string, callOptions: CallOptions | undefined) => {
    const connect = async (lastEventId: string | undefined, signal: AbortSignal | undefined) => {
      const headers = await headersFor(false, callOptions);
      headers.set('accept', 'text/event-stream, application/problem+json');
      if (lastEventId !== undefined) headers.set('last-event-id', lastEventId);
      let response: Response;
      try {
        response = await fetchImpl(url, {
          method: 'GET',
          headers,
          ...(signal === undefined ? {} : { signal }),
        });
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new ClientError('network', `${label} failed: ${reason}`, { cause: error });
      }
      const type = response.headers.get('content-type') ?? '';
      if (response.ok && response.body !== null && type.startsWith('text/event-stream')) return response.body;
      throw await refusal(response, label);
    };
    const first = await connect(undefined, callOptions?.signal);
    return reconnectingEvents(first, connect, callOptions?.signal, label);
  };

  /**
   * A socket procedure (docs/sockets.md): the handshake carries the token as `access_token`, since
   * a browser's WebSocket cannot send headers; a refused one is asked of the route over HTTP, with
   * the token as a header, to tell its problem.
   */
  const socketAt = (url: string, callOptions: CallOptions | undefined) => {
    const WebSocketImpl = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketClass }).WebSocket;
    if (WebSocketImpl === undefined) {
      throw new ClientError(
        'network',
        'This runtime has no global WebSocket (Node 20): pass createClient({ WebSocket }) from the ws package',
      );
    }
    const socketUrl = url.replace(/^http/i, 'ws');
    return openSocket(
      {
        label: `GET ${socketUrl}`,
        WebSocket: WebSocketImpl,
        url: async () => {
          const token = typeof options.token === 'function' ? await options.token() : options.token;
          if (token === undefined || token === null || token === '') return socketUrl;
          return `${socketUrl}${socketUrl.includes('?') ? '&' : '?'}access_token=${encodeURIComponent(token)}`;
        },
        probe: async (signal) => {
          const response = await fetchImpl(url, { headers: await headersFor(false, callOptions), signal });
          if (response.status === 426 || response.ok) return undefined;
          const refused = await refusal(response, `GET ${url}`);
          return refused instanceof ProblemError ? refused : undefined;
        },
      },
      callOptions?.signal,
    );
  };

  const collections = new Map<string, object>();
  const collectionClient = (collection: string): object => {
    const procedures = new Map<string, unknown>();
    return new Proxy(Object.create(null) as object, {
      get(_target, name) {
        // `then` keeps the client from looking like a promise to `await`.
        if (typeof name !== 'string' || name === 'then') return undefined;
        let fn = procedures.get(name);
        if (fn === undefined) {
          fn = (input?: unknown, callOptions?: CallOptions) => call(collection, name, input, callOptions);
          procedures.set(name, fn);
        }
        return fn;
      },
    });
  };
  // `$` cannot start a collection name (it is not a path segment character Proceed allows).
  const isProblem = (error: unknown, code: string) => error instanceof ProblemError && error.code === code;
  return new Proxy(Object.create(null) as object, {
    get(_target, collection) {
      if (collection === '$isProblem') return isProblem;
      if (typeof collection !== 'string' || collection === 'then') return undefined;
      let found = collections.get(collection);
      if (found === undefined) {
        found = collectionClient(collection);
        collections.set(collection, found);
      }
      return found;
    },
  }) as Client<A, E>;
}
