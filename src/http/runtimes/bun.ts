/** Bun (docs/deployment.md, "Fetch runtimes"): `app.listen` serves app.fetch with `Bun.serve`. */
import { type NativeServe, type Runtime, withNodeCode } from './common.js';
import { openedFile } from './node.js';

interface BunServer {
  readonly port: number;
  stop(closeActiveConnections?: boolean): Promise<void> | void;
}

interface BunGlobal {
  hash: { xxHash64(data: string | Uint8Array): bigint };
  serve(options: {
    port: number;
    hostname: string;
    fetch: (request: Request, server: BunServer) => Promise<Response>;
    maxRequestBodySize: number;
    idleTimeout: number;
    error: (error: unknown) => Response;
  }): BunServer;
}

/** Bun's server, passed beside each request. */
interface BunArgument {
  requestIP?: (request: Request) => { address: string } | null;
}

/** Bun's own cap on a request body, which it buffers until the handler reads it. */
const bunBodyCap = 128 * 1024 * 1024;

const serve: NativeServe = async ({ port, host, fetch, bodyLimit, keepAlive, failed }) => {
  const { Bun } = globalThis as unknown as { Bun: BunGlobal };
  let server: BunServer;
  try {
    server = Bun.serve({
      port,
      hostname: host,
      fetch,
      // The app's limit answers 413 as problem+json; Bun's cap stays for bodies far larger,
      // which it would otherwise hold in memory unread (a 413 of its own answers them).
      maxRequestBodySize: Math.max(bodyLimit, bunBodyCap),
      // Seconds, at most 255: idle keep-alive connections outlive a load balancer's, as on Node.
      idleTimeout: Math.min(255, Math.ceil(keepAlive / 1000)),
      error: failed,
    });
  } catch (error) {
    throw withNodeCode(error);
  }
  return {
    port: server.port,
    stop: async (force) => {
      await server.stop(force);
    },
  };
};

export const bun: Runtime = {
  name: 'Bun',
  peerAddress(request, argument) {
    const server = argument as BunArgument | undefined;
    return typeof server?.requestIP === 'function'
      ? (server.requestIP(request)?.address ?? undefined)
      : undefined;
  },
  spoolsToDisk: true,
  diskFile: openedFile,
  compresses: true,
  namesConnections: true,
  readsRefusedBodies: false,
  streamsKeepLength: false,
  listens: true,
  serve,
  hasStandardOutput: true,
  importsTypeScript: true,
  xxHash64: (data) => (globalThis as unknown as { Bun: BunGlobal }).Bun.hash.xxHash64(data),
};
