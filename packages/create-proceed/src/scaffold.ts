/**
 * Writes a new Proceed app into a directory from one of two templates, and a package.json with
 * its scripts and dependencies:
 * - `app` (the default): notes with an owner, auth, PostgreSQL or PGlite through Drizzle,
 *   migrations and tests; its own files are in `template/app/`;
 * - `minimal`: the README's in-memory tour; its own files are in `template/` itself.
 * Both take the rest of `template/` (the tsconfig, the Dockerfile, …), with `gitignore` and
 * `dockerignore` renamed to their dotted names, which npm would drop from a package.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  appDependencyVersions,
  appDevDependencyVersions,
  dependencyVersions,
  devDependencyVersions,
  runtimeVersions,
} from './versions.js';

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
  /**
   * What the app runs on: `node` (default), `bun`, `deno` or `workers` (Cloudflare Workers;
   * docs/deployment.md, "Fetch runtimes").
   */
  runtime?: string;
  /** `app` (default): the notes API on a database; `minimal`: the in-memory tour. */
  template?: string;
}

export const templates = ['app', 'minimal'] as const;
export type Template = (typeof templates)[number];

export const runtimes = ['node', 'bun', 'deno', 'workers'] as const;
export type Runtime = (typeof runtimes)[number];

/** The template asked for, or a ScaffoldError that says what there is. */
export function checkTemplate(given: string | undefined): Template {
  if (given === undefined) return 'app';
  if ((templates as readonly string[]).includes(given)) return given as Template;
  throw new ScaffoldError(
    `--template ${given}: choose app (notes with auth on a database, the default) or minimal (one file, in memory)`,
  );
}

/** The runtime asked for, or a ScaffoldError that says what there is. */
export function checkRuntime(given: string | undefined, template: Template = 'minimal'): Runtime {
  if (given === undefined) return 'node';
  if (!(runtimes as readonly string[]).includes(given))
    throw new ScaffoldError(`--runtime ${given}: choose node, bun, deno or workers`);
  if (given === 'workers' && template === 'app')
    throw new ScaffoldError(
      '--runtime workers: the app template keeps its data in PostgreSQL or an embedded PGlite, which a Worker cannot open; add --template minimal for a Worker',
    );
  return given as Runtime;
}

/**
 * Whether a file of `template/` is the minimal template's own; the app template has its own
 * `src/`, README and so on in `template/app/`, and takes the rest (a file of the same name there
 * wins).
 */
const minimalOwn = (file: string) =>
  file.startsWith('src/') || file === 'README.md' || file === 'wrangler.jsonc';

/** The npm package each runtime other than Node.js comes from. */
const runtimePackage = { bun: 'bun', deno: 'deno', workers: 'wrangler' } as const;

/** Template files only some runtimes get: a Worker is deployed by Wrangler, not in a container. */
const onlyFor: Record<string, readonly Runtime[]> = {
  Dockerfile: ['node', 'bun', 'deno'],
  dockerignore: ['node', 'bun', 'deno'],
  'src/worker.ts': ['workers'],
  'wrangler.jsonc': ['workers'],
};

/** How each runtime runs the CLI: `proceed start` on Bun and Deno serves app.fetch natively. */
const cli = 'node_modules/proceedjs/bin/proceed.js';
const runs: Record<Exclude<Runtime, 'workers'>, (command: string) => string> = {
  node: (command) => `proceed ${command}`,
  bun: (command) => `bun ${cli} ${command}`,
  deno: (command) => `deno run --allow-all ${cli} ${command}`,
};

