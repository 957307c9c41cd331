/**
 * `npm run bench:types`: what the type checker spends on an API, Proceed beside oRPC and tRPC
 * (docs/performance.md, "The type checker"). Each contender's API is generated as its users write
 * it: BENCH_COLLECTIONS collections (default 1,000) of three procedures (list, get by id, create),
 * each collection with Zod schemas of its own and two views (public, and authenticated with more
 * fields), one module per collection, the router or route list that gathers them, the server made
 * from it, and a client module that calls every procedure through the framework's typed client.
 * Then `tsc --noEmit --extendedDiagnostics` checks each project, BENCH_TYPE_ROUNDS times (default
 * 3), the contenders alternating; the report gives medians, spreads and ratios. Every contender is
 * checked by the repository's TypeScript against the repository's Zod; oRPC and tRPC are installed
 * apart in bench/types (their own lock file), Proceed is the built package (`npm run build`).
 * Then an editor's view of the same projects (tsserver.ts): the time to a completion on the
 * client, after opening it and after an edit. BENCH_TYPES=check or editor runs one of the two.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TsServer } from './tsserver.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const collections = Number(process.env.BENCH_COLLECTIONS ?? 1000);
const rounds = Number(process.env.BENCH_TYPE_ROUNDS ?? 3);
// The repository's TypeScript (not one a peer's install might bring).
const tsc = createRequire(fileURLToPath(new URL('../../package.json', import.meta.url))).resolve(
  'typescript/bin/tsc',
);
const tsserver = join(dirname(tsc), '../lib/tsserver.js');
const generated = join(here, '.generated');
/** Which measures run: `check` (tsc), `editor` (tsserver), or both (the default). */
const measures = (process.env.BENCH_TYPES ?? 'check,editor').split(',').map((each) => each.trim());

type Contender = 'proceed' | 'orpc' | 'trpc';
const contenders: Contender[] = ['proceed', 'orpc', 'trpc'];

/**
 * The fields of collection `n`: names of its own, so that no two collections share a schema. A
 * query's number is `z.number()` for Proceed, which turns query text into numbers itself (and
 * refuses `z.coerce` there: docs/procedures.md), and `z.coerce.number()` for the others.
 */
function schemas(n: number, contender: Contender): string {
  const number = contender === 'proceed' ? 'z.number()' : 'z.coerce.number()';
  return [
    `export const ${name(n)}Id = z.object({ id: z.uuid() });`,
    `export const ${name(n)}Query = z.object({ search${n}: z.string().max(100).optional(), limit: ${number}.int().min(1).max(100).default(20) });`,
    `export const ${name(n)}Input = z.object({ title${n}: z.string().min(1).max(200), count${n}: z.number().int(), tags${n}: z.array(z.string()).max(10) });`,
  ].join('\n');
}

const publicFields = (n: number) =>
  `{ id: z.uuid(), title${n}: z.string(), count${n}: z.number().int(), tags${n}: z.array(z.string()) }`;
const authenticatedFields = (n: number) => `{ ownerId${n}: z.uuid(), createdAt${n}: z.date() }`;
const row = (n: number, id: string) =>
  `{ id: ${id}, title${n}: 'a', count${n}: 1, tags${n}: [], ownerId${n}: ${id}, createdAt${n}: new Date() }`;
const name = (n: number) => `Item${n}`;
const collection = (n: number) => `items${n}`;

