/**
 * Cross-site request forgery, refused for every adapter (docs/procedures.md, "Cross-site
 * requests"). Browsers attach cookies to requests other sites make; a write that arrives with
 * cookies from another site is refused unless its origin is trusted. Requests without cookies
 * (bearer tokens, server-to-server calls) carry no ambient credential and pass untouched.
 *
 * The check reads what browsers send and pages cannot forge: `Sec-Fetch-Site`, then `Origin`.
 * It does not look at `Content-Type`: a form, or a request with no type at all, is as cross-site
 * as a JSON one, so no media type earns a pass.
 */
import { type CorsOptions, checkCorsOptions } from '../config/cors.js';
import { ProceedConfigError } from '../core/errors.js';

export interface CsrfOptions {
  /** Origins besides the app's own that may write with cookies (`https://admin.example.com`). */
  trustedOrigins?: readonly string[];
}

/** Written as browsers write `Origin`: lower case, no default port, no path. */
function isOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    // A wildcard is no origin: browsers never send one, so it would never match.
    return (
      (url.protocol === 'https:' || url.protocol === 'http:') &&
      url.origin === origin &&
      !origin.includes('*')
    );
  } catch {
    return false;
  }
}

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The origins that may write with cookies: the listed ones, and CORS origins allowed credentials. */
export function trustedOriginsOf(
  options: CsrfOptions | undefined,
  cors: CorsOptions | undefined,
): Set<string> {
  const trusted = new Set<string>();
  const listed: unknown = options?.trustedOrigins;
  // A string was walked letter by letter: '"h" is not an origin'.
  if (listed !== undefined && !Array.isArray(listed))
    throw new ProceedConfigError(
      `csrf.trustedOrigins is a list of origins (['https://admin.example.com']), not ${JSON.stringify(listed)}`,
    );
  for (const origin of options?.trustedOrigins ?? []) {
    if (!isOrigin(origin))
      throw new ProceedConfigError(
        `csrf.trustedOrigins: "${origin}" is not an origin (scheme://host[:port])`,
      );
    trusted.add(origin);
  }
  if (cors !== undefined && cors.credentials === true) {
    for (const origin of checkCorsOptions(cors) ?? []) trusted.add(origin);
  }
  return trusted;
}

/**
 * Why a request must be refused as cross-site, or undefined when it may go on. `ownOrigin` is
 * asked only when an `Origin` header has to be compared. `method` is `WEBSOCKET` for a socket's
 * handshake.
 */
export function crossSiteRefusal(
  method: string,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  ownOrigin: () => string,
  trusted: ReadonlySet<string>,
): string | undefined {
  if (safeMethods.has(method) || headers.cookie === undefined) return undefined;
  // A WebSocket's handshake is a GET, and what it opens writes as much as any POST.
  const what = method === 'WEBSOCKET' ? 'a WebSocket' : 'a write';
  const site = headers['sec-fetch-site'];
  if (site === 'same-origin' || site === 'none') return undefined;
  const origin = headers.origin;
  if (typeof origin === 'string' && origin !== 'null') {
    if (origin === ownOrigin() || trusted.has(origin)) return undefined;
    return `${what} with cookies from ${origin}, which this API does not trust`;
  }
  if (origin === 'null') return `${what} with cookies from an opaque origin`;
  // A sibling subdomain is same-site, and may be someone else's: only a trusted Origin passes.
  if (site === 'cross-site' || site === 'same-site') return `a ${site} ${what.slice(2)} with cookies`;
  // Neither header: not a browser that would attach another site's cookies by itself.
  return undefined;
}
