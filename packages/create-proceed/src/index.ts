#!/usr/bin/env node
/**
 * `npm create proceed@latest [directory]`: writes a new Proceed app and says what to run next.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { ScaffoldError, scaffold, shownDirectory } from './scaffold.js';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

const usage = `Usage: npm create proceed@latest [directory] [-- --template app|minimal --runtime node|bun|deno|workers --proceed SPEC --install]

Writes a new Proceed app into [directory] (new, or empty), with its tests, a strict
tsconfig.json, the scripts dev, build, start and test, a Dockerfile and a README.

Options:
      --template NAME  app (default): notes with owners, register/login/refresh/logout/me, on
                       PostgreSQL or an embedded PGlite through Drizzle, with migrations, a seed
                       and tests on both databases. minimal: one file, notes in memory
      --runtime NAME   What the app runs on: node (default), bun, deno or workers (Cloudflare
                       Workers, through Wrangler, with --template minimal); its scripts, its
                       Dockerfile (or wrangler.jsonc) and its serve test follow
      --proceed SPEC   The proceedjs dependency: a version, range or tag (default: ^${version}),
                       a directory, or a packed tarball (proceedjs-x.y.z.tgz)
      --install        Install the dependencies when done
  -h, --help           Show this help
  -v, --version        Show the version of create-proceed`;

/** The package manager that ran us (`npm create`, `pnpm create`, …), from its user agent. */
function packageManager(): 'npm' | 'pnpm' | 'yarn' | 'bun' {
  const agent = process.env.npm_config_user_agent ?? '';
  const name = agent.split('/', 1)[0];
  return name === 'pnpm' || name === 'yarn' || name === 'bun' ? name : 'npm';
}

async function askForDirectory(): Promise<string> {
  const prompt = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answer = (await prompt.question('Where should the app go? (proceed-app) ')).trim();
    return answer === '' ? 'proceed-app' : answer;
  } finally {
    prompt.close();
  }
}

function install(directory: string, manager: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(manager, ['install'], {
      cwd: directory,
      stdio: 'inherit',
      shell: process.platform === 'win32',
    });
    child.once('error', reject);
    child.once('exit', (code) => resolve(code ?? 1));
  });
}

async function main(args: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>;
  const options = {
    proceed: { type: 'string' },
    runtime: { type: 'string' },
    template: { type: 'string' },
    install: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean', short: 'v' },
  } as const;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    process.stderr.write(`create-proceed: ${(error as Error).message}\n\n${usage}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  if (values.version === true) {
    process.stdout.write(`${version}\n`);
    return 0;
  }
  if (positionals.length > 1) {
    process.stderr.write(
      `create-proceed: one directory at a time, got ${positionals.join(', ')}\n\n${usage}\n`,
    );
    return 2;
  }
  let target = positionals[0];
  if (target === undefined) {
    if (!process.stdin.isTTY) {
      process.stderr.write(`create-proceed: name the directory for the app\n\n${usage}\n`);
      return 2;
    }
    target = await askForDirectory();
  }

  const app = await scaffold({
    directory: target,
    ...(values.proceed === undefined ? {} : { proceed: values.proceed }),
    ...(values.runtime === undefined ? {} : { runtime: values.runtime }),
    ...(values.template === undefined ? {} : { template: values.template }),
  });
  const shown = shownDirectory(app.directory);
  process.stdout.write(
    `\nCreated ${app.name} in ${shown}:\n${app.files.map((file) => `  ${file}`).join('\n')}\n`,
  );

  const manager = packageManager();
  const run = (script: string) => (manager === 'npm' ? `npm run ${script}` : `${manager} ${script}`);
  if (values.install === true) {
    process.stdout.write(`\nInstalling the dependencies with ${manager}…\n`);
    const code = await install(app.directory, manager);
    if (code !== 0) return code;
  }
  const quoted = /^[\w./-]+$/.test(shown) ? shown : `'${shown.replaceAll("'", "'\\''")}'`;
  const steps = [
    ...(shown === '.' ? [] : [`cd ${quoted}`]),
    ...(values.install === true ? [] : [`${manager} install`]),
    `${run('dev')}      # http://127.0.0.1:3030/api/notes, restarts on every change`,
    ...(app.template === 'app'
      ? [
          // `bun test` would be Bun's own test runner, not the script.
          `${manager === 'bun' ? 'bun run test' : `${manager} test`}         # on PGlite; with TEST_DATABASE_URL=postgres://… on PostgreSQL too`,
        ]
      : []),
  ];
  process.stdout.write(`\nNext:\n${steps.map((step) => `  ${step}`).join('\n')}\n\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `create-proceed: ${error instanceof ScaffoldError ? error.message : ((error as Error).stack ?? String(error))}\n`,
    );
    process.exitCode = 1;
  },
);
