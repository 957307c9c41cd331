/**
 * `npm run bench:cold-start`: process start to first answer, alternated, BENCH_ROUNDS (default 9)
 * starts each; medians and ranges. The smallest useful app (one procedure with validated input,
 * `createApp` from the built package as an app imports it) on Node (`proceedjs`, the same asking
 * for `app.server` so that Fastify serves it, and `proceedjs/node`) and on Bun (`Bun.serve`, no Fastify); a large one, that route and BENCH_PROCEDURES / 3 collections
 * (default 1,000) of a list with a query, a get by id and a create, each with Zod schemas of its
 * own; and both written by hand on Fastify with JSON Schema. `BENCH_ROOTS=<checkout>,<checkout>`
 * measures those checkouts' builds instead (each with its `npm ci` and build done), alternated
 * with each other round by round, for a before-and-after figure.
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
  .input(z.object({ id: z.number().int() }))
  .query(({ input }) => ({ id: input.id, title: 'A note' }));
const app = createApp({ logger: false }).mount([procedures('notes', { getNote })]);
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1', logRoutes: false, handleSignals: true });
`;

const procedureCount = Number(process.env.BENCH_PROCEDURES ?? 3000);
/** Collections of three beside the notes route: 3,001 procedures by default. */
const collectionCount = Math.max(1, Math.round(procedureCount / 3));

/** The small app's one route by hand on Fastify: a JSON Schema for the id and the answer. */
const fastifyApp = `import Fastify from 'fastify';
const app = Fastify();
app.get('/api/notes/:id', {
  schema: {
    params: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
    response: { 200: { type: 'object', properties: { id: { type: 'integer' }, title: { type: 'string' } } } },
  },
}, async (request) => ({ id: request.params.id, title: 'A note' }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
`;

/** The big app in Proceed: the notes route of the small app, then collections of three procedures. */
function largeProceedApp(): string {
  const collections = Array.from({ length: collectionCount }, (_, index) => {
    const n = index + 1;
    const view = `z.object({ id: z.uuid(), title${n}: z.string(), count${n}: z.number().int() })`;
    return `procedures('items${n}', {
  listItem${n}s: procedure().input(z.object({ search${n}: z.string().max(100).optional(), limit: z.number().int().min(1).max(100).default(20) })).output(z.array(${view})).query(() => []),
  getItem${n}: procedure().input(z.object({ id: z.uuid() })).output(${view}).query(({ input }) => ({ id: input.id, title${n}: 'a', count${n}: 1 })),
  createItem${n}: procedure().input(z.object({ title${n}: z.string().min(1).max(200), count${n}: z.number().int() })).output(${view}).mutation(({ input }) => ({ id: '0190a4f2-5b6c-7d8e-9f00-112233445566', ...input })),
})`;
  });
  return `import { createApp, procedure, procedures } from 'proceedjs';
import { z } from 'zod';
const getNote = procedure()
  .input(z.object({ id: z.number().int() }))
  .query(({ input }) => ({ id: input.id, title: 'A note' }));
const app = createApp({ logger: false }).mount([
  procedures('notes', { getNote }),
  ${collections.join(',\n  ')},
]);
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1', logRoutes: false, handleSignals: true });
`;
}

/** The same routes by hand on Fastify, each with JSON schemas for what it reads and answers. */
function largeFastifyApp(): string {
  const routes = Array.from({ length: collectionCount }, (_, index) => {
    const n = index + 1;
    const view = `{ type: 'object', properties: { id: { type: 'string', format: 'uuid' }, title${n}: { type: 'string' }, count${n}: { type: 'integer' } }, required: ['id', 'title${n}', 'count${n}'] }`;
    return `app.get('/api/items${n}', { schema: { querystring: { type: 'object', properties: { search${n}: { type: 'string', maxLength: 100 }, limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 } }, additionalProperties: false }, response: { 200: { type: 'array', items: ${view} } } } }, async () => []);
app.get('/api/items${n}/:id', { schema: { params: { type: 'object', properties: { id: { type: 'string', format: 'uuid' } }, required: ['id'] }, response: { 200: ${view} } } }, async (request) => ({ id: request.params.id, title${n}: 'a', count${n}: 1 }));
app.post('/api/items${n}', { schema: { body: { type: 'object', properties: { title${n}: { type: 'string', minLength: 1, maxLength: 200 }, count${n}: { type: 'integer' } }, required: ['title${n}', 'count${n}'], additionalProperties: false }, response: { 201: ${view} } } }, async (request, reply) => reply.code(201).send({ id: '0190a4f2-5b6c-7d8e-9f00-112233445566', ...request.body }));`;
  });
  return fastifyApp.replace(
    'await app.listen',
    `${routes.join('\n')}
await app.listen`,
  );
}

