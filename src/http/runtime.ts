/**
 * Which runtime runs the app, where an HTTP rule depends on it (docs/deployment.md, "Fetch
 * runtimes").
 */

/** Cloudflare Workers (workerd): requests arrive through `fetch` only; nothing listens. */
export const onWorkers =
  (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent === 'Cloudflare-Workers';
