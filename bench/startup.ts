/**
 * `npm run bench:startup`: how long the blog takes from `proceed start` to its first 200 on
 * `/api/health`, and how much memory its server process holds then (RSS, from /proc), for the
 * compiled blog on PostgreSQL and on PGlite (a new directory and an existing one), and for the
 * TypeScript sources through tsx; then, against the same routes written by hand on Fastify and
 * `pg` (bench/servers/fastify-pg-blog.ts, compiled to JavaScript first as the blog is), the time
 * of each to its first 200 on the feed, on the same database. Needs `npm run build` first;
 * PostgreSQL from TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres).
 * Medians of BENCH_ROUNDS (default 5) starts, alternating the variants.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createScratchDatabase } from '../test/postgres.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin/proceed.js');
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface Start {
  ms: number;
  /** RSS of the process that listens, in MB. */
  serverMb: number;
  /** RSS of every process of the command (proceed, and tsx's child), in MB. */
  totalMb: number;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** How a variant starts: `proceed start` of a blog entry, or a server script run by Node. */
type Command = { entry: string } | { script: string };

async function startOnce(
  command: Command,
  env: Record<string, string>,
  path = '/api/health',
): Promise<Start> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const started = performance.now();
  const args = 'entry' in command ? [bin, 'start', command.entry, '--port', String(port)] : [command.script];
  const name = 'entry' in command ? command.entry : command.script;
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      BENCH_SERVER_PORT: String(port),
      ...env,
    },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
      const ok = await fetch(`http://127.0.0.1:${port}${path}`).then(
        (response) => response.status === 200,
        () => false,
      );
      if (ok) break;
      if (performance.now() - started > 60_000) throw new Error(`${name} did not answer in 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const ms = performance.now() - started;
    const pid = child.pid as number;
    const pids = [pid, ...childrenOf(pid)];
    const server = pids.at(-1) as number;
    return { ms, serverMb: rssMb(server), totalMb: pids.reduce((sum, each) => sum + rssMb(each), 0) };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

/**
 * The hand-written server as JavaScript, in the repository (so that its packages resolve): run
 * through tsx, its start would count the compiler's, which the compiled blog does not pay.
 */
function compileByHand(): string {
  const directory = join(root, '.bench-startup');
  mkdirSync(directory, { recursive: true });
  const script = join(directory, 'fastify-pg-blog.mjs');
  const result = spawnSync(
    join(root, 'node_modules/.bin/esbuild'),
    [
      join(root, 'bench/servers/fastify-pg-blog.ts'),
      '--bundle',
      '--packages=external',
      '--platform=node',
      '--format=esm',
      `--outfile=${script}`,
      '--log-level=warning',
    ],
    { stdio: 'inherit' },
  );
  if (result.status !== 0) throw new Error('esbuild could not compile bench/servers/fastify-pg-blog.ts');
  return script;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const range = (values: number[]) => `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}`;

const scratch = mkdtempSync(join(tmpdir(), 'proceed-startup-'));
const database = await createScratchDatabase(adminUrl, 'bench_startup');
const secret = randomBytes(32).toString('hex');
const existing = join(scratch, 'existing');
const blog = { entry: 'examples/blog/dist/main.js' };
/** The feed's first page, which the blog and the hand-written server both serve. */
const feed = '/api/posts?limit=20';
try {
  const byHand = { script: compileByHand() };
  // The existing directory is made (initdb and migrations) once, before timing; so is the
  // scratch database's schema, which the hand-written server reads as the blog made it.
  await startOnce(blog, { DATABASE_URL: existing, JWT_SECRET: secret });
  await startOnce(blog, { DATABASE_URL: database.url, JWT_SECRET: secret });
  const variants: Array<{
    name: string;
    command: Command;
    path?: string;
    env: (round: number) => Record<string, string>;
  }> = [
    { name: 'compiled, PostgreSQL', command: blog, env: () => ({ DATABASE_URL: database.url }) },
    {
      name: 'compiled, PGlite (existing directory)',
      command: blog,
      env: () => ({ DATABASE_URL: existing }),
    },
    {
      name: 'compiled, PGlite (new directory)',
      command: blog,
      env: (round) => ({ DATABASE_URL: join(scratch, `new-${round}`) }),
    },
    {
      name: 'tsx, PostgreSQL',
      command: { entry: 'examples/blog/src/main.ts' },
      env: () => ({ DATABASE_URL: database.url }),
    },
    {
      name: 'compiled, PostgreSQL, to the feed',
      command: blog,
      path: feed,
      env: () => ({ DATABASE_URL: database.url }),
    },
    {
      name: 'by hand on Fastify and pg, PostgreSQL, to the feed',
      command: byHand,
      path: feed,
      env: () => ({ DATABASE_URL: database.url }),
    },
  ];
  const results = new Map<string, Start[]>(variants.map((variant) => [variant.name, []]));
  for (let round = 0; round < rounds; round++) {
    // Each round starts one variant later, so that none always follows the same one.
    const order = variants.map(
      (_, at) => variants[(at + round) % variants.length] as (typeof variants)[number],
    );
    for (const variant of order) {
      const start = await startOnce(
        variant.command,
        { JWT_SECRET: secret, ...variant.env(round) },
        variant.path,
      );
      results.get(variant.name)?.push(start);
    }
  }
  console.log(
    `\nStart to first 200 on /api/health (the last two: on ${feed}), and RSS then (median of ${rounds}, range)\n`,
  );
  console.log('| blog | start ms | server RSS MB | all processes RSS MB |');
  console.log('|---|---|---|---|');
  for (const [name, starts] of results) {
    const ms = starts.map((start) => start.ms);
    const server = starts.map((start) => start.serverMb);
    const total = starts.map((start) => start.totalMb);
    console.log(
      `| ${name} | ${median(ms).toFixed(0)} (${range(ms)}) | ${median(server).toFixed(0)} (${range(server)}) | ${median(total).toFixed(0)} (${range(total)}) |`,
    );
  }
  const of = (name: string) => median((results.get(name) ?? []).map((start) => start.ms));
  console.log(
    `\nThe blog ÷ by hand, to the feed on PostgreSQL: ${(of('compiled, PostgreSQL, to the feed') / of('by hand on Fastify and pg, PostgreSQL, to the feed')).toFixed(2)}`,
  );
} finally {
  await database.drop();
  rmSync(scratch, { recursive: true, force: true });
  rmSync(join(root, '.bench-startup'), { recursive: true, force: true });
}
