/**
 * Cloudflare Workers (workerd; docs/deployment.md, "Cloudflare Workers"): requests arrive
 * through `fetch` only; nothing listens, there is no disk, and Cloudflare's edge owns the
 * connections and compresses.
 */
import type { Runtime } from './common.js';

export const workers: Runtime = {
  name: 'Cloudflare Workers',
  // Set by Cloudflare's edge, which a client cannot.
  peerAddress: (request) => request.headers.get('cf-connecting-ip') ?? undefined,
  spoolsToDisk: false,
  diskFile: () => Promise.reject(new Error('Cloudflare Workers have no disk: uploads stay in memory')),
  compresses: false,
  namesConnections: false,
  readsRefusedBodies: true,
  streamsKeepLength: true,
  listens: false,
  serve: undefined,
  hasStandardOutput: false,
  importsTypeScript: false,
  xxHash64: undefined,
};
