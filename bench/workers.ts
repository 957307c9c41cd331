/**
 * The compiled blog, two ways: on PostgreSQL with `proceed start --workers 1` against
 * `--workers 2` (both clusters at once on one scratch database), and on its embedded PGlite
 * against PostgreSQL (throughput, CPU per request with the database's own, memory). The load
 * alternates between the contenders. Part of `npm run bench`; needs `npm run build` and
 * PostgreSQL (TEST_DATABASE_URL, default the local server).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createScratchDatabase } from '../test/postgres.js';
import { blogScenarios } from './blog-scenarios.js';
import {
  type Contender,
  compare,
  compareMany,
  cpuTimeOf,
  duel,
  duelOptions,
  loadGenerator,
  median,
  onCores,
  pinning,
  report,
  reportMany,
  type ServerInfo,
} from './compare.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** How many worker processes the primary has. */
function workersOf(primary: ChildProcess): number {
  try {
    return readFileSync(`/proc/${primary.pid}/task/${primary.pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean).length;
  } catch {
    return 0;
  }
}

/**
 * Starts the compiled blog through the CLI on `cores` and waits (60 s at most) until its health
 * route answers and `ready` agrees.
 */
async function startBlog(
  port: number,
  cores: 'server' | 'all',
  flags: string[],
  env: Record<string, string>,
  ready: (child: ChildProcess) => boolean = () => true,
  checkout = root,
): Promise<{ address: string; child: ChildProcess }> {
  const [command, args] = onCores(cores, [
    'bin/proceed.js',
    'start',
    'examples/blog/dist/main.js',
    ...flags,
    '--port',
    String(port),
  ]);
  const child = spawn(command, args, {
    cwd: checkout,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', NODE_ENV: 'production', ...env },
  });
  const address = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const ok = await fetch(`${address}/api/health`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok && ready(child)) return { address, child };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`the blog (${flags.join(' ') || 'one process'}) did not answer in 60 s`);
}

function cluster(workers: number, port: number, env: Record<string, string>): Contender {
  return {
    name: `${workers} ${workers === 1 ? 'worker' : 'workers'}`,
    async start(): Promise<{ info: ServerInfo; child: ChildProcess }> {
      // Every core, the load generator's too: the point is what a second worker adds. The first
      // worker answers before the others have started: wait until all are forked, then give the
      // last one the time a start takes (about a second on PostgreSQL).
      const { address, child } = await startBlog(
        port,
        'all',
        ['--workers', String(workers)],
        env,
        (primary) => workersOf(primary) === workers,
      );
      await new Promise((resolve) => setTimeout(resolve, 2000));
      return { info: { address }, child };
    },
  };
}

/**
 * The blog alone (`proceed start`, no --workers), on the database `env` names; seeded unless
 * `seeded` is false (a second blog on a database the first one seeded). `checkout` is the
 * directory of a built checkout of this repository, this one by default.
 */
function single(
  name: string,
  port: number,
  env: Record<string, string>,
  extraCpuTime?: () => number,
  { checkout = root, seeds = true }: { checkout?: string; seeds?: boolean } = {},
): Contender {
  return {
    name,
    ...(extraCpuTime === undefined ? {} : { extraCpuTime }),
    async start(): Promise<{ info: ServerInfo; child: ChildProcess }> {
      const { address, child } = await startBlog(port, 'server', [], env, () => true, checkout);
      return { info: seeds ? { address, token: await seedToken(address) } : { address }, child };
    },
  };
}

/**
 * CPU time of the local PostgreSQL server's processes, in µs (what a query costs it). A backend
 * that exits (a pool closing an idle connection) takes its time with it; the server process that
 * reaped it counts it as its children's, so that is counted too.
 */
function postgresCpuTime(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue; // gone
    }
    const time = cpuTimeOf(Number(entry), { reaped: true });
    if (!Number.isNaN(time)) total += time;
  }
  return total;
}

const seeded = new Map<string, { token: string; id: string }>();

/**
 * The blog against the same routes by hand side by side on one core at once (`duel` in
 * compare.ts), on the database the alternating rounds used: the steadier figure on a noisy VM,
 * as in the peers' duels. The blog runs as bench/servers/blog.ts runs it (`createBlogApp`, what
 * `proceed start` serves, at LOG_LEVEL warn as above), each server with its own token.
 */
async function blogDuel(env: Record<string, string>, byHand: Contender): Promise<void> {
  if (loadGenerator !== 'wrk' || pinning === undefined) {
    console.log('\nThe blog’s duel skipped: it needs wrk and taskset, and two cores or more');
    return;
  }
  const options = duelOptions();
  const blog: Contender = {
    name: 'blog',
    script: './servers/blog.ts',
    env: { ...env, BENCH_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn' },
  };
  const scenarios = Object.values(blogScenarios);
  const ratios = await duel(blog, byHand, scenarios, options);
  console.log(
    `\nThe same, side by side on one core at once: blog ÷ by hand in requests per second, each under its own wrk, and by hand's CPU per request ÷ the blog's (the server's own, without PostgreSQL's; ${options.pairs} process pairs × ${options.rounds} rounds × ${options.seconds}s, medians and rounds' range)`,
  );
  const spread = (values: number[]) =>
    `${median(values).toFixed(3)} (${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`;
  console.log('| scenario | req/s: blog ÷ by hand | CPU: by hand ÷ blog |');
  console.log('|---|---:|---:|');
  for (const scenario of scenarios) {
    const { throughput, cpu } = ratios.get(scenario.name) ?? { throughput: [], cpu: [] };
    console.log(`| ${scenario.name} | **${spread(throughput)}** | ${spread(cpu)} |`);
  }
}

/** Seeds a freshly started blog (60 posts by one author) and returns that author's token. */
async function seedToken(address: string): Promise<string> {
  const id = await seed(address);
  const login = await fetch(`${address}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@example.com', password: 'a bench password' }),
  });
  const { accessToken } = (await login.json()) as { accessToken: string };
  seeded.set(address, { token: accessToken, id });
  return accessToken;
}

/** Posts to list and read: one author, 60 published posts, through the API. */
async function seed(address: string): Promise<string> {
  const json = { 'content-type': 'application/json' };
  const registered = await fetch(`${address}/api/auth/register`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ email: 'bench@example.com', password: 'a bench password', name: 'Bench' }),
  });
  const { accessToken } = (await registered.json()) as { accessToken: string };
  let id = '';
  for (let index = 0; index < 60; index++) {
    const created = await fetch(`${address}/api/posts`, {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${accessToken}` },
      body: JSON.stringify({
        title: `Post ${index}`,
        content: `The body of post ${index}.`,
        status: 'published',
      }),
    });
    id = ((await created.json()) as { id: string }).id;
  }
  return id;
}

