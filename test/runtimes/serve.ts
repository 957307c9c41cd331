/**
 * Serves the conformance app with `app.fetch` on the runtime that runs this file (`Bun.serve` on
 * Bun, `app.listen` on Deno), on a free port of 127.0.0.1, and prints `{"address":…}` once it
 * listens. The suite sends its requests there over a real socket.
 */
import { buildConformanceApp } from '../fixtures/conformance-app.js';

type FetchHandler = (request: Request) => Promise<Response>;
interface BunRuntime {
  serve(options: { port: number; hostname: string; fetch: FetchHandler; websocket: unknown }): {
    port: number;
  };
}
interface DenoRuntime {
  serve: unknown;
}

const app = await buildConformanceApp();
const runtime = globalThis as { Bun?: BunRuntime; Deno?: DenoRuntime };
const announce = (origin: string) => console.log(JSON.stringify({ address: origin }));
if (runtime.Bun !== undefined) {
  // Bun: app.fetch handed to Bun.serve, as docs/deployment.md shows.
  announce(
    `http://127.0.0.1:${runtime.Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: app.fetch, websocket: app.websocket }).port}`,
  );
} else if (runtime.Deno !== undefined) {
  // Deno: app.listen, which serves app.fetch with Deno.serve.
  announce(await app.listen({ port: 0, host: '127.0.0.1', logRoutes: false }));
} else {
  throw new Error('test/runtimes/serve.ts runs on Bun or Deno');
}
