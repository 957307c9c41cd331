/**
 * `npm run bench:cold-start`: process start to first answer for the smallest useful app (one
 * procedure with validated input, `createApp` from the built package as an app imports it), on
 * Node (the Fastify adapter) and on Bun (`Bun.serve`, no Fastify), alternated, BENCH_ROUNDS
 * (default 9) starts each; medians and ranges. `BENCH_ROOTS=<checkout>,<checkout>` measures
 * those checkouts' builds instead (each with its `npm ci` and build done), alternated with each
 * other round by round, for a before-and-after figure.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('..', import.meta.url));
const roots = (process.env.BENCH_ROOTS ?? here).split(',');
const rounds = Number(process.env.BENCH_ROUNDS ?? 9);
const bun = join(here, 'node_modules/.bin/bun');

const app = `import { createApp, procedure, procedures } from 'proceedjs';
import { z } from 'zod';
const getNote = procedure()
  .input(z.object({ id: z.coerce.number().int() }))
  .query(({ input }) => ({ id: input.id, title: 'A note' }));
const app = createApp({ logger: false }).mount([procedures('notes', { getNote })]);
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1', logRoutes: false, handleSignals: true });
`;

async function startOnce(root: string, command: string, args: string[]): Promise<number> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const started = performance.now();
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, PORT: String(port) },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${command} exited with ${child.exitCode}`);
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

/** The app and a tsconfig without `paths` (Bun then resolves `proceedjs` as an app does, to the
 * built package's `bun` entry, not through the repository's tsconfig to the sources). */
function prepare(root: string): { node: string[]; bun: string[] } {
  const directory = join(root, '.bench-cold-start');
  mkdirSync(directory, { recursive: true });
  const entry = join(directory, 'app.mjs');
  writeFileSync(entry, app);
  const tsconfig = join(directory, 'tsconfig.json');
  writeFileSync(tsconfig, '{}');
  return { node: [entry], bun: [`--tsconfig-override=${tsconfig}`, entry] };
}

const contenders = roots.flatMap((root) => {
  const args = prepare(root);
  const label = roots.length === 1 ? '' : `${root}: `;
  return [
    { name: `${label}Node (Fastify adapter)`, root, command: process.execPath, args: args.node },
    { name: `${label}Bun (Bun.serve)`, root, command: bun, args: args.bun },
  ];
});
try {
  // One start each first: the file system's caches, not the app, would show in the first round.
  for (const each of contenders) await startOnce(each.root, each.command, each.args);
  const results = new Map<string, number[]>(contenders.map((each) => [each.name, []]));
  for (let round = 0; round < rounds; round++)
    for (const each of contenders)
      results.get(each.name)?.push(await startOnce(each.root, each.command, each.args));
  console.log(`\nProcess start to first 200 on GET /api/notes/1 (median of ${rounds}, range)\n`);
  console.log('| runtime | ms |');
  console.log('|---|---|');
  for (const [name, ms] of results) console.log(`| ${name} | ${median(ms).toFixed(0)} (${range(ms)}) |`);
} finally {
  for (const root of roots) rmSync(join(root, '.bench-cold-start'), { recursive: true, force: true });
}
