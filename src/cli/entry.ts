/**
 * Finding and loading an app entry: a module whose default export is an App (from `createApp`)
 * or a function, sync or async, that returns one.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { App } from '../server/app.js';
import { type EntryContext, loadingForInspection } from '../server/entry-context.js';
import { displayPath } from './display.js';
import { CliError } from './errors.js';
import { isUnplacedSyntaxError, syntaxErrorPlace } from './syntax-location.js';
import { assertImportable } from './typescript.js';

/** Tried in this order when no entry is given. */
export const defaultEntries = ['src/app.ts', 'app.ts', 'src/index.ts'] as const;

/**
 * The entry `package.json` names for the CLI (`"proceed": { "entry": "src/main.ts" }`), for an
 * app whose entry is not at a default place; undefined when it names none.
 */
function packageEntry(cwd: string): string | undefined {
  const file = join(cwd, 'package.json');
  if (!existsSync(file)) return undefined;
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  const entry = (manifest as { proceed?: { entry?: unknown } } | null)?.proceed?.entry;
  if (entry === undefined) return undefined;
  if (typeof entry !== 'string' || entry === '')
    throw new CliError(
      'package.json: "proceed.entry" must be the path of the app entry, e.g. "src/main.ts"',
      2,
    );
  return entry;
}

/**
 * The absolute path of the entry: the one given (relative to `cwd`), the one `package.json`
 * names (`proceed.entry`), or the first default that exists. A missing file is a
 * {@link CliError} with exit code 2 that names what was tried.
 *
 * @example
 * resolveEntry('/project')            // '/project/src/app.ts'
 * resolveEntry('/project', 'api.ts')  // '/project/api.ts'
 */
export function resolveEntry(cwd: string, given?: string): string {
  if (given !== undefined) {
    const file = isAbsolute(given) ? given : resolve(cwd, given);
    if (!existsSync(file) || !statSync(file).isFile()) {
      throw new CliError(`App entry not found: ${given} (looked for ${file})`, 2);
    }
    return file;
  }
  const named = packageEntry(cwd);
  if (named !== undefined) {
    const file = resolve(cwd, named);
    if (!existsSync(file) || !statSync(file).isFile())
      throw new CliError(
        `App entry not found: ${named}, which package.json names as proceed.entry (looked for ${file})`,
        2,
      );
    return file;
  }
  for (const candidate of defaultEntries) {
    const file = join(cwd, candidate);
    if (existsSync(file) && statSync(file).isFile()) return file;
  }
  throw new CliError(
    `No app entry found in ${cwd}: tried ${defaultEntries.join(', ')}.\n` +
      'Pass the entry explicitly, e.g. `proceed start path/to/app.ts`, or name it in package.json: "proceed": { "entry": "src/main.ts" }.',
    2,
  );
}

/** Whatever quacks like an App: the CLI may load a second copy of the framework (dist vs src). */
export function isApp(value: unknown): value is App {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<Record<keyof App, unknown>>;
  return (
    typeof candidate.listen === 'function' &&
    typeof candidate.close === 'function' &&
    Array.isArray(candidate.routes) &&
    Array.isArray(candidate.mounts)
  );
}

/**
 * Imports an entry and returns its app. A TypeScript entry in a process without tsx throws
 * `NeedsTypeScript`, which `run` answers by running the command again with tsx (typescript.ts).
 *
 * @example
 * const app = await loadApp(resolveEntry(process.cwd()));
 * console.log(app.routes.length);
 */
export async function loadApp(
  file: string,
  entry: EntryContext = { command: 'start', serve: true, workers: 1, clustered: false },
): Promise<App> {
  assertImportable(file);
  const shown = displayPath(file);
  // Apps made while an entry is only read (at import, or by its default export) are inspected.
  return entry.serve
    ? loadEntry(file, shown, entry)
    : loadingForInspection(() => loadEntry(file, shown, entry));
}

async function loadEntry(file: string, shown: string, entry: EntryContext): Promise<App> {
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (error) {
    // A compiled entry, or a module it imports, that does not parse: say which file and line.
    const place = isUnplacedSyntaxError(error) ? await syntaxErrorPlace(file) : undefined;
    if (place === undefined) throw error;
    throw new CliError(`${shown} could not be loaded: ${(error as Error).message}\n${place}`);
  }
  const exported = module.default;
  if (exported === undefined) {
    throw new CliError(
      `${shown} has no default export. Export the app: \`export default createApp(...).mount([...])\`, ` +
        'or a function returning it: `export default async () => createApp(...)`.',
      2,
    );
  }
  const app =
    typeof exported === 'function' ? await (exported as (entry: EntryContext) => unknown)(entry) : exported;
  if (!isApp(app)) {
    const what = typeof exported === 'function' ? 'its default export returned' : 'its default export is';
    throw new CliError(
      `${shown}: ${what} ${describe(app)}, not an app. Export the result of createApp(), or a function returning it.`,
      2,
    );
  }
  return app;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}