/** The scripts that differ per runtime; a Worker is served by Wrangler, locally and deployed. */
function runtimeScripts(runtime: Runtime, exec: string): Record<string, string> {
  if (runtime === 'workers')
    return {
      dev: `${exec}wrangler dev`,
      // What `deploy` would upload, bundled into dist/ without uploading it.
      build: 'wrangler deploy --dry-run --outdir dist',
      deploy: 'wrangler deploy',
    };
  return {
    // Bun and Deno watch the entry themselves; `proceed dev` restarts a Node.js child. Deno
    // reads `./x.js` in a TypeScript import as `./x.ts` only with --sloppy-imports.
    dev:
      runtime === 'node'
        ? `${exec}proceed dev`
        : `${exec}${runtime} ${runtime === 'bun' ? '--watch' : 'run --allow-all --sloppy-imports --watch'} ${cli} start src/app.ts`,
    build: 'tsc -p tsconfig.build.json',
    start: `${exec}${runs[runtime]('start dist/app.js')}`,
  };
}

/** Packages whose install scripts stay off: what they fetch, npm already installed. */
const quietInstalls: Record<Runtime, Record<string, boolean>> = {
  node: {},
  bun: { bun: true },
  deno: { deno: true },
  // workerd's binary comes as its platform package; sharp (under miniflare) is not used.
  workers: { workerd: false, sharp: false },
};

