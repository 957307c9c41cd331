/**
 * CORS settings, checked without loading the server (docs/cors.md): an entry can refuse a bad
 * `CORS_ORIGINS` before anything heavy loads.
 */
import { ProceedConfigError } from '../core/errors.js';

export interface CorsOptions {
  /**
   * The origins allowed to call the API from a browser (`https://app.example.com`, scheme, host
   * and port, no path), or `'*'` for any origin (not with `credentials`).
   */
  origins: readonly string[] | '*';
  /**
   * Let browsers send cookies and HTTP authentication with cross-origin requests
   * (`Access-Control-Allow-Credentials`). Default false: a bearer token needs no credentials.
   */
  credentials?: boolean;
  /** How long a browser may cache a preflight answer, in seconds (`Access-Control-Max-Age`). Default 600. */
  maxAge?: number;
}

/** Checks the options and returns the allowed origins as a set (undefined: any origin). */
export function checkCorsOptions(options: CorsOptions): ReadonlySet<string> | undefined {
  if (typeof options !== 'object' || options === null)
    throw new ProceedConfigError('cors must be an object: { origins: [...] }');
  const { origins, credentials, maxAge } = options;
  if (credentials !== undefined && typeof credentials !== 'boolean')
    throw new ProceedConfigError(`cors.credentials must be true or false (got ${String(credentials)})`);
  if (maxAge !== undefined && (!Number.isInteger(maxAge) || maxAge < 0))
    throw new ProceedConfigError(`cors.maxAge must be a whole number of seconds ≥ 0 (got ${String(maxAge)})`);
  if (origins === '*') {
    if (credentials === true)
      throw new ProceedConfigError(
        "cors: origins '*' cannot go with credentials: browsers refuse it; list the origins instead",
      );
    return undefined;
  }
  if (!Array.isArray(origins) || origins.length === 0)
    throw new ProceedConfigError("cors.origins must list at least one origin, or be '*'");
  const allowed = new Set<string>();
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    // An origin is exactly scheme://host[:port]: what a browser sends in `Origin`.
    if (parsed === undefined || !/^https?:$/.test(parsed.protocol) || parsed.origin !== origin) {
      throw new ProceedConfigError(
        `cors.origins: "${origin}" is not an origin (scheme://host[:port], no path or trailing slash)`,
      );
    }
    allowed.add(origin);
  }
  return allowed;
}

/**
 * `CORS_ORIGINS`: comma-separated origins, or `*`; unset or empty: no CORS. Credentials stay off.
 *
 * @example
 * corsFromEnv({ CORS_ORIGINS: 'https://app.example.com,http://localhost:5173' });
 * // { origins: ['https://app.example.com', 'http://localhost:5173'] }
 */
export function corsFromEnv(env: NodeJS.ProcessEnv = process.env): CorsOptions | undefined {
  const raw = env.CORS_ORIGINS?.trim();
  if (raw === undefined || raw === '') return undefined;
  const options: CorsOptions = {
    origins:
      raw === '*'
        ? '*'
        : raw
            .split(',')
            .map((origin) => origin.trim())
            .filter((origin) => origin !== ''),
  };
  try {
    checkCorsOptions(options);
  } catch (error) {
    throw new ProceedConfigError(
      `CORS_ORIGINS: ${(error as Error).message.replace(/^cors(\.origins)?: /, '')}`,
    );
  }
  return options;
}
