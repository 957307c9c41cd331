/**
 * `proceed start`: load the app and listen; `app.listen` owns graceful shutdown. With
 * `--workers N` this process supervises N that do (workers.ts).
 */
import { createServer } from 'node:net';
import { runtime } from '../http/runtime.js';
import type { App } from '../server/app.js';
import { loadApp, resolveEntry } from './entry.js';
import { CliError } from './errors.js';
import { absorbRepeatedSignals, stopWhenOrphanedUnderNpx } from './signals.js';
import { commands, listenAddress, parseCommand, parseWorkers } from './usage.js';

/**
 * Listens, turning the usual socket failures into messages that say what to do.
 *
 * @example
 * await serve(app, { port: 3030, host: '127.0.0.1' });
 */
export async function serve(
  app: App,
  address: { port: number; host: string },
  options: { logRoutes?: boolean } = {},
): Promise<string> {
  try {
    const url = await app.listen({ ...address, logRoutes: options.logRoutes ?? true });
    absorbRepeatedSignals();
    return url;
  } catch (error) {
    await app.close().catch(() => undefined);
    throw listenFailure(error, address);
  }
}

/** The usual socket failures as messages that say what to do; anything else as it is. */
function listenFailure(error: unknown, { port, host }: { port: number; host: string }): unknown {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'EADDRINUSE':
      return new CliError(
        `Port ${port} is already in use on ${host} (EADDRINUSE). Stop the process using it, ` +
          'or choose another port with --port N or PORT=N.',
      );
    case 'EACCES':
      return new CliError(
        `Not allowed to listen on port ${port} (EACCES): ports below 1024 need privileges. Choose another with --port N.`,
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return new CliError(`Cannot listen on host "${host}": no such local interface. Check --host or HOST.`);
  }
  return error;
}

/**
 * Binds the address for a moment, before the app loads: a port in use is reported at once, not
 * after a database has started. (Another process may still take it in between; listening then
 * reports the same error.)
 */
async function checkAddress(address: { port: number; host: string }): Promise<void> {
  if (address.port === 0) return;
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen(address.port, address.host, resolve);
    });
  } catch (error) {
    throw listenFailure(error, address);
  }
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

/**
 * Runs `proceed start [entry] [--port N] [--host H] [--workers N|auto]`. Resolves once serving
 * (the process ends on SIGTERM/SIGINT), or with `--workers` once every worker has stopped, to
 * the exit code.
 *
 * @example
 * await startCommand(['dist/app.js', '--port', '4000']);
 */
export async function startCommand(args: readonly string[]): Promise<number | undefined> {
  const { values, entry } = parseCommand(commands.start, args);
  const address = listenAddress(values, process.env, commands.start.usage);
  const workers =
    values.workers === undefined ? undefined : parseWorkers(values.workers, commands.start.usage);
  const cwd = process.cwd();
  const file = resolveEntry(cwd, entry);
  await checkAddress(address);
  if (workers !== undefined) {
    if (runtime.name !== 'Node.js')
      throw new CliError(
        `--workers runs on Node.js (node:cluster); on ${runtime.name} start one process per core behind a load balancer (docs/deployment.md, "Fetch runtimes").`,
      );
    const { runWorkers } = await import('./workers.js');
    stopWhenOrphanedUnderNpx();
    return runWorkers({ entry: file, ...address, count: workers, cwd });
  }
  const app = await loadApp(file, { command: 'start', serve: true, workers: 1, clustered: false });
  await serve(app, address);
  stopWhenOrphanedUnderNpx();
  return undefined;
}
