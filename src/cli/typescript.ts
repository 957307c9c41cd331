/**
 * TypeScript entries. The CLI itself is compiled JavaScript and runs on plain node, so a compiled
 * app (`proceed start dist/app.js`) never loads a TypeScript toolchain. A `.ts` entry needs tsx
 * registered when node starts (`node --import tsx`): registering it later, from inside the
 * process, misreads `.ts` files outside a `"type": "module"` package as CommonJS. So a command
 * that meets a `.ts` entry runs again in a child process that has tsx loaded.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runtime } from '../http/runtime.js';
import { displayPath } from './display.js';
import { CliError } from './errors.js';
import { exitCodeOf, forwardSignals, stopWhenOrphanedUnderNpx } from './signals.js';

const typescriptExtensions = new Set(['.ts', '.mts', '.cts', '.tsx']);

/** Whether node needs a TypeScript loader to import this file. */
export function isTypeScript(file: string): boolean {
  return typescriptExtensions.has(extname(file).toLowerCase());
}

/** Bun and Deno import TypeScript themselves; Node needs tsx. */
let loaderPresent = runtime.importsTypeScript;

/** Called once by a process that node started with tsx (typescript-main, a worker of a `.ts` app). */
export function typescriptLoaded(): void {
  loaderPresent = true;
}

/** Thrown by `loadApp` for a `.ts` entry in a process without tsx; `run` answers with a child that has it. */
export class NeedsTypeScript extends Error {
  override readonly name = 'NeedsTypeScript';

  constructor(readonly entry: string) {
    super(`${entry} is TypeScript; this process has no TypeScript loader`);
  }
}

/** Throws {@link NeedsTypeScript} when this process cannot import `file`. */
export function assertImportable(file: string): void {
  if (isTypeScript(file) && !loaderPresent) throw new NeedsTypeScript(file);
}

/**
 * The node arguments that load tsx: the app's own copy first (its devDependency, looked up from
 * the entry, then from the working directory), then the one installed beside Proceed. Without
 * any, a {@link CliError} that says what to do.
 *
 * @example
 * spawn(process.execPath, [...typescriptLoaderArgs(process.cwd(), 'src/app.ts'), 'runner.js']);
 */
export function typescriptLoaderArgs(cwd: string, entry: string): string[] {
  for (const base of [entry, join(cwd, 'package.json'), fileURLToPath(import.meta.url)]) {
    try {
      return ['--import', pathToFileURL(createRequire(base).resolve('tsx')).href];
    } catch {
      // not installed there; try the next place
    }
  }
  throw new CliError(
    `${displayPath(entry, cwd)} is TypeScript, and running TypeScript needs tsx, which is not installed.\n` +
      'Install it for development (npm install --save-dev tsx), or build the app and start the ' +
      'compiled JavaScript: proceed start dist/app.js',
  );
}

/** A module beside this one, in the same form (`.js` compiled, `.ts` when run from source). */
export function sibling(name: string): string {
  return fileURLToPath(new URL(`./${name}${extname(fileURLToPath(import.meta.url))}`, import.meta.url));
}

/**
 * Runs the CLI again with `args` in a child process that has tsx loaded, forwarding signals,
 * and resolves to the child's exit code.
 *
 * @example
 * return await runWithTypeScript(['routes', 'src/app.ts'], 'src/app.ts');
 */
export async function runWithTypeScript(args: readonly string[], entry: string): Promise<number> {
  const child = spawn(
    process.execPath,
    [...process.execArgv, ...typescriptLoaderArgs(process.cwd(), entry), sibling('typescript-main'), ...args],
    { stdio: 'inherit' },
  );
  const stopForwarding = forwardSignals(() => child);
  stopWhenOrphanedUnderNpx();
  try {
    return await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code, signal) => resolve(exitCodeOf(code, signal)));
    });
  } finally {
    stopForwarding();
  }
}
