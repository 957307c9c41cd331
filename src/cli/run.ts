/** Dispatch: `proceed <command> [entry] [options]`. */
import { readFileSync } from 'node:fs';
import { devCommand } from './dev.js';
import { reportFailure, UsageError } from './errors.js';
import { manifestCommand } from './manifest.js';
import { openapiCommand } from './openapi.js';
import { routesCommand } from './routes.js';
import { startCommand } from './start.js';
import { type CommandName, commands, isCommandName, mainUsage } from './usage.js';

const handlers: Record<CommandName, (args: readonly string[]) => Promise<void>> = {
  start: startCommand,
  dev: devCommand,
  routes: routesCommand,
  openapi: openapiCommand,
  manifest: manifestCommand,
};

/** Commands that keep serving after they return; the others end the process when done. */
const serving = new Set<CommandName>(['start', 'dev']);

function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

function version(): string {
  const packageFile = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(packageFile, 'utf8')) as { version: string }).version;
}

/**
 * Runs the CLI. Resolves to the exit code, or to `undefined` when a server keeps running (it
 * exits by itself on SIGTERM/SIGINT).
 *
 * @example
 * const code = await run(process.argv.slice(2));
 * if (code !== undefined) process.exit(code);
 */
export async function run(args: readonly string[]): Promise<number | undefined> {
  const [first, ...rest] = args;
  try {
    if (first === undefined) throw new UsageError('No command given', mainUsage);
    if (first === '--help' || first === '-h' || first === 'help') {
      const topic = rest[0];
      process.stdout.write(
        `${topic !== undefined && isCommandName(topic) ? commands[topic].usage : mainUsage}\n`,
      );
      return 0;
    }
    if (first === '--version' || first === '-v') {
      process.stdout.write(`${version()}\n`);
      return 0;
    }
    if (!isCommandName(first)) {
      throw new UsageError(
        first.startsWith('-') ? `Unknown option "${first}"` : `Unknown command "${first}"`,
        mainUsage,
      );
    }
    if (asksForHelp(rest)) {
      process.stdout.write(`${commands[first].usage}\n`);
      return 0;
    }
    await handlers[first](rest);
    return serving.has(first) ? undefined : 0;
  } catch (error) {
    return reportFailure(error);
  }
}
