/** `proceed start`: load the app and listen; `app.listen` owns graceful shutdown. */
import type { App } from '../server/app.js';
import { loadApp, resolveEntry } from './entry.js';
import { CliError } from './errors.js';
import { absorbRepeatedSignals } from './signals.js';
import { commands, listenAddress, parseCommand } from './usage.js';

/**
 * Listens, turning the usual socket failures into messages that say what to do.
 *
 * @example
 * await serve(app, { port: 3030, host: '127.0.0.1' });
 */
export async function serve(app: App, address: { port: number; host: string }): Promise<string> {
  const { port, host } = address;
  try {
    const url = await app.listen({ port, host });
    absorbRepeatedSignals();
    return url;
  } catch (error) {
    await app.close().catch(() => undefined);
    switch ((error as NodeJS.ErrnoException).code) {
      case 'EADDRINUSE':
        throw new CliError(
          `Port ${port} is already in use on ${host} (EADDRINUSE). Stop the process using it, ` +
            'or choose another port with --port N or PORT=N.',
        );
      case 'EACCES':
        throw new CliError(
          `Not allowed to listen on port ${port} (EACCES): ports below 1024 need privileges. Choose another with --port N.`,
        );
      case 'EADDRNOTAVAIL':
      case 'ENOTFOUND':
        throw new CliError(`Cannot listen on host "${host}": no such local interface. Check --host or HOST.`);
    }
    throw error;
  }
}

/**
 * Runs `proceed start [entry] [--port N] [--host H]`.
 *
 * @example
 * await startCommand(['examples/minimal/src/app.ts', '--port', '4000']);
 */
export async function startCommand(args: readonly string[]): Promise<void> {
  const { values, entry } = parseCommand(commands.start, args);
  const address = listenAddress(values, process.env, commands.start.usage);
  const app = await loadApp(resolveEntry(process.cwd(), entry), { command: 'start', serve: true });
  await serve(app, address);
}