async function startOnce(root: string, command: string, args: string[]): Promise<number> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const started = performance.now();
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, PORT: String(port) },
    // stderr shown: a start that fails says why.
    stdio: ['ignore', 'ignore', 'inherit'],
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
function prepare(root: string): {
  node: string[];
  fastify: string[];
  nodeHttp: string[];
  bun: string[];
  large: string[];
} {
  const directory = join(root, '.bench-cold-start');
  mkdirSync(directory, { recursive: true });
  const entry = join(directory, 'app.mjs');
  writeFileSync(entry, app);
  const large = join(directory, 'large.mjs');
  writeFileSync(large, largeProceedApp());
  // The same app asking for app.server, as one that uses a Fastify plugin does: Fastify serves it.
  const onFastify = join(directory, 'app-fastify.mjs');
  writeFileSync(onFastify, app.replace('await app.listen', 'void app.server;\nawait app.listen'));
  const withoutFastify = join(directory, 'app-node.mjs');
  writeFileSync(withoutFastify, app.replace("from 'proceedjs';", "from 'proceedjs/node';"));
  const tsconfig = join(directory, 'tsconfig.json');
  writeFileSync(tsconfig, '{}');
  return {
    node: [entry],
    fastify: [onFastify],
    nodeHttp: [withoutFastify],
    bun: [`--tsconfig-override=${tsconfig}`, entry],
    large: [large],
  };
}

/** The hand-written Fastify apps, once, in this checkout (Fastify is a dependency of Proceed's). */
function prepareByHand(): { small: string[]; large: string[] } {
  const directory = join(here, '.bench-cold-start-by-hand');
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, 'small.mjs'), fastifyApp);
  writeFileSync(join(directory, 'large.mjs'), largeFastifyApp());
  return { small: [join(directory, 'small.mjs')], large: [join(directory, 'large.mjs')] };
}

const byHand = prepareByHand();
const contenders = [
  ...roots.flatMap((root) => {
    const args = prepare(root);
    const label = roots.length === 1 ? '' : `${root}: `;
    return [
      { name: `${label}Node (proceedjs)`, root, command: process.execPath, args: args.node },
      {
        name: `${label}Node (proceedjs, asking for app.server)`,
        root,
        command: process.execPath,
        args: args.fastify,
      },
      {
        name: `${label}Node (node:http, proceedjs/node)`,
        root,
        command: process.execPath,
        args: args.nodeHttp,
      },
      { name: `${label}Bun (Bun.serve)`, root, command: bun, args: args.bun },
      {
        name: `${label}Node, ${collectionCount * 3 + 1} procedures`,
        root,
        command: process.execPath,
        args: args.large,
      },
    ];
  }),
  { name: 'Fastify by hand, Node', root: here, command: process.execPath, args: byHand.small },
  {
    name: `Fastify by hand, Node, ${collectionCount * 3 + 1} routes`,
    root: here,
    command: process.execPath,
    args: byHand.large,
  },
];
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
  const of = (name: string) => median(results.get(name) ?? []);
  const large = collectionCount * 3 + 1;
  // With BENCH_ROOTS, each checkout's Proceed is named after it; Fastify by hand runs once.
  for (const root of roots) {
    const named = (name: string) => (roots.length > 1 ? `${root}: ${name}` : name);
    console.log(
      `\n${roots.length > 1 ? `${root}: ` : ''}Proceed on Node ÷ Fastify by hand: ${(of(named('Node (proceedjs)')) / of('Fastify by hand, Node')).toFixed(2)} with one route (${(of(named('Node (proceedjs, asking for app.server)')) / of('Fastify by hand, Node')).toFixed(2)} on Fastify, ${(of(named('Node (node:http, proceedjs/node)')) / of('Fastify by hand, Node')).toFixed(2)} with proceedjs/node), ${(of(named(`Node, ${large} procedures`)) / of(`Fastify by hand, Node, ${large} routes`)).toFixed(2)} with ${large}`,
    );
  }
} finally {
  for (const root of roots) rmSync(join(root, '.bench-cold-start'), { recursive: true, force: true });
  rmSync(join(here, '.bench-cold-start-by-hand'), { recursive: true, force: true });
}