/** One collection's module, as each framework's users write it. */
function collectionModule(contender: Contender, n: number): string {
  const item = name(n);
  if (contender === 'proceed') {
    return `import { procedure, procedures } from 'proceedjs';
import { resource } from 'proceedjs/resource';
import { z } from 'zod';
${schemas(n, contender)}
export const ${item} = resource('${item}', { public: ${publicFields(n)}, authenticated: ${authenticatedFields(n)} });
export const ${collection(n)} = procedures('${collection(n)}', {
  list${item}s: procedure().input(${item}Query).output(z.array(${item}.public)).query(() => [${row(n, "'0190a4f2-5b6c-7d8e-9f00-112233445566'")}]),
  get${item}: procedure().input(${item}Id).output(${item}.public).query(({ input }) => (${row(n, 'input.id')})),
  create${item}: procedure().input(${item}Input).output(${item}.authenticated).mutation(({ input }) => ({ ...${row(n, "'0190a4f2-5b6c-7d8e-9f00-112233445566'")}, ...input })),
});
`;
  }
  const views = `export const ${item}Public = z.object(${publicFields(n)});
export const ${item}Authenticated = ${item}Public.extend(${authenticatedFields(n)});`;
  if (contender === 'orpc') {
    return `import { os } from '@orpc/server';
import { z } from 'zod';
${schemas(n, contender)}
${views}
export const ${collection(n)} = {
  list${item}s: os.input(${item}Query).output(z.array(${item}Public)).handler(() => [${row(n, "'0190a4f2-5b6c-7d8e-9f00-112233445566'")}]),
  get${item}: os.input(${item}Id).output(${item}Public).handler(({ input }) => (${row(n, 'input.id')})),
  create${item}: os.input(${item}Input).output(${item}Authenticated).handler(({ input }) => ({ ...${row(n, "'0190a4f2-5b6c-7d8e-9f00-112233445566'")}, ...input })),
};
`;
  }
  return `import { z } from 'zod';
import { t } from '../trpc.js';
${schemas(n, contender)}
${views}
export const ${collection(n)} = t.router({
  list${item}s: t.procedure.input(${item}Query).output(z.array(${item}Public)).query(() => [${row(n, "'0190a4f2-5b6c-7d8e-9f00-112233445566'")}]),
  get${item}: t.procedure.input(${item}Id).output(${item}Public).query(({ input }) => (${row(n, 'input.id')})),
  create${item}: t.procedure.input(${item}Input).output(${item}Authenticated).mutation(({ input }) => ({ ...${row(n, "'0190a4f2-5b6c-7d8e-9f00-112233445566'")}, ...input })),
});
`;
}

const numbers = () => Array.from({ length: collections }, (_, n) => n);
const imports = () =>
  numbers()
    .map((n) => `import { ${collection(n)} } from './collections/${collection(n)}.js';`)
    .join('\n');

/** The module that gathers every collection and makes the server. */
function apiModule(contender: Contender): string {
  const all = numbers().map(collection).join(', ');
  if (contender === 'proceed')
    return `import { createApp } from 'proceedjs';
${imports()}
export const api = [${all}] as const;
export const app = createApp();
app.mount(api);
`;
  if (contender === 'orpc')
    return `import { RPCHandler } from '@orpc/server/node';
${imports()}
export const router = { ${all} };
export const handler = new RPCHandler(router);
`;
  return `import { createHTTPServer } from '@trpc/server/adapters/standalone';
import { t } from './trpc.js';
${imports()}
export const appRouter = t.router({ ${all} });
export type AppRouter = typeof appRouter;
export const server = createHTTPServer({ router: appRouter });
`;
}

/** A client module that calls every procedure and uses what each answers, a function per collection. */
function clientModule(contender: Contender): string {
  const id = "'0190a4f2-5b6c-7d8e-9f00-112233445566'";
  const calls = numbers()
    .map((n) => {
      const item = name(n);
      const c = collection(n);
      const input = `{ title${n}: 't', count${n}: 1, tags${n}: ['a'] }`;
      const body =
        contender === 'trpc'
          ? `  return (await client.${c}.list${item}s.query({ search${n}: 'a' })).length +
    (await client.${c}.get${item}.query({ id: ${id} })).count${n} +
    Date.parse((await client.${c}.create${item}.mutate(${input})).createdAt${n});`
          : `  return (await client.${c}.list${item}s({ search${n}: 'a' })).length +
    (await client.${c}.get${item}({ id: ${id} })).count${n} +
    ${contender === 'proceed' ? 'Date.parse' : ''}((await client.${c}.create${item}(${input})).createdAt${n}${contender === 'proceed' ? '' : '.getTime()'});`;
      return `export async function call${item}(): Promise<number> {\n${body}\n}`;
    })
    .join('\n');
  const head =
    contender === 'proceed'
      ? `import { createClient } from 'proceedjs/client';
import type { api } from './api.js';
const client = createClient<typeof api>({ baseUrl: 'http://127.0.0.1:3030' });`
      : contender === 'orpc'
        ? `import { createORPCClient } from '@orpc/client';
import { RPCLink } from '@orpc/client/fetch';
import type { RouterClient } from '@orpc/server';
import type { router } from './api.js';
const client: RouterClient<typeof router> = createORPCClient(new RPCLink({ url: 'http://127.0.0.1:3030/rpc' }));`
        : `import { createTRPCClient, httpBatchLink } from '@trpc/client';
import type { AppRouter } from './api.js';
const client = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: 'http://127.0.0.1:3030/trpc' })] });`;
  return `${head}
${calls}
`;
}

/** The tsconfig `npm create proceed` writes, for every contender. */
const tsconfig = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2023', 'DOM'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    isolatedModules: true,
    verbatimModuleSyntax: true,
    skipLibCheck: true,
    types: ['node'],
    noEmit: true,
  },
  include: ['**/*.ts'],
};

