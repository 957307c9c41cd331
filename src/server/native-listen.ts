/**
 * `app.listen` on Bun and Deno: `app.fetch` served by the runtime's own server
 * (src/http/runtimes/), and its graceful stop (docs/deployment.md, "Fetch runtimes").
 */
import type { Logger } from 'pino';
import { problemAnswer } from '../http/problems.js';
import { type NativeServe, type NativeServer, runtime } from '../http/runtime.js';
import type { FetchHandler } from './fetch-entry.js';

export async function listenNatively(
  serve: NativeServe,
  options: {
    port: number;
    host: string;
    fetch: FetchHandler;
    /** The largest body a route takes: the runtime's own cap must let it through to the app's limits. */
    bodyLimit: number;
    keepAlive: number;
    exposeErrors: boolean;
    log: Logger;
    /** The server's name in the log line; the runtime's app.fetch unless said. */
    server?: string | undefined;
  },
): Promise<{ server: NativeServer; address: string; announce: () => void }> {
  const { host, log } = options;
  const server = await serve({
    port: options.port,
    host,
    fetch: options.fetch,
    bodyLimit: options.bodyLimit,
    keepAlive: options.keepAlive,
    // When app.fetch itself fails: a problem+json 500, never the runtime's own page.
    failed: (error) => {
      const problem = problemAnswer(error, { exposeErrors: options.exposeErrors, log });
      return new Response(problem.body, { status: problem.status, headers: problem.headers });
    },
  });
  const address = `http://${host.includes(':') ? `[${host}]` : host}:${server.port}`;
  return {
    server,
    address,
    // Said once the app's own listeners (a metrics port) have listened too: a log that says the
    // app listens is not followed by its failing to.
    announce: () =>
      log.info(`Server listening at ${address} (${runtime.name}, ${options.server ?? 'app.fetch'})`),
  };
}

/** Stops the server: the requests in flight finish, up to `timeout` ms; then their connections close. */
export async function stopNatively(server: NativeServer, timeout: number, log: Logger): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), timeout);
  });
  const stopped = await Promise.race([server.stop(false).then(() => 'stopped' as const), late]);
  clearTimeout(timer);
  if (stopped === 'late') {
    log.warn(`Requests still running after ${timeout} ms; closing their connections`);
    await server.stop(true);
  }
}
