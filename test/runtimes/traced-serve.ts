/**
 * Serves the traced app (test/fixtures/traced-app.ts) on the runtime that runs this file, with
 * the runtime's own server (`Bun.serve`, `Deno.serve`), on a free port of 127.0.0.1, and prints
 * `{"address":…}` once it listens. The runtimes suite of src/opentelemetry sends its requests there.
 */
import { tracedFetch } from '../fixtures/traced-app.js';

interface BunRuntime {
  serve(options: {
    port: number;
    hostname: string;
    fetch: (request: Request, server: unknown) => Promise<Response>;
  }): { port: number };
}
interface DenoRuntime {
  serve(
    options: { port: number; hostname: string; onListen: (address: { port: number }) => void },
    handler: (request: Request, info: unknown) => Promise<Response>,
  ): unknown;
}

const runtime = globalThis as { Bun?: BunRuntime; Deno?: DenoRuntime };
const announce = (port: number) => console.log(JSON.stringify({ address: `http://127.0.0.1:${port}` }));
// The runtime's second argument goes on to app.fetch, which reads the client's address from it.
if (runtime.Bun !== undefined) {
  announce(runtime.Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: tracedFetch }).port);
} else if (runtime.Deno !== undefined) {
  runtime.Deno.serve({ port: 0, hostname: '127.0.0.1', onListen: ({ port }) => announce(port) }, tracedFetch);
} else {
  throw new Error('test/runtimes/traced-serve.ts runs on Bun or Deno');
}
