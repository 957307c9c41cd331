/** Dispatch: `proceed <command> [entry] [options]`. */
import { readFileSync } from 'node:fs';
import { reportFailure, UsageError } from './errors.js';
import { NeedsTypeScript, runWithTypeScript } from './typescript.js';
import { type CommandName, commands, isCommandName, mainUsage } from './usage.js';

/**
 * Each command resolves to its exit code, or to `undefined` while it keeps serving. A command's
 * module loads only when it runs: `proceed start` should not pay for the OpenAPI generator.
 */
const handlers: Record<CommandName, (args: readonly string[]) => Promise<number | undefined>> = {
  start: async (args) => (await import('./start.js')).startCommand(args),
  dev: async (args) => {
    await (await import('./dev.js')).devCommand(args);
    return undefined;
  },
  routes: async (args) => {
    await (await import('./routes.js')).routesCommand(args);
    return 0;
  },
  openapi: async (args) => {
    await (await import('./openapi.js')).openapiCommand(args);
    return 0;
  },
  manifest: async (args) => {
    await (await import('./manifest.js')).manifestCommand(args);
    return 0;
  },
  generate: async (args) => (await import('./generate/command.js')).generateCommand(args),
  destroy: async (args) => (await import('./generate/command.js')).destroyCommand(args),
};

function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

function version(): string {
  const packageFile = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(packageFile, 'utf8')) as { version: string }).version;
}

/** A closed pipe on standard output ends the command: what the reader took is all it wanted. */
function endsWithItsReader(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
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
    // A server's logs are its own business; a command that prints and ends stops quietly when
    // its reader does (`proceed openapi | head`), as other command-line tools do.
    if (first !== 'start' && first !== 'dev') endsWithItsReader();
    if (asksForHelp(rest)) {
      process.stdout.write(`${commands[first].usage}\n`);
      return 0;
    }
    return await handlers[first](rest);
  } catch (error) {
    if (!(error instanceof NeedsTypeScript)) return reportFailure(error);
    try {
      return await runWithTypeScript(args, error.entry);
    } catch (failure) {
      return reportFailure(failure);
    }
  }
}
