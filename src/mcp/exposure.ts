/**
 * What the MCP endpoint answers to and how it asks for credentials (docs/mcp.md, "Security"):
 * the `Host` names (DNS rebinding), browser origins, and the 401 that names the endpoint's
 * protected-resource metadata (RFC 9728).
 */
import { type ProblemCode, ProceedError } from '../core/errors.js';
import type { RouteRequest } from '../http/app-routes.js';

/**
 * A loopback name a local server answers to: `localhost`, any address of 127.0.0.0/8 (a server
 * may listen on 127.0.0.2), `::1`, and IPv4's loopback as IPv6 writes it.
 */
function isLoopback(name: string): boolean {
  const address = name.startsWith('[') ? name.slice(1, -1) : name;
  return (
    address === 'localhost' ||
    address === '::1' ||
    /^(?:::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(address)
  );
}

/** A `Host` value's name, without its port: `127.0.0.1:3030` → `127.0.0.1`, `[::1]:80` → `[::1]`. */
function hostName(host: string): string {
  const end = host.startsWith('[') ? host.indexOf(']') + 1 : host.indexOf(':');
  return (end <= 0 ? host : host.slice(0, end)).toLowerCase();
}

export interface ExposureOptions {
  readonly path: string;
  readonly allowedOrigins?: readonly string[] | undefined;
  readonly allowedHosts?: readonly string[] | undefined;
  readonly resource?: string | undefined;
}

export class Exposure {
  readonly #options: ExposureOptions;
  readonly #origins: ReadonlySet<string>;
  /** Which `Host` names the endpoint answers to; undefined: any. */
  #hosts: ((name: string) => boolean) | undefined;
  /** The last `Host` found allowed: an agent sends the same one with every message. */
  #allowedHost: string | undefined;
  /**
   * Where the protected-resource metadata is served: the endpoint's path after the well-known
   * name, as RFC 9728 forms it (`/.well-known/oauth-protected-resource/mcp`); for the default
   * path the root's name too, which the 401's challenge names (the blog's contract binds it).
   */
  readonly metadataPaths: readonly string[];
  /** The one the 401's challenge names. */
  readonly #challengedPath: string;

  constructor(options: ExposureOptions) {
    this.#options = options;
    this.#origins = new Set(options.allowedOrigins ?? []);
    const allowed =
      options.allowedHosts === undefined ? undefined : new Set(options.allowedHosts.map(hostName));
    this.#hosts = allowed === undefined ? undefined : (name) => allowed.has(name);
    const wellKnown = '/.well-known/oauth-protected-resource';
    this.metadataPaths =
      options.path === '/mcp' ? [`${wellKnown}${options.path}`, wellKnown] : [`${wellKnown}${options.path}`];
    this.#challengedPath = options.path === '/mcp' ? wellKnown : `${wellKnown}${options.path}`;
  }

  /** The app listens on `host`: on a loopback interface, loopback names only, unless told which. */
  listening(host: string): void {
    if (this.#options.allowedHosts === undefined && isLoopback(hostName(host))) {
      this.#hosts = isLoopback;
      this.#allowedHost = undefined;
    }
  }

  /**
   * Refuses a `Host` the endpoint does not answer to (DNS rebinding: a site whose name resolves
   * to this machine) and a browser on another origin (a page calling the agent's endpoint).
   */
  refuseForeign(request: RouteRequest): void {
    this.refuseForeignHost(request);
    const origin = request.headers.origin;
    if (origin === undefined || this.#origins.has(origin)) return;
    let sameOrigin: boolean;
    try {
      sameOrigin = new URL(origin).origin === new URL(request.origin).origin;
    } catch {
      sameOrigin = false;
    }
    // The endpoint's own origin as the client named it, scheme and port included: behind a trusted
    // proxy, its X-Forwarded-Proto and -Host (the same origin the cross-site check and the metadata
    // take).
    if (!sameOrigin) throw new ProceedError('FORBIDDEN', `Origin ${origin} may not call this MCP endpoint`);
  }

  /**
   * The `Host` check alone, for the protected-resource metadata too: it names this server by the
   * request's `Host`, so a foreign name would be written back (a cache keyed without it would keep
   * it). Any origin may read the metadata: a browser-based client fetches it from its own.
   */
  refuseForeignHost(request: RouteRequest): void {
    const host = request.headers.host;
    if (this.#hosts === undefined || (host !== undefined && host === this.#allowedHost)) return;
    if (host === undefined || !this.#hosts(hostName(host)))
      throw new ProceedError(
        'FORBIDDEN',
        `This MCP endpoint does not answer to the host ${host ?? '(none)'}`,
      );
    this.#allowedHost = host;
  }

  /**
   * The endpoint's public URL, for the metadata and `WWW-Authenticate`: the origin the client
   * named (a trusted proxy's `X-Forwarded-Proto` and `X-Forwarded-Host`, as `trustProxy` says;
   * any client's `X-Forwarded-Proto` was taken before) and `path`, unless `resource` is set.
   */
  resourceOf(request: RouteRequest): string {
    if (this.#options.resource !== undefined) return this.#options.resource;
    return `${request.origin}${this.#options.path}`;
  }

  /** A 401 as the protocol asks: where to learn how to get a token (RFC 9728). */
  unauthenticated(error: ProceedError, request: RouteRequest): ProceedError {
    const metadata = `${new URL(this.resourceOf(request)).origin}${this.#challengedPath}`;
    const challenge = error.headers?.['www-authenticate'];
    // A challenge with parameters of its own (an app's own auth may send `error="invalid_token"`)
    // is kept, the metadata added to it; the auth plugin's is a bare `Bearer`, as the REST routes'.
    const header =
      challenge?.startsWith('Bearer ') === true
        ? `${challenge}, resource_metadata="${metadata}"`
        : `Bearer resource_metadata="${metadata}"`;
    return new ProceedError(error.code as ProblemCode, error.message, {
      headers: { ...error.headers, 'www-authenticate': header },
    });
  }
}
