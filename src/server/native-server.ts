/**
 * `app.listen()` on Bun and Deno: the runtime's own server (`Bun.serve`, `Deno.serve`) with
 * `app.fetch`, instead of Node's http module under Fastify (docs/deployment.md, "Fetch
 * runtimes"). This module only starts and stops that server; every HTTP rule is app.fetch's.
 */

type FetchHandler = (request: Request, runtime?: unknown) => Promise<Response>;

interface BunServer {
  readonly port: number;
  stop(closeActiveConnections?: boolean): Promise<void> | void;
}
interface BunRuntime {
  serve(options: {
    port: number;
    hostname: string;
    fetch: FetchHandler;
    maxRequestBodySize: number;
    idleTimeout: number;
    error: (error: unknown) => Response;
  }): BunServer;
}

interface DenoServer {
  shutdown(): Promise<void>;
  readonly finished: Promise<void>;
}
interface DenoRuntime {
  serve(
    options: {
      port: number;
      hostname: string;
      signal: AbortSignal;
      onListen: (address: { port: number }) => void;
      onError: (error: unknown) => Response;
    },
    handler: FetchHandler,
  ): DenoServer;
}

/** A runtime's server, started: its port, and how to stop it (gracefully, then at once). */
export interface NativeServer {
  readonly runtime: 'Bun' | 'Deno';
  readonly port: number;
  /** Stops accepting and waits for the requests in flight (Deno: the other way round); `force` ends them. */
  stop(force: boolean): Promise<void>;
}

export interface NativeServeOptions {
  port: number;
  host: string;
  fetch: FetchHandler;
  /** The app's body limit: the runtime refuses much larger bodies before reading them. */
  bodyLimit: number;
  /** How long an idle keep-alive connection stays open, in ms (the app's `timeouts.keepAlive`). */
  keepAlive: number;
  /** The answer when app.fetch itself fails: a problem+json 500, never the runtime's own page. */
  failed: (error: unknown) => Response;
}

export type NativeServe = (options: NativeServeOptions) => Promise<NativeServer>;

/** Bun's own cap on a request body, which it buffers until the handler reads it. */
const bunBodyCap = 128 * 1024 * 1024;

/** The runtime's own server when this process runs on Bun or Deno; undefined on Node. */
export function nativeServe(): NativeServe | undefined {
  const runtime = globalThis as { Bun?: BunRuntime; Deno?: DenoRuntime };
  const { Bun, Deno } = runtime;
  if (Bun !== undefined) {
    return async ({ port, host, fetch, bodyLimit, keepAlive, failed }) => {
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
        throw withCode(error);
      }
      return {
        runtime: 'Bun',
        port: server.port,
        stop: async (force) => {
          await server.stop(force);
        },
      };
    };
  }
  if (Deno !== undefined) {
    return async ({ port, host, fetch, failed }) => {
      const abort = new AbortController();
      // The answers being made, for a graceful stop to wait on before Deno's shutdown() (below).
      const running = new Set<Promise<Response>>();
      const serve: FetchHandler = (request, info) => {
        const answer = fetch(request, info);
        running.add(answer);
        const done = () => running.delete(answer);
        answer.then(done, done);
        return answer;
      };
      let server: DenoServer | undefined;
      const listening = new Promise<number>((resolve, reject) => {
        try {
          server = Deno.serve(
            {
              port,
              hostname: host,
              signal: abort.signal,
              onListen: (address) => resolve(address.port),
              onError: failed,
            },
            serve,
          );
        } catch (error) {
          reject(withCode(error));
        }
      });
      const bound = await listening;
      return {
        runtime: 'Deno',
        port: bound,
        stop: async (force) => {
          if (force) abort.abort();
          else {
            // Deno's shutdown() makes the body of every request in flight unreadable at once
            // (BadResource, denoland/deno#36809, Deno 2.9): one whose body is still arriving would
            // fail with a 400. So the requests in flight are answered first, the port still open;
            // a request that comes meanwhile gets the app's 503 (it is closing) without its body
            // being read. shutdown() then stops accepting and waits for the answers being sent.
            await Promise.allSettled(running);
            await server?.shutdown();
          }
          await server?.finished;
        },
      };
    };
  }
  return undefined;
}

/** Deno names socket errors (`AddrInUse`); the CLI reads Node's codes (`EADDRINUSE`). */
function withCode(error: unknown): unknown {
  if (typeof error !== 'object' || error === null) return error;
  const named = error as { name?: string; code?: string };
  const codes: Record<string, string> = {
    AddrInUse: 'EADDRINUSE',
    PermissionDenied: 'EACCES',
    AddrNotAvailable: 'EADDRNOTAVAIL',
  };
  const code = named.name === undefined ? undefined : codes[named.name];
  if (named.code === undefined && code !== undefined) named.code = code;
  return error;
}
