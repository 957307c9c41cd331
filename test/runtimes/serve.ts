/**
 * Serves the conformance app with `app.fetch` on the runtime that runs this file (Bun or Deno),
 * on a free port of 127.0.0.1, and prints `{"address":…}` once it listens. The suite sends its
 * requests there over a real socket.
 */
import { buildConformanceApp } from '../fixtures/conformance-app.js';

type FetchHandler = (request: Request) => Promise<Response>;
interface BunRuntime {
  serve(options: { port: number; hostname: string; fetch: FetchHandler }): { port: number };
}
interface DenoRuntime {
  serve(
    options: { port: number; hostname: string; onListen: (address: { port: number }) => void },
    handler: FetchHandler,
  ): unknown;
}

const app = buildConformanceApp();
const runtime = globalThis as { Bun?: BunRuntime; Deno?: DenoRuntime };
const announce = (port: number) => console.log(JSON.stringify({ address: `http://127.0.0.1:${port}` }));
if (runtime.Bun !== undefined) {
  announce(runtime.Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: app.fetch }).port);
} else if (runtime.Deno !== undefined) {
  runtime.Deno.serve({ port: 0, hostname: '127.0.0.1', onListen: ({ port }) => announce(port) }, app.fetch);
} else {
  throw new Error('test/runtimes/serve.ts runs on Bun or Deno');
}