function generate(contender: Contender): string {
  const directory = join(generated, contender);
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(join(directory, 'collections'), { recursive: true });
  writeFileSync(join(directory, 'package.json'), '{ "type": "module", "private": true }\n');
  writeFileSync(join(directory, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`);
  for (const n of numbers())
    writeFileSync(join(directory, 'collections', `${collection(n)}.ts`), collectionModule(contender, n));
  writeFileSync(join(directory, 'api.ts'), apiModule(contender));
  writeFileSync(join(directory, 'client.ts'), clientModule(contender));
  if (contender === 'trpc')
    writeFileSync(
      join(directory, 'trpc.ts'),
      "import { initTRPC } from '@trpc/server';\nexport const t = initTRPC.create();\n",
    );
  return directory;
}

interface Diagnostics {
  checkSeconds: number;
  totalSeconds: number;
  memoryMB: number;
  types: number;
  instantiations: number;
}

function check(directory: string): Diagnostics {
  const result = spawnSync(process.execPath, [tsc, '-p', directory, '--extendedDiagnostics'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const output = `${result.stdout}${result.stderr}`;
  if (result.status !== 0) throw new Error(`tsc failed on ${directory}:\n${output.slice(0, 4000)}`);
  const number = (label: string) => {
    const match = new RegExp(`^${label}:\\s+([\\d.]+)`, 'm').exec(output);
    if (match?.[1] === undefined) throw new Error(`no "${label}" in tsc's diagnostics:\n${output}`);
    return Number(match[1]);
  };
  return {
    checkSeconds: number('Check time'),
    totalSeconds: number('Total time'),
    memoryMB: number('Memory used') / 1024,
    types: number('Types'),
    instantiations: number('Instantiations'),
  };
}

interface EditorSample {
  /** From starting tsserver to the members of `client.<collection>.`, the client module just opened. */
  firstMs: number;
  /** Then the fields of a call's result: `(await client.<collection>.get<Item>(…)).`. */
  resultMs: number;
  /** A field typed into a collection's public view, then the same completion on that collection's call. */
  afterEditMs: number;
  peakMb: number;
}

/** A call of collection `n`'s get by id, as each framework's client writes it. */
const getCall = (contender: Contender, n: number) =>
  `client.${collection(n)}.get${name(n)}${contender === 'trpc' ? '.query' : ''}({ id: '0190a4f2-5b6c-7d8e-9f00-112233445566' })`;

/**
 * One editor session on a contender's project: open the client module with three unfinished
 * lines at its end, as a user types them, and ask for completions at each; the last after a
 * field is typed into collection 0's public view, which the answer must then offer.
 */
async function editorSession(contender: Contender, directory: string): Promise<EditorSample> {
  const client = join(directory, 'client.ts');
  const collectionFile = join(directory, 'collections', `${collection(0)}.ts`);
  const last = collections - 1;
  const middle = Math.floor(collections / 2);
  const text = readFileSync(client, 'utf8');
  const probes = [
    `export const probeMembers = client.${collection(last)}.`,
    `export const probeResult = async () => (await ${getCall(contender, middle)}).`,
    `export const probeEdited = async () => (await ${getCall(contender, 0)}).`,
  ];
  const firstProbeLine = text.split('\n').length;
  const at = (index: number) => ({ line: firstProbeLine + index, offset: (probes[index]?.length ?? 0) + 1 });
  const server = new TsServer(tsserver);
  try {
    const started = performance.now();
    server.open(client, directory, `${text}${probes.join('\n')}\n`);
    const members = await server.completions(client, at(0).line, at(0).offset, '.');
    const firstMs = performance.now() - started;
    if (!members.includes(`get${name(last)}`))
      throw new Error(
        `${contender}: the client's members lack get${name(last)}: ${members.slice(0, 10).join(', ')}`,
      );

    const resultStarted = performance.now();
    const fields = await server.completions(client, at(1).line, at(1).offset, '.');
    const resultMs = performance.now() - resultStarted;
    if (!fields.includes(`count${middle}`))
      throw new Error(
        `${contender}: a result's fields lack count${middle}: ${fields.slice(0, 10).join(', ')}`,
      );

    const source = readFileSync(collectionFile, 'utf8');
    const view = source.indexOf(`{ id: z.uuid(), title0:`);
    if (view === -1) throw new Error(`${contender}: no public view in ${collectionFile}`);
    const before = source.slice(0, view + '{ id: z.uuid(), '.length).split('\n');
    server.open(collectionFile, directory);
    const editStarted = performance.now();
    server.insert(collectionFile, before.length, (before.at(-1)?.length ?? 0) + 1, 'extra0: z.string(), ');
    const edited = await server.completions(client, at(2).line, at(2).offset, '.');
    const afterEditMs = performance.now() - editStarted;
    if (!edited.includes('extra0'))
      throw new Error(
        `${contender}: after the edit, the result's fields lack extra0: ${edited.slice(0, 10).join(', ')}`,
      );
    return { firstMs, resultMs, afterEditMs, peakMb: server.peakMb() };
  } finally {
    await server.close();
  }
}

function typescriptVersion(): string {
  return (JSON.parse(readFileSync(join(dirname(tsc), '../package.json'), 'utf8')) as { version: string })
    .version;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** Proceed's median of each measure divided by each peer's, a column per measure. */
function printRatios<Key extends string>(
  of: (contender: Contender, key: Key) => number[],
  columns: ReadonlyArray<readonly [label: string, key: Key]>,
): void {
  console.log(`\n| Proceed ÷ | ${columns.map(([label]) => label).join(' | ')} |`);
  console.log(`|---|${columns.map(() => '---:').join('|')}|`);
  for (const peer of ['orpc', 'trpc'] as const)
    console.log(
      `| ${peer} | ${columns.map(([, key]) => (median(of('proceed', key)) / median(of(peer, key))).toFixed(2)).join(' | ')} |`,
    );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (
    !existsSync(join(here, 'node_modules/@orpc/server')) ||
    !existsSync(join(here, 'node_modules/@trpc/server'))
  )
    execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: here, stdio: 'inherit' });
  if (!existsSync(fileURLToPath(new URL('../../dist/index.d.ts', import.meta.url))))
    throw new Error('Proceed is checked as its users get it, from dist/: run `npm run build` first');
  const directories = new Map(contenders.map((contender) => [contender, generate(contender)]));
  const order = (round: number) => contenders.map((_, at) => contenders[(at + round) % contenders.length]!);
  const range = (values: number[], digits: number) =>
    `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
  if (measures.includes('check')) {
    const samples = new Map<Contender, Diagnostics[]>(contenders.map((contender) => [contender, []]));
    for (let round = 0; round < rounds; round++)
      for (const contender of order(round)) samples.get(contender)!.push(check(directories.get(contender)!));
    const of = (contender: Contender, key: keyof Diagnostics) =>
      samples.get(contender)!.map((sample) => sample[key]);
    const cell = (contender: Contender, key: keyof Diagnostics, digits: number) =>
      range(of(contender, key), digits);
    console.log(
      `\nThe type checker on an API of ${collections} collections × 3 procedures and a client calling each (tsc ${typescriptVersion()} --noEmit --extendedDiagnostics, ${rounds} rounds alternating, medians and range)`,
    );
    console.log('| contender | check time s | total time s | memory MB | types | instantiations |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const contender of contenders)
      console.log(
        `| ${contender} | ${cell(contender, 'checkSeconds', 2)} | ${cell(contender, 'totalSeconds', 2)} | ${cell(contender, 'memoryMB', 0)} | ${median(of(contender, 'types')).toFixed(0)} | ${median(of(contender, 'instantiations')).toFixed(0)} |`,
      );
    printRatios(of, [
      ['check time', 'checkSeconds'],
      ['total time', 'totalSeconds'],
      ['memory', 'memoryMB'],
    ]);
  }
  if (measures.includes('editor')) {
    const sessions = new Map<Contender, EditorSample[]>(contenders.map((contender) => [contender, []]));
    for (let round = 0; round < rounds; round++)
      for (const contender of order(round))
        sessions.get(contender)!.push(await editorSession(contender, directories.get(contender)!));
    const of = (contender: Contender, key: keyof EditorSample) =>
      sessions.get(contender)!.map((sample) => sample[key]);
    console.log(
      `\nThe editor on the same projects (a fresh tsserver ${typescriptVersion()} per session, ${rounds} sessions alternating, medians and range): ms to the first completion on the client module just opened, to a call's result fields next, to the same after a field is typed into a collection's view; the server's peak RSS`,
    );
    console.log('| contender | first completion ms | result fields ms | after an edit ms | peak RSS MB |');
    console.log('|---|---:|---:|---:|---:|');
    for (const contender of contenders)
      console.log(
        `| ${contender} | ${range(of(contender, 'firstMs'), 0)} | ${range(of(contender, 'resultMs'), 0)} | ${range(of(contender, 'afterEditMs'), 0)} | ${range(of(contender, 'peakMb'), 0)} |`,
      );
    printRatios(of, [
      ['first completion', 'firstMs'],
      ['result fields', 'resultMs'],
      ['after an edit', 'afterEditMs'],
      ['peak RSS', 'peakMb'],
    ]);
  }
}
