/**
 * `npm run bench` (BENCH_ONLY=uploads): 50 attachments of 9 MiB uploaded at once to the blog
 * (bench/servers/blog.ts, every default on, its request log at info) and to the same upload
 * written by hand (bench/servers/busboy-disk.ts: busboy straight to disk), on an in-memory PGlite
 * and on the PostgreSQL server of DATABASE_URL when one is set; one process each, a first load
 * (reported apart), then BENCH_ROUNDS rounds (default 3) alternating. Per contender: the wall time of
 * the 50, the health check's time meanwhile (every 50 ms), and the server's peak resident memory
 * above what it held before (docs/performance.md, "Uploads under load").
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type UploadLoadResult, uploadLoad } from '../examples/blog/test/upload-load.js';
import { median, startServer, stopServer } from './compare.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);

const contenders = [
  { name: 'blog', script: './servers/blog.ts', env: { BENCH_LOG_LEVEL: 'info' } },
  { name: 'by hand (busboy to disk)', script: './servers/busboy-disk.ts', env: {} },
];

interface Running {
  contender: (typeof contenders)[number];
  info: { address: string; token?: string; postId?: string };
  child: import('node:child_process').ChildProcess;
  directory: string;
}

async function start(contender: (typeof contenders)[number], databaseUrl: string): Promise<Running> {
  const directory = await mkdtemp(join(tmpdir(), 'bench-uploads-'));
  const { info, child } = await startServer(
    { name: contender.name, script: contender.script, env: contender.env },
    { DATABASE_URL: databaseUrl, ATTACHMENTS_DIR: directory },
  );
  if (contender.name !== 'blog') return { contender, info, child, directory };
  // A post of the signed-in author's own: the newest post of the database may be another's.
  const created = await fetch(`${info.address}/api/posts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${info.token}` },
    body: JSON.stringify({ title: 'Attachments', content: 'Under load.', status: 'published' }),
  });
  if (created.status !== 201) throw new Error(`blog: the post to attach to was refused (${created.status})`);
  const { id } = (await created.json()) as { id: string };
  return { contender, info: { ...info, postId: id }, child, directory };
}

async function load({ contender, info, child, directory }: Running): Promise<UploadLoadResult> {
  const result = await uploadLoad({
    origin: info.address,
    pid: child.pid as number,
    target: () => ({
      path: `/api/posts/${info.postId}/attachments`,
      headers: { authorization: `Bearer ${info.token}` },
    }),
    healthPath: '/api/health',
  });
  if (result.statuses[201] !== 50)
    throw new Error(`${contender.name}: not every upload was stored: ${JSON.stringify(result.statuses)}`);
  // The next round starts from an empty directory, as this one did.
  for (const entry of await readdir(directory))
    await rm(join(directory, entry), { recursive: true, force: true });
  return result;
}

const spread = (values: number[], digits = 0) =>
  `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;

export async function uploadsComparison(): Promise<void> {
  const server = process.env.DATABASE_URL;
  const engines = [
    { name: 'PGlite (memory://)', url: 'memory://' },
    ...(server !== undefined && /^postgres(?:ql)?:/.test(server)
      ? [{ name: 'PostgreSQL', url: server }]
      : []),
  ];
  for (const engine of engines) {
    const results = new Map<string, UploadLoadResult[]>(contenders.map((contender) => [contender.name, []]));
    const running: Running[] = [];
    const first = new Map<string, UploadLoadResult>();
    try {
      for (const contender of contenders) running.push(await start(contender, engine.url));
      // A first load each, reported apart: the rounds measure a server that has served before.
      for (const server of running) first.set(server.contender.name, await load(server));
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? running : [...running].reverse();
        for (const server of order) results.get(server.contender.name)?.push(await load(server));
      }
    } finally {
      for (const { child, directory } of running) {
        await stopServer(child);
        await rm(directory, { recursive: true, force: true });
      }
    }
    console.log(
      `\nUploads under load on ${engine.name}: 50 × 9 MiB at once, /api/health every 50 ms meanwhile (one process each: a first load, then ${rounds} rounds alternating; medians, min–max)`,
    );
    console.log(
      '| contender | wall ms | health p50 ms | health p99 ms | health max ms | peak RSS rise MiB |',
    );
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const [name, runs] of results)
      console.log(
        `| ${name} | ${spread(runs.map((run) => run.wallMs))} | ${spread(runs.map((run) => run.health.p50))} | ${spread(runs.map((run) => run.health.p99))} | ${spread(runs.map((run) => run.health.max))} | ${spread(runs.map((run) => run.rss.rise))} |`,
      );
    for (const [name, run] of first)
      console.log(
        `| ${name}, its first load | ${run.wallMs.toFixed(0)} | ${run.health.p50.toFixed(0)} | ${run.health.p99.toFixed(0)} | ${run.health.max.toFixed(0)} | ${run.rss.rise.toFixed(0)} |`,
      );
    const wall = (name: string) => median((results.get(name) ?? []).map((run) => run.wallMs));
    console.log(
      `blog ÷ by hand, wall time: ${(wall('blog') / wall('by hand (busboy to disk)')).toFixed(2)} (above 1: the blog takes longer)`,
    );
  }
}
