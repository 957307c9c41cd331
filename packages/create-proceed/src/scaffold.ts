/**
 * Writes a new Proceed app into a directory: the files of `template/` (with `gitignore` and
 * `dockerignore` renamed to their dotted names, which npm would drop from a package), a README
 * naming the app, and a package.json with its scripts and dependencies.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dependencyVersions, devDependencyVersions, runtimeVersions } from './versions.js';

/** A mistake the person running the scaffolder can fix; printed without a stack. */
export class ScaffoldError extends Error {
  override readonly name = 'ScaffoldError';
}

const templateDirectory = fileURLToPath(new URL('../template/', import.meta.url));
const ownPackage = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** Template files stored under another name: npm leaves `.gitignore` out of packages. */
const renamed: Record<string, string> = { gitignore: '.gitignore', dockerignore: '.dockerignore' };

export interface ScaffoldOptions {
  /** Where the app goes: a new or empty directory. */
  directory: string;
  /** The `proceedjs` dependency: a version, range or tag, a directory, or a tarball. */
  proceed?: string;
  /** Decides the start script; default this process's platform. */
  platform?: NodeJS.Platform;
  /** What the app runs on: `node` (default), `bun` or `deno` (docs/deployment.md, "Fetch runtimes"). */
  runtime?: string;
}

export const runtimes = ['node', 'bun', 'deno'] as const;
export type Runtime = (typeof runtimes)[number];

/** The runtime asked for, or a ScaffoldError that says what there is. */
export function checkRuntime(given: string | undefined): Runtime {
  if (given === undefined) return 'node';
  if ((runtimes as readonly string[]).includes(given)) return given as Runtime;
  if (given === 'workers')
    throw new ScaffoldError(
      '--runtime workers is not available yet: an app made by createApp needs Node.js APIs that Cloudflare Workers do not have. Choose node, bun or deno.',
    );
  throw new ScaffoldError(`--runtime ${given}: choose node, bun or deno`);
}

/** How each runtime runs the CLI: `proceed start` on Bun and Deno serves app.fetch natively. */
const cli = 'node_modules/proceedjs/bin/proceed.js';
const runs: Record<Runtime, (command: string) => string> = {
  node: (command) => `proceed ${command}`,
  bun: (command) => `bun ${cli} ${command}`,
  deno: (command) => `deno run --allow-all ${cli} ${command}`,
};

export interface Scaffolded {
  directory: string;
  /** The package name, from the directory's name. */
  name: string;
  /** The files written, relative to `directory`. */
  files: string[];
}

/**
 * A package name from a directory name: lowercase, and only the characters npm allows.
 *
 * @example
 * packageName('My API') // 'my-api'
 */
export function packageName(directoryName: string): string {
  const name = directoryName
    .toLowerCase()
    .replace(/[^a-z0-9._~-]+/g, '-')
    .replace(/^[._-]+|[-]+$/g, '');
  return name === '' ? 'proceed-app' : name.slice(0, 214);
}

/**
 * The `proceedjs` dependency for package.json: a path that exists (a checkout of Proceed, a
 * packed tarball) becomes `file:<absolute path>`; anything else (a version, a range, a tag, a
 * URL) is written as given. Default: this scaffolder's own version, which Proceed shares.
 *
 * @example
 * proceedDependency(undefined)             // '^0.1.0'
 * proceedDependency('./proceedjs-0.1.0.tgz') // 'file:/home/me/proceedjs-0.1.0.tgz'
 * proceedDependency('./missing.tgz')        // throws ScaffoldError
 */
export function proceedDependency(given: string | undefined, cwd = process.cwd()): string {
  if (given === undefined || given.trim() === '') return `^${ownPackage.version}`;
  const path = resolve(cwd, given.trim());
  if (existsSync(path)) return `file:${path}`;
  // A path to nothing is a mistake now, not an install that fails later in another folder.
  if (/^[./~]|\.tgz$|[\\/]/.test(given.trim())) {
    throw new ScaffoldError(`--proceed ${given}: no such file or directory (looked for ${path})`);
  }
  return given.trim();
}

function templateFiles(directory = templateDirectory, prefix = ''): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? templateFiles(join(directory, entry.name), `${prefix}${entry.name}/`)
      : [`${prefix}${entry.name}`],
  );
}