export async function workersComparison(): Promise<void> {
  const database = await createScratchDatabase(adminUrl, 'bench_workers');
  try {
    const env = { DATABASE_URL: database.url, JWT_SECRET: randomBytes(32).toString('hex') };
    const one = cluster(1, 3131, env);
    const two = cluster(2, 3132, env);
    // The schema and the posts, made once before the clusters start.
    const seeder = await cluster(1, 3133, env).start?.();
    if (seeder === undefined) throw new Error('no seeder');
    const id = await seed(seeder.info.address);
    seeder.child.kill('SIGTERM');
    await once(seeder.child, 'exit');
    report(
      'The blog on PostgreSQL: proceed start --workers 1 vs --workers 2 (2 cores, the load generator on the same machine)',
      one.name,
      two.name,
      await compare(one, two, [
        { name: 'GET /api/posts?limit=20', method: 'GET', path: '/api/posts?limit=20', expectStatus: 200 },
        { name: 'GET /api/posts/:id', method: 'GET', path: `/api/posts/${id}`, expectStatus: 200 },
      ]),
    );
  } finally {
    await database.drop();
  }
}

/**
 * The embedded PGlite against PostgreSQL, one process each, on the blog's routes: an anonymous
 * cursor page, a post by id, `GET /api/auth/me` and an authenticated create. CPU per request
 * counts PostgreSQL's own processes for the PostgreSQL contender (PGlite runs in the process).
 */
