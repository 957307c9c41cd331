/**
 * `npm run bench`: Proceed against what users would pick instead (Fastify by hand, ts-rest on
 * Fastify) on a real app's three endpoints; against bare Fastify on the same endpoints; the cost
 * of auth, of the metrics plugin and of entity tags with compression; and the blog with one
 * worker against two, each side by side in one run (compare.ts). docs/performance.md. Environment:
 * BENCH_ROUNDS (default 5), BENCH_SECONDS per measurement (default 3), BENCH_CONNECTIONS
 * (default 50), BENCH_ONLY (comma-separated sections: peers, fastify, auth, metrics, http-cache,
 * workers, embedded, by-hand; default all), BENCH_BASELINE (a built checkout whose blog runs
 * beside this one in by-hand), BENCH_LOG_LEVEL (the blog's LOG_LEVEL; default warn).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compare, compareMany, report, reportMany, type Scenario } from './compare.js';
import { createBody, getPath, listPath } from './servers/posts.js';
import { embeddedComparison, handWrittenComparison, workersComparison } from './workers.js';

const only = process.env.BENCH_ONLY?.split(',').map((section) => section.trim());
const runs = (section: string) => only === undefined || only.includes(section);

/** ts-rest lives in bench/contenders with its own lock file (its peers are older than ours). */
function installContenders(): void {
  const directory = fileURLToPath(new URL('./contenders/', import.meta.url));
  if (existsSync(`${directory}node_modules/@ts-rest/fastify`)) return;
  const install = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: directory, stdio: 'inherit' });
  if (install.status !== 0) throw new Error('npm ci in bench/contenders failed');
}

const bearer = (_contender: string, server: { token?: string }) => ({
  headers: { authorization: `Bearer ${server.token}` },
});
const peerScenarios: Scenario[] = [
  { name: 'GET /api/posts/:id', method: 'GET', path: getPath, expectStatus: 200 },
  { name: 'GET /api/posts?limit=20&cursor=', method: 'GET', path: listPath, expectStatus: 200 },
  {
    name: 'POST /api/posts (bearer JWT, 1 KB)',
    method: 'POST',
    path: '/api/posts',
    body: createBody,
    expectStatus: 201,
    vary: bearer,
  },
];

const itemScenarios: Scenario[] = [
  {
    name: 'GET by id',
    method: 'GET',
    path: '/api/items/0190a4f2-5b6c-7d8e-9f00-112233445566',
    expectStatus: 200,
  },
  {
    name: 'POST create',
    method: 'POST',
    path: '/api/items',
    body: JSON.stringify({ title: 'Hello', content: 'A body that is validated', tags: ['a', 'b'] }),
    expectStatus: 201,
  },
];

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const fastify = { name: 'fastify', script: './servers/fastify.ts' };
  const proceed = { name: 'proceed', script: './servers/proceed.ts' };
  if (runs('peers')) {
    installContenders();
    const contenders = [
      { name: 'proceed', script: './servers/proceed-posts.ts' },
      { name: 'fastify', script: './servers/fastify-posts.ts' },
      { name: 'ts-rest', script: './contenders/ts-rest-posts.ts' },
    ];
    reportMany(
      'What users would pick instead: Proceed (views, cursor pages, auth plugin) vs Fastify by hand (JSON schemas, fast-jwt) vs ts-rest on Fastify (Zod), same answers byte for byte',
      'proceed',
      contenders.map((contender) => contender.name),
      await compareMany('proceed', contenders, peerScenarios),
    );
  }
  if (runs('fastify'))
    report('Proceed vs bare Fastify', 'fastify', 'proceed', await compare(fastify, proceed, itemScenarios));

  if (runs('auth')) await authSection();
  if (runs('metrics')) await metricsSection(proceed);
  if (runs('http-cache')) await httpCacheSection();
  if (runs('workers')) await workersComparison();
  if (runs('embedded')) await embeddedComparison();
  if (runs('by-hand')) await handWrittenComparison();
}

async function authSection(): Promise<void> {
  const open = { name: 'open', script: './servers/proceed-auth.ts' };
  const guarded = { name: 'guarded', script: './servers/proceed-auth.ts' };
  const itemPath = '0190a4f2-5b6c-7d8e-9f00-112233445566';
  const authScenario: Scenario = {
    name: 'GET by id, bearer token',
    method: 'GET',
    path: `/api/open/${itemPath}`,
    expectStatus: 200,
    vary: (contender, server) =>
      contender === 'guarded'
        ? { path: `/api/guarded/${itemPath}`, headers: { authorization: `Bearer ${server.token}` } }
        : {},
  };
  report(
    'Auth overhead: the route behind `authenticated` with a valid token vs the same route open',
    'open',
    'guarded',
    await compare(open, guarded, [authScenario]),
  );
}

async function metricsSection(proceed: { name: string; script: string }): Promise<void> {
  const withMetrics = { name: 'metrics', script: './servers/proceed.ts', env: { BENCH_METRICS: '1' } };
  report(
    'Metrics overhead: the same app with metricsPlugin registered vs without',
    'proceed',
    'metrics',
    await compare(proceed, withMetrics, itemScenarios),
  );
}

async function httpCacheSection(): Promise<void> {
  const withoutHttpCache = { name: 'off', script: './servers/proceed.ts', env: { BENCH_HTTP_CACHE: 'off' } };
  const withHttpCache = { name: 'on', script: './servers/proceed.ts' };
  const accepting = () => ({ headers: { 'accept-encoding': 'gzip, br' } });
  report(
    'Entity tags and compression: the same app with both on (the default) vs off, the client accepting gzip and br',
    'off',
    'on',
    await compare(withoutHttpCache, withHttpCache, [
      { ...(itemScenarios[0] as Scenario), vary: accepting },
      {
        name: 'GET 100 items (14 KB, 0.3 KB in br)',
        method: 'GET',
        path: '/api/items',
        expectStatus: 200,
        vary: accepting,
      },
    ]),
  );
}
