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

/**
 * Whether the runtime sends a `Response` whose body is a stream with the `Content-Length` it was
 * given. Bun drops it and sends the body chunked (Bun's issue 10507), so there a file answer is
 * handed over as a `Blob`, which keeps its length (docs/files.md).
 */
export const streamsKeepLength = typeof (globalThis as { Bun?: unknown }).Bun === 'undefined';
