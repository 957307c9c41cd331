import { ProceedConfigError } from '../core/errors.js';

/**
 * Which runtime runs the app, where an HTTP rule depends on it (docs/deployment.md, "Fetch
 * runtimes").
 */

/** Cloudflare Workers (workerd): requests arrive through `fetch` only; nothing listens. */
export const onWorkers =
  (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent === 'Cloudflare-Workers';

/** The refusal, on Workers, of what needs a part of Node Workers cannot run. */
export function refusedOnWorkers(what: string, because: string): ProceedConfigError {
  return new ProceedConfigError(
    `${what} ${because}, which Cloudflare Workers cannot run; there, procedures and health checks serve through app.fetch (docs/deployment.md, "Cloudflare Workers")`,
  );
}
