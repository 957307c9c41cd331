/**
 * Writes a new Proceed app into a directory: the files of `template/` (with `gitignore` and
 * `dockerignore` renamed to their dotted names, which npm would drop from a package), a README
 * naming the app, and a package.json with its scripts and dependencies.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dependencyVersions, devDependencyVersions } from './versions.js';

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
}

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
 */
export function proceedDependency(given: string | undefined, cwd = process.cwd()): string {
  if (given === undefined || given.trim() === '') return `^${ownPackage.version}`;
  const path = resolve(cwd, given);
  return existsSync(path) ? `file:${path}` : given.trim();
}

function templateFiles(directory = templateDirectory, prefix = ''): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? templateFiles(join(directory, entry.name), `${prefix}${entry.name}/`)
      : [`${prefix}${entry.name}`],
  );
}

function manifest(name: string, proceed: string, platform: NodeJS.Platform): string {
  return `${JSON.stringify(
    {
      name,
      version: '0.1.0',
      private: true,
      type: 'module',
      engines: { node: '>=20' },
      scripts: {
        dev: 'proceed dev',
        build: 'tsc -p tsconfig.build.json',
        // exec: the shell npm runs scripts in gives way to node, so a SIGTERM sent to npm reaches
        // the server. Windows' shell has no exec (and no SIGTERM to pass on).
        start: `${platform === 'win32' ? '' : 'exec '}proceed start dist/app.js`,
        test: 'vitest run',
        typecheck: 'tsc --noEmit',
      },
      dependencies: { proceedjs: proceed, ...dependencyVersions },
      devDependencies: { ...devDependencyVersions },
    },
    null,
    2,
  )}\n`;
}

/**
 * Writes the app. Refuses a directory that exists and is not empty.
 *
 * @example
 * const { files } = await scaffold({ directory: resolve('my-app') });
 */
export async function scaffold(options: ScaffoldOptions): Promise<Scaffolded> {
  const directory = resolve(options.directory);
  if (existsSync(directory) && readdirSync(directory).length > 0) {
    throw new ScaffoldError(
      `${relative(process.cwd(), directory) || directory} is not empty: choose a new directory for the app`,
    );
  }
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
    await write(renamed[file] ?? file, file === 'README.md' ? text.replaceAll('{{name}}', name) : text);
  }
  await write(
    'package.json',
    manifest(name, proceedDependency(options.proceed), options.platform ?? process.platform),
  );
  return { directory, name, files: written.sort() };
}