export async function embeddedComparison(): Promise<void> {
  const database = await createScratchDatabase(adminUrl, 'bench_embedded');
  const directory = mkdtempSync(join(tmpdir(), 'bench-pglite-'));
  try {
    const secret = randomBytes(32).toString('hex');
    const contenders = [
      single('PGlite', 3134, { DATABASE_URL: `file://${directory}`, JWT_SECRET: secret }),
      single('PostgreSQL', 3135, { DATABASE_URL: database.url, JWT_SECRET: secret }, postgresCpuTime),
    ];
    const bearer = (_name: string, server: ServerInfo) => ({
      headers: { authorization: `Bearer ${server.token}` },
    });
    const rows = await compareMany(
      'PGlite',
      contenders,
      [
        { name: 'GET /api/posts?limit=20', method: 'GET', path: '/api/posts?limit=20', expectStatus: 200 },
        {
          name: 'GET /api/posts/:id',
          method: 'GET',
          path: '/api/posts/',
          expectStatus: 200,
          vary: (_name, server) => ({ path: `/api/posts/${seeded.get(server.address)?.id}` }),
        },
        { name: 'GET /api/auth/me', method: 'GET', path: '/api/auth/me', expectStatus: 200, vary: bearer },
        {
          name: 'POST /api/posts',
          method: 'POST',
          path: '/api/posts',
          body: JSON.stringify({ title: 'Measured', content: 'A post written by the bench.' }),
          expectStatus: 201,
          vary: bearer,
        },
      ],
      // One process each: the blogs seed their databases when they start.
      { sameAnswers: false, generations: 1 },
    );
    reportMany(
      'The blog on its embedded PGlite vs on PostgreSQL, one process each (CPU per request includes the PostgreSQL server’s)',
      'PGlite',
      contenders.map((contender) => contender.name),
      rows,
    );
    console.log(
      `Resident memory after the run: ${[...rows.rss].map(([name, mb]) => `${name} ${mb.toFixed(0)} MB`).join(', ')} (PostgreSQL's own server not counted)`,
    );
  } finally {
    rmSync(directory, { recursive: true, force: true });
    await database.drop();
  }
}

/**
 * The blog's routes (the feed, a post by id, `GET /api/auth/me`, a create) against the same
 * routes hand-written on Fastify and `pg` with prepared statements
 * (bench/servers/fastify-pg-blog.ts), one process each on one scratch PostgreSQL database,
 * answers compared byte for byte (a created post's id aside). CPU per request includes
 * PostgreSQL's. With BENCH_BASELINE naming another built checkout of this repository (a
 * `git worktree` of an older commit, after `npm ci` and `npm run build` there), its blog runs
 * too, as "blog before": a change measured old against new, side by side.
 */
export async function handWrittenComparison(): Promise<void> {
  const database = await createScratchDatabase(adminUrl, 'bench_by_hand');
  try {
    const env = { DATABASE_URL: database.url, JWT_SECRET: randomBytes(32).toString('hex') };
    const blog = single('blog', 3136, env, postgresCpuTime);
    const byHand: Contender = {
      name: 'by hand',
      script: './servers/fastify-pg-blog.ts',
      env: { DATABASE_URL: database.url, JWT_SECRET: env.JWT_SECRET },
      extraCpuTime: postgresCpuTime,
    };
    const baseline = process.env.BENCH_BASELINE;
    const before =
      baseline === undefined
        ? []
        : [single('blog before', 3137, env, postgresCpuTime, { checkout: baseline, seeds: false })];
    // The blog starts first: it migrates and seeds the database the others read.
    const started = await blog.start?.();
    if (started === undefined) throw new Error('no blog');
    const { id, token } = seeded.get(started.info.address) ?? { id: '', token: '' };
    const bearer = (): { headers: Record<string, string> } => ({
      headers: { authorization: `Bearer ${token}` },
    });
    const contenders = [{ ...blog, start: async () => started }, ...before, byHand];
    const rows = await compareMany(
      'blog',
      contenders,
      [
        { name: 'GET /api/posts?limit=20', method: 'GET', path: '/api/posts?limit=20', expectStatus: 200 },
        { name: 'GET /api/posts/:id', method: 'GET', path: `/api/posts/${id}`, expectStatus: 200 },
        {
          name: 'GET /api/auth/me (bearer)',
          method: 'GET',
          path: '/api/auth/me',
          expectStatus: 200,
          vary: bearer,
        },
        {
          name: 'POST /api/posts (bearer)',
          method: 'POST',
          path: '/api/posts',
          body: blogScenarios.create.body,
          expectStatus: 201,
          vary: bearer,
          // Each answer names the post it made: the same but for that id.
          normalize: (answer) =>
            answer
              .replace(/"id":"[0-9a-f-]{36}"/, '"id":"<new id>"')
              .replace(/location=\/api\/posts\/[0-9a-f-]{36}/, 'location=/api/posts/<new id>'),
        },
      ],
      { generations: 1 },
    );
    reportMany(
      'The blog on PostgreSQL vs the same routes by hand (Fastify, pg, prepared statements, fast-jwt), one process each, same database, same answers (a new post’s id aside)',
      'blog',
      contenders.map((contender) => contender.name),
      rows,
    );
    // compareMany stopped both servers: the duel starts its own pairs on the same database.
    await blogDuel(env, byHand);
  } finally {
    await database.drop();
  }
}
