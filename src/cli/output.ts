/** Shared by the commands that load an app only to print something about it. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { App } from '../server/app.js';
import { loadApp, resolveEntry } from './entry.js';
import { CliError } from './errors.js';

/**
 * Loads the app behind `entry`, hands it to `use`, and closes it. The app's logs are silenced
 * (unless LOG_LEVEL is set): the command only reads the app, so its request lines and start-up
 * warnings (a development JWT secret, say) would be noise, and on standard output they would
 * corrupt the JSON a pipe receives.
 *
 * @example
 * await withApp('routes', undefined, (app) => app.routes.length);
 */
export async function withApp<T>(
  command: 'routes' | 'openapi' | 'manifest',
  entry: string | undefined,
  use: (app: App) => T | Promise<T>,
): Promise<T> {
  // An empty LOG_LEVEL is an unset one, to the logger as here.
  if (process.env.LOG_LEVEL === undefined || process.env.LOG_LEVEL === '') process.env.LOG_LEVEL = 'silent';
  const app = await loadApp(resolveEntry(process.cwd(), entry), {
    command,
    serve: false,
    workers: 1,
    clustered: false,
  });
  // An app that sets its own logger level is silenced too: its request lines are not the output.
  if (process.env.LOG_LEVEL === 'silent') app.log.level = 'silent';
  try {
    return await use(app);
  } finally {
    await app.close();
  }
}

/**
 * Writes text to a file (creating its directory) or to standard output, and waits until it
 * is flushed, so that an exit right after loses nothing.
 *
 * @example
 * await writeOutput('{}\n', 'openapi.json');
 */
export async function writeOutput(text: string, file: string | undefined, summary?: string): Promise<void> {
  if (file !== undefined) {
    const target = resolve(process.cwd(), file);
    try {
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, text);
    } catch (error) {
      // The user's path, not the CLI: one line saying what is wrong with it.
      const { code, message } = error as NodeJS.ErrnoException;
      throw new CliError(
        `Could not write ${file}: ${code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : message}`,
      );
    }
    // The file holds the output, so standard output can say what was written.
    if (summary !== undefined) process.stdout.write(`Wrote ${file} (${summary})\n`);
    return;
  }
  await new Promise<void>((done, fail) => {
    // A reader that closed the pipe early (`| head`) took what it wanted (src/cli/run.ts).
    process.stdout.write(text, (error) =>
      error && (error as NodeJS.ErrnoException).code !== 'EPIPE' ? fail(error) : done(),
    );
  });
}