function manifest(name: string, proceed: string, platform: NodeJS.Platform, runtime: Runtime): string {
  // exec: the shell npm runs scripts in gives way to node, so a SIGTERM sent to npm reaches the
  // server. Windows' shell has no exec (and no SIGTERM to pass on).
  const exec = platform === 'win32' ? '' : 'exec ';
  return `${JSON.stringify(
    {
      name,
      version: '0.1.0',
      private: true,
      type: 'module',
      // Proceed runs on Node.js 20; the test runner (Vitest 4, Vite) needs 20.19.
      engines: { node: '>=20.19' },
      scripts: {
        // Bun and Deno watch the entry themselves; `proceed dev` restarts a Node.js child.
        dev:
          runtime === 'node'
            ? `${exec}proceed dev`
            : `${exec}${runtime} ${runtime === 'bun' ? '--watch' : 'run --allow-all --watch'} ${cli} start src/app.ts`,
        build: 'tsc -p tsconfig.build.json',
        start: `${exec}${runs[runtime]('start dist/app.js')}`,
        test: 'vitest run',
        typecheck: 'tsc --noEmit',
      },
      dependencies: { proceedjs: proceed, ...dependencyVersions },
      devDependencies: {
        ...devDependencyVersions,
        ...(runtime === 'node' ? {} : { [runtime]: runtimeVersions[runtime] }),
      },
      // esbuild (under tsx) works from its platform package; its postinstall only checks it.
      // Bun and Deno fetch their binary for this platform when they install.
      allowScripts: { esbuild: false, ...(runtime === 'node' ? {} : { [runtime]: true }) },
    },
    null,
    2,
  )}\n`;
}

/** The images and commands of the Dockerfile's last stage, per runtime. */
const images: Record<Runtime, { image: string; user: string; command: string }> = {
  node: {
    image: 'node:20-slim',
    user: 'node',
    command: '"node_modules/.bin/proceed", "start", "dist/app.js"',
  },
  bun: { image: 'oven/bun:1-slim', user: 'bun', command: `"bun", "${cli}", "start", "dist/app.js"` },
  deno: {
    image: 'denoland/deno:2',
    user: 'deno',
    command: `"deno", "run", "--allow-all", "${cli}", "start", "dist/app.js"`,
  },
};

/** A template file with the app's name and runtime filled in. */
function filled(file: string, text: string, { name, runtime }: { name: string; runtime: Runtime }): string {
  const { image, user, command } = images[runtime];
  return text
    .replaceAll('{{name}}', name)
    .replaceAll('{{runtime}}', runtime)
    .replaceAll('{{runtimeImage}}', image)
    .replaceAll('{{runtimeUser}}', user)
    .replaceAll('{{startCommand}}', command)
    .replaceAll('{{start}}', file === 'README.md' ? runs[runtime]('start dist/app.js') : '');
}

/**
 * Writes the app. Refuses a directory that exists and is not empty.
 *
 * @example
 * const { files } = await scaffold({ directory: resolve('my-app') });
 */
export async function scaffold(options: ScaffoldOptions): Promise<Scaffolded> {
  const directory = resolve(options.directory);
  const shown = relative(process.cwd(), directory) || directory;
  if (existsSync(directory)) {
    if (!statSync(directory).isDirectory())
      throw new ScaffoldError(`${shown} is a file: choose a directory for the app`);
    // A fresh `git init` or an empty clone is fine to fill.
    if (readdirSync(directory).some((entry) => entry !== '.git')) {
      throw new ScaffoldError(`${shown} is not empty: choose a new directory for the app`);
    }
  }
  const runtime = checkRuntime(options.runtime);
  const proceed = proceedDependency(options.proceed);
  const name = packageName(basename(directory));
  const written: string[] = [];
  const write = async (file: string, text: string) => {
    const target = join(directory, file);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, text);
    written.push(file);
  };

  for (const file of templateFiles()) {
    const text = await readFile(join(templateDirectory, file), 'utf8');
    await write(renamed[file] ?? file, filled(file, text, { name, runtime }));
  }
  await write('package.json', manifest(name, proceed, options.platform ?? process.platform, runtime));
  return { directory, name, files: written.sort() };
}
