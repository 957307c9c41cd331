/**
 * `npm run bench:cold-start`: process start to first answer for the smallest useful app (one
 * procedure with validated input, `createApp` from the built package as an app imports it), on
 * Node (the Fastify adapter) and on Bun (`Bun.serve`, no Fastify), alternated, BENCH_ROUNDS
 * (default 9) starts each; medians and ranges. `BENCH_ROOT=<another checkout>` measures that
 * checkout's build instead (its `npm ci` and build done), for a before-and-after figure.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = process.env.BENCH_ROOT ?? fileURLToPath(new URL('..', import.meta.url));
const rounds = Number(process.env.BENCH_ROUNDS ?? 9);
const bun = join(fileURLToPath(new URL('..', import.meta.url)), 'node_modules/.bin/bun');

const app = `import { createApp, procedure, procedures } from 'proceedjs';
import { z } from 'zod';
const getNote = procedure()
  .input(z.object({ id: z.coerce.number().int() }))
  .query(({ input }) => ({ id: input.id, title: 'A note' }));
const app = createApp({ logger: false }).mount([procedures('notes', { getNote })]);
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1', logRoutes: false, handleSignals: true });
`;

async function startOnce(command: string, entry: string): Promise<number> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const started = performance.now();
  const child = spawn(command, [entry], {
    cwd: root,
    env: { ...process.env, PORT: String(port) },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${command} ${entry} exited with ${child.exitCode}`);
      const ok = await fetch(`http://127.0.0.1:${port}/api/notes/1`).then(
        (response) => response.status === 200,
        () => false,
      );
      if (ok) return performance.now() - started;
      if (performance.now() - started > 30_000) throw new Error(`${command} did not answer in 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const range = (values: number[]) => `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}`;

const directory = join(root, '.bench-cold-start');
mkdirSync(directory, { recursive: true });
const entry = join(directory, 'app.mjs');
writeFileSync(entry, app);
try {
  const runtimes = [
    { name: 'Node (Fastify adapter)', command: process.execPath },
    { name: 'Bun (Bun.serve)', command: bun },
  ];
  // One start each first: the file system's caches, not the app, would show in the first round.
  for (const runtime of runtimes) await startOnce(runtime.command, entry);
  const results = new Map<string, number[]>(runtimes.map((runtime) => [runtime.name, []]));
  for (let round = 0; round < rounds; round++)
    for (const runtime of runtimes) results.get(runtime.name)?.push(await startOnce(runtime.command, entry));
  console.log(`\nProcess start to first 200 on GET /api/notes/1 (${root}; median of ${rounds}, range)\n`);
  console.log('| runtime | ms |');
  console.log('|---|---|');
  for (const [name, ms] of results) console.log(`| ${name} | ${median(ms).toFixed(0)} (${range(ms)}) |`);
} finally {
  rmSync(directory, { recursive: true, force: true });
}
