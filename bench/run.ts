/**
 * `npm run bench`: Proceed against bare Fastify on the same endpoints, the cost of auth, of
 * the metrics plugin and of entity tags with compression, and the blog with one worker against two, each side by side in one run
 * (compare.ts). Environment:
 * BENCH_ROUNDS (default 5), BENCH_SECONDS per measurement (default 3), BENCH_CONNECTIONS
 * (default 50).
 */
import { fileURLToPath } from 'node:url';
import { compare, report, type Scenario } from './compare.js';
import { workersComparison } from './workers.js';

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
  report('Proceed vs bare Fastify', 'fastify', 'proceed', await compare(fastify, proceed, itemScenarios));

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

  const withMetrics = { name: 'metrics', script: './servers/proceed.ts', env: { BENCH_METRICS: '1' } };
  report(
    'Metrics overhead: the same app with metricsPlugin registered vs without',
    'proceed',
    'metrics',
    await compare(proceed, withMetrics, itemScenarios),
  );

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
  await workersComparison();
}