export interface Scaffolded {
  directory: string;
  template: Template;
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

/** The object with its keys in order, as npm writes dependencies. */
const sorted = (versions: Record<string, string>) =>
  Object.fromEntries(Object.entries(versions).sort(([a], [b]) => (a < b ? -1 : 1)));

/** The files of a template: where each is read from in `template/`, and where it goes in the app. */
function filesOf(template: Template): { from: string; to: string }[] {
  const all = templateFiles();
  if (template === 'minimal')
    return all.filter((file) => !file.startsWith('app/')).map((file) => ({ from: file, to: file }));
  const own = all.filter((file) => file.startsWith('app/')).map((file) => file.slice('app/'.length));
  return [
    ...all
      .filter((file) => !file.startsWith('app/') && !minimalOwn(file) && !own.includes(file))
      .map((file) => ({ from: file, to: file })),
    ...own.map((file) => ({ from: `app/${file}`, to: file })),
  ];
}

function manifest(
  name: string,
  proceed: string,
  platform: NodeJS.Platform,
  runtime: Runtime,
  template: Template,
): string {
  // exec: the shell npm runs scripts in gives way to node, so a SIGTERM sent to npm reaches the
  // server. Windows' shell has no exec (and no SIGTERM to pass on).
  const exec = platform === 'win32' ? '' : 'exec ';
  const app = template === 'app';
  return `${JSON.stringify(
    {
      name,
      version: '0.1.0',
      private: true,
      type: 'module',
      // Proceed runs on Node.js 20; the test runner (Vitest 4, Vite) needs 20.19.
      engines: { node: '>=20.19' },
      scripts: {
        ...runtimeScripts(runtime, exec),
        test: 'vitest run',
        typecheck: 'tsc --noEmit',
        // The SQL migration of what changed in src/schema.ts, into drizzle/.
        ...(app ? { 'db:generate': 'drizzle-kit generate', seed: 'tsx src/seed.ts' } : {}),
      },
      dependencies: sorted({
        proceedjs: proceed,
        ...dependencyVersions,
        ...(app ? appDependencyVersions : {}),
      }),
      devDependencies: sorted({
        ...devDependencyVersions,
        ...(app ? appDevDependencyVersions : {}),
        ...(runtime === 'node'
          ? {}
          : { [runtimePackage[runtime]]: runtimeVersions[runtimePackage[runtime]] }),
      }),
      // esbuild (under tsx) works from its platform package; its postinstall only checks it.
      // Bun and Deno fetch their binary for this platform when they install.
      allowScripts: { esbuild: false, ...quietInstalls[runtime] },
    },
    null,
    2,
  )}\n`;
}

/** The images and commands of the Dockerfile's last stage, per runtime. */
const images: Record<Exclude<Runtime, 'workers'>, { image: string; user: string; command: string }> = {
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

/** The README's commands and production notes, per runtime. */
function readmeParts(runtime: Runtime): { commands: string; layout: string; production: string } {
  if (runtime === 'workers')
    return {
      layout: [
        '- `src/worker.ts`: the Worker, which hands every request to `app.fetch`.',
        '- `wrangler.jsonc`: its name, entry, compatibility date and the `nodejs_compat` flag Proceed needs.',
      ].join('\n'),
      commands: [
        '| `npm run dev` | serves the Worker (`src/worker.ts`) on workerd at http://127.0.0.1:3030, reloading on every change |',
        '| `npm test` | runs the tests (`src/*.test.ts`, Vitest; `app.inject` needs no socket; `src/serve.test.ts` serves the Worker under `wrangler dev`) |',
        '| `npm run build` | bundles what `deploy` would upload into `dist/`, without uploading it |',
        '| `npm run deploy` | publishes the Worker to Cloudflare (`wrangler login` first) |',
      ].join('\n'),
      production: [
        '`npm run deploy` publishes the Worker named in `wrangler.jsonc`. Cloudflare runs it in many',
        "isolates and compresses its answers at the edge. What the app keeps in memory (this example's",
        '`Map` of notes, in-memory rate limits) lives in one isolate and is gone when Cloudflare evicts it:',
        'keep data in a database before going live. Add routes beside the procedures with `app.route()`;',
        '`app.server` (Fastify, on Node only), the docs UI and the metrics listener are refused on Workers',
        '(Proceed\'s docs/deployment.md, "Cloudflare Workers").',
      ].join('\n'),
    };
  const start = runs[runtime]('start dist/app.js');
  return {
    layout: [
      '- `Dockerfile`: the production image. It builds with the dev dependencies, then runs the',
      '  compiled app with the production dependencies only.',
    ].join('\n'),
    commands: [
      '| `npm run dev` | runs `src/app.ts` on http://127.0.0.1:3030 and restarts it on every change |',
      '| `npm test` | runs the tests (`src/*.test.ts`, Vitest; `app.inject` needs no socket) |',
      '| `npm run build` | compiles `src/` to `dist/` |',
      `| \`npm start\` | runs the compiled app on ${runtime}: \`${start}\` |`,
    ].join('\n'),
    production: [
      '```sh',
      'npm run build',
      'NODE_ENV=production HOST=0.0.0.0 npm start',
      'docker build -t {{name}} . && docker run -p 3030:3030 {{name}}',
      '```',
      '',
      '`PORT` (default 3030) and `HOST` (default 127.0.0.1) say where to listen. SIGTERM or SIGINT',
      'stops accepting connections, lets the requests in flight finish, and exits 0. Logs are JSON',
      'lines, and readable ones in a terminal outside production (pino-pretty, a dev dependency).',
      '',
      'On Node.js, `npm start -- --workers auto` serves from one process per CPU (on Bun and Deno, run',
      'one process per core behind a load balancer). Each process has its own memory, so do that once',
      'the app keeps its data in a database: the notes of this example live in a `Map` of one process,',
      'and the others would not know them.',
    ].join('\n'),
  };
}

/**
 * What the app template's image has besides the compiled app: its migrations, and a directory for
 * the embedded database that the server's user may write to.
 */
const appImageFiles = (user: string) =>
  ['COPY --from=build /app/drizzle ./drizzle', `RUN mkdir .data && chown ${user} .data`, ''].join('\n');

/**
 * The app's directory as the next steps name it: relative to where the command ran when it is
 * below it, `.` when it is that directory, else absolute (`cd ../../tmp/x` for an app made at
 * /tmp/x would only work from here, and reads as a puzzle).
 */
export function shownDirectory(directory: string, cwd = process.cwd()): string {
  const below = relative(cwd, directory);
  if (below === '') return '.';
  return below === '..' || below.startsWith(`..${sep}`) || isAbsolute(below) ? resolve(directory) : below;
}

/**
 * The API's title in its documents and docs page, from the directory's name as the user wrote
 * it: its words capitalized, with "API" at the end unless it has one.
 *
 * @example
 * apiTitle('bookmarks')     // 'Bookmarks API'
 * apiTitle('my-notes-api')  // 'My Notes API'
 */
export function apiTitle(directoryName: string): string {
  const words = directoryName.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
  if (words.length > 0 && words.at(-1)?.toLowerCase() === 'api') words.pop();
  const named = words.map((word) => `${word.charAt(0).toUpperCase()}${word.slice(1)}`).join(' ');
  return named === '' ? 'API' : `${named} API`;
}

/** The Dockerfile's line that brings a vendored framework tarball in before `npm ci`. */
const vendoredCopy = (vendored: string | undefined) =>
  vendored === undefined ? '' : `COPY ${vendoredDirectory} ./${vendoredDirectory}\n`;

/** Where the app keeps a framework tarball given to the scaffolder: inside it, so that it builds anywhere. */
const vendoredDirectory = 'vendor';

/** A template file with the app's name, runtime and template filled in. */
function filled(
  text: string,
  {
    name,
    title,
    runtime,
    template,
    vendored,
  }: { name: string; title: string; runtime: Runtime; template: Template; vendored: string | undefined },
): string {
  const docker = runtime === 'workers' ? undefined : images[runtime];
  const readme = readmeParts(runtime);
  return (
    text
      .replaceAll(
        '{{appImageFiles}}',
        template === 'app' && docker !== undefined ? appImageFiles(docker.user) : '',
      )
      .replaceAll('{{start}}', runtime === 'workers' ? '' : runs[runtime]('start dist/app.js'))
      .replaceAll('{{commands}}', readme.commands)
      .replaceAll('{{layout}}', readme.layout)
      .replaceAll('{{production}}', readme.production)
      .replaceAll('{{name}}', name)
      // Letters, digits and spaces only (apiTitle): safe inside the template's quotes.
      .replaceAll('{{title}}', title)
      .replaceAll('{{vendoredCopy}}', vendoredCopy(vendored))
      // The serve test's fallback for this repository, where the template runs unfilled.
      .replaceAll("'{{runtime}}'.startsWith('{{') ? 'node' : '{{runtime}}'", `'${runtime}'`)
      .replaceAll('{{runtime}}', runtime)
      .replaceAll('{{runtimeImage}}', docker?.image ?? '')
      .replaceAll('{{runtimeUser}}', docker?.user ?? '')
      .replaceAll('{{startCommand}}', docker?.command ?? '')
  );
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
  const template = checkTemplate(options.template);
  const runtime = checkRuntime(options.runtime, template);
  const given = proceedDependency(options.proceed);
  const name = packageName(basename(directory));
  const title = apiTitle(basename(directory));
  const written: string[] = [];
  const write = async (file: string, text: string) => {
    const target = join(directory, file);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, text);
    written.push(file);
  };

  // A path becomes one relative to the app: a tarball is copied into it (the app, its Dockerfile
  // included, then builds from a clean copy anywhere), a checkout is pointed at from where it is.
  let proceed = given;
  let vendored: string | undefined;
  if (given.startsWith('file:')) {
    const path = given.slice('file:'.length);
    if (statSync(path).isFile()) {
      vendored = `${vendoredDirectory}/${basename(path)}`;
      await mkdir(join(directory, vendoredDirectory), { recursive: true });
      await copyFile(path, join(directory, vendored));
      written.push(vendored);
      proceed = `file:${vendored}`;
    } else {
      proceed = `file:${relative(directory, path).split('\\').join('/') || '.'}`;
    }
  }
  for (const { from, to } of filesOf(template)) {
    if (onlyFor[to]?.includes(runtime) === false) continue;
    const text = await readFile(join(templateDirectory, from), 'utf8');
    await write(renamed[to] ?? to, filled(text, { name, title, runtime, template, vendored }));
  }
  await write(
    'package.json',
    manifest(name, proceed, options.platform ?? process.platform, runtime, template),
  );
  return { directory, template, name, files: written.sort() };
}
