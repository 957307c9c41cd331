/**
 * `npm run bench`: Proceed against what users would pick instead (Fastify by hand, ts-rest on
 * Fastify) on a real app's three endpoints; against bare Fastify on the same endpoints; the cost
 * of auth, of the metrics plugin and of entity tags with compression; and the blog with one
 * worker against two, each side by side in one run (compare.ts). docs/performance.md. Environment:
 * BENCH_ROUNDS (default 3), BENCH_SECONDS per measurement (default 3), BENCH_CONNECTIONS
 * (default 50), BENCH_ONLY (comma-separated sections: peers, outside (outside-duels: its duels alone), fastify, auth, metrics, http-cache,
 * workers, embedded, by-hand, mcp, runtimes (bun: its Bun half), tracing, uploads, sockets; default all),
 * BENCH_BASELINE (a built checkout whose blog runs beside this one in by-hand), BENCH_LOG_LEVEL (the blog's LOG_LEVEL; default warn), DUEL_PAIRS,
 * DUEL_ROUNDS and DUEL_SECONDS (the size of the peers' and the blog's duels, compare.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  answerOf,
  type Contender,
  compare,
  compareMany,
  type DuelRatios,
  duel,
  duelOptions,
  loadGenerator,
  median,
  pinning,
  report,
  reportMany,
  type Scenario,
  startServer,
  stopServer,
} from './compare.js';
import { toolCreate, toolGet } from './mcp-scenarios.js';
import { createBody, expectedCalls, getPath, listPath } from './servers/posts.js';
import { socketsComparison } from './sockets.js';
import { uploadsComparison } from './uploads.js';
import { embeddedComparison, handWrittenComparison, workersComparison } from './workers.js';

const only = process.env.BENCH_ONLY?.split(',').map((section) => section.trim());
const runs = (section: string) => only === undefined || only.includes(section);

/** ts-rest and Hono live in bench/contenders with their own lock file (ts-rest's peers are older than ours). */
function installContenders(): void {
  const directory = fileURLToPath(new URL('./contenders/', import.meta.url));
  if (['@ts-rest/fastify', 'hono', 'elysia'].every((name) => existsSync(`${directory}node_modules/${name}`)))
    return;
  const install = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: directory, stdio: 'inherit' });
  if (install.status !== 0) throw new Error('npm ci in bench/contenders failed');
}

const bearer = (_contender: string, server: { token?: string }) => ({
  headers: { authorization: `Bearer ${server.token}` },
});
const peerScenarios: Array<Scenario & { calls: readonly string[] }> = [
  { name: 'GET /api/posts/:id', method: 'GET', path: getPath, expectStatus: 200, calls: expectedCalls.get },
  {
    name: 'GET /api/posts?limit=20&cursor=',
    method: 'GET',
    path: listPath,
    expectStatus: 200,
    calls: expectedCalls.list,
  },
  {
    name: 'POST /api/posts (bearer JWT, 1 KB)',
    calls: expectedCalls.create,
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
  if (runs('peers')) await peersSection();
  if (runs('outside')) await outsideSection();
  if (runs('outside') || runs('outside-duels')) await outsideDuels();
  if (runs('fastify'))
    report('Proceed vs bare Fastify', 'fastify', 'proceed', await compare(fastify, proceed, itemScenarios));

  if (runs('auth')) await authSection();
  if (runs('metrics')) await metricsSection(proceed);
  if (runs('http-cache')) await httpCacheSection();
  if (runs('workers')) await workersComparison();
  if (runs('embedded')) await embeddedComparison();
  if (runs('by-hand')) await handWrittenComparison();
  if (runs('mcp')) await mcpSection();
  if (runs('runtimes') || runs('bun')) await bunSection();
  if (runs('runtimes')) await nodeBridgeSection();
  if (runs('tracing')) await tracingSection();
  if (runs('uploads')) await uploadsComparison();
  if (runs('sockets')) await socketsComparison();
}

/**
 * Before any timing: each contender, started with BENCH_DATA_TRACE, answers each scenario once
 * and must have made exactly the data calls the scenario needs, through the shared module
 * (bench/servers/posts.ts). A contender with a lookup of its own would call nothing there.
 */
async function checkDataAccess(contenders: Contender[]): Promise<void> {
  for (const contender of contenders) {
    const trace = join(tmpdir(), `bench-data-${process.pid}-${contender.name}.log`);
    rmSync(trace, { force: true });
    const { info, child } = await startServer(contender, { BENCH_DATA_TRACE: trace });
    try {
      for (const scenario of peerScenarios) {
        rmSync(trace, { force: true });
        await answerOf(info, scenario, contender.name);
        const calls = existsSync(trace) ? readFileSync(trace, 'utf8').trim().split('\n') : [];
        if (calls.join(',') !== scenario.calls.join(',')) {
          throw new Error(
            `${contender.name} ${scenario.name}: data calls ${JSON.stringify(calls)}, expected ${JSON.stringify(scenario.calls)}`,
          );
        }
      }
    } finally {
      await stopServer(child);
      rmSync(trace, { force: true });
    }
  }
  console.log(
    `\nData access checked: ${contenders.map((contender) => contender.name).join(', ')} each made exactly the shared data calls of every scenario`,
  );
}

/**
 * What users would pick instead, each as its users write it, on the shared data access: Proceed
 * with every default on against Fastify by hand, ts-rest on Fastify and Hono on Node, each with its
 * request log as its docs turn it on; then the same without any request log; then what each of
 * Proceed's per-request defaults costs.
 */
async function peersSection(): Promise<void> {
  installContenders();
  const peers = (env: Record<string, string> = {}) => [
    { name: 'fastify', script: './servers/fastify-posts.ts', env },
    { name: 'ts-rest', script: './contenders/ts-rest-posts.ts', env },
    { name: 'hono', script: './contenders/hono-posts.ts', env },
  ];
  const proceed = (name: string, off: string) => ({
    name,
    script: './servers/proceed-posts.ts',
    env: { BENCH_OFF: off },
  });
  const contenders = [proceed('proceed', ''), ...peers()];
  await checkDataAccess(contenders);
  reportMany(
    'What users would pick instead, each with its request log: Proceed with its defaults (views, cursor pages, auth plugin, entity tags, request ids, one log line per request) vs Fastify by hand (JSON schemas, fast-jwt, logger: true) vs ts-rest on Fastify (Zod, logger: true) vs Hono on Node (zValidator, hono/jwt, hono/logger); same data calls, same answers byte for byte',
    'proceed',
    contenders.map((contender) => contender.name),
    await compareMany('proceed', contenders, peerScenarios),
  );
  // The same app against itself, both ways: how far apart identical code lands on this machine,
  // in this run, is what tells a difference between contenders from noise.
  const again = [proceed('proceed', ''), proceed('proceed again', '')];
  reportMany(
    'Calibration, alternating rounds: Proceed against itself (the same app in two processes), each with its request log',
    'proceed',
    again.map((contender) => contender.name),
    await compareMany('proceed', again, peerScenarios),
  );
  await duelsWithPeers(contenders[0]!, [...peers().slice(0, 2), again[1]!]);
  const quiet = [proceed('proceed', 'request-log'), ...peers({ BENCH_LOGS: 'off' })];
  reportMany(
    'The same without any request log: Proceed with every other default on',
    'proceed',
    quiet.map((contender) => contender.name),
    await compareMany('proceed', quiet, peerScenarios),
  );
  const variants = [
    proceed('defaults', ''),
    proceed('no entity tags', 'entity-tags'),
    proceed('no request log', 'request-log'),
    proceed('no request ids', 'request-ids'),
    proceed('none of them', 'entity-tags,request-log,request-ids'),
  ];
  reportMany(
    "What each of Proceed's per-request defaults costs: the same app with one turned off (the ratio is defaults ÷ the best variant)",
    'defaults',
    variants.map((variant) => variant.name),
    await compareMany('defaults', variants, peerScenarios),
  );
}

/**
 * The peers' bench as a harness written outside the project sets it up (docs/performance.md,
 * "The outside set-up"): no contender logs requests, each server runs alone on its core, one
 * process each, 3 s of warm-up, then 3 alternating rounds of 8 s; plain `node:http` doing the same
 * work is the floor every contender is given against.
 */
/** The outside set-up's contenders, none logging requests: Proceed first, the floor last. */
function outsideContenders(): Contender[] {
  const noRequestLog = { BENCH_LOGS: 'off' };
  return [
    { name: 'proceed', script: './servers/proceed-posts.ts', env: { BENCH_OFF: 'request-log' } },
    // The same app asking for app.server: Fastify serves it (docs/deployment.md).
    {
      name: 'proceed on fastify',
      script: './servers/proceed-posts.ts',
      env: { BENCH_OFF: 'request-log', BENCH_ADAPTER: 'fastify' },
    },
    { name: 'fastify', script: './servers/fastify-posts.ts', env: noRequestLog },
    { name: 'ts-rest', script: './contenders/ts-rest-posts.ts', env: noRequestLog },
    { name: 'node:http', script: './servers/node-posts.ts' },
  ];
}

async function outsideSection(): Promise<void> {
  installContenders();
  const contenders = outsideContenders();
  await checkDataAccess(contenders);
  const timing = {
    warmup: Number(process.env.OUTSIDE_WARMUP ?? 3),
    seconds: Number(process.env.OUTSIDE_SECONDS ?? 8),
    rounds: Number(process.env.OUTSIDE_ROUNDS ?? 3),
  };
  const rows = await compareMany('proceed', contenders, peerScenarios, { generations: 1, timing });
  reportMany(
    'The outside set-up: no request logs, each contender alone on its core (Proceed with every other default on; Fastify with JSON Schema; ts-rest with Zod and response validation; plain node:http by hand)',
    'proceed',
    contenders.map((contender) => contender.name),
    rows,
  );
  const proceeds = ['proceed', 'proceed on fastify'];
  console.log(
    `\n| scenario | × node:http: ${[...proceeds, 'fastify', 'ts-rest'].join(' / ')} | ${proceeds.map((name) => `${name} ÷ the best of fastify and ts-rest`).join(' | ')} |`,
  );
  console.log(`|---|---:|${proceeds.map(() => '---:').join('|')}|`);
  for (const row of rows) {
    const requests = (name: string) => row.samples.get(name)!.requests;
    const floor = requests('node:http');
    const times = [...proceeds, 'fastify', 'ts-rest'].map((name) => (requests(name) / floor).toFixed(2));
    const best = Math.max(requests('fastify'), requests('ts-rest'));
    console.log(
      `| ${row.scenario} | ${times.join(' / ')} | ${proceeds.map((name) => `**${(requests(name) / best).toFixed(2)}**`).join(' | ')} |`,
    );
  }
}

/**
 * The outside set-up's contenders in duels: alternating rounds on a noisy machine move by ±20 %,
 * a duel by a few percent (`duelsWithPeers`).
 */
async function outsideDuels(): Promise<void> {
  installContenders();
  const [proceed, proceedOnFastify, fastify, tsRest] = outsideContenders();
  await duelsWithPeers(proceed!, [fastify!, tsRest!], 'with no request log');
  await duelsWithPeers(proceedOnFastify!, [fastify!, tsRest!], 'with no request log');
}

/**
 * The same contenders side by side on one core at once (`duel` in compare.ts): Proceed against
 * each of `peers` in turn, every scenario, and against the best of them, the lowest of its ratios
 * (a peer named "proceed again" is the calibration: Proceed against itself, not a contender).
 * Alternating rounds move by ±20 % on a noisy VM; a duel moves by a few percent.
 */
async function duelsWithPeers(
  proceed: Contender,
  peers: Contender[],
  logs = 'each with its request log',
): Promise<void> {
  if (loadGenerator !== 'wrk' || pinning === undefined) {
    console.log('\nDuels skipped: they need wrk and taskset, and two cores or more');
    return;
  }
  const options = duelOptions();
  const results = new Map<string, Map<string, DuelRatios>>();
  for (const peer of peers) results.set(peer.name, await duel(proceed, peer, peerScenarios, options));
  console.log(
    `\nThe same, side by side on one core at once, ${logs}: ${proceed.name} ÷ each other in requests per second, each under its own wrk, and the other's CPU per request ÷ ${proceed.name}'s (${options.pairs} process pairs × ${options.rounds} rounds × ${options.seconds}s, medians and rounds' range)`,
  );
  const names = peers.map((peer) => peer.name);
  const spread = (values: number[]) =>
    `${median(values).toFixed(3)} (${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`;
  console.log(
    `| scenario | ${names.map((name) => `req/s ÷ ${name}`).join(' | ')} | ${names.map((name) => `CPU: ${name} ÷ ${proceed.name}`).join(' | ')} | ÷ the best other (req/s / CPU) |`,
  );
  console.log(`|---|${names.map(() => '---:|---:').join('|')}|---:|`);
  for (const scenario of peerScenarios) {
    const of = (name: string) => results.get(name)!.get(scenario.name)!;
    const contenders = names.filter((name) => name !== 'proceed again');
    const lowest = (kind: keyof DuelRatios) => {
      const medians = contenders.map((name) => median(of(name)[kind]));
      const least = Math.min(...medians);
      return `${least.toFixed(3)} (vs ${contenders[medians.indexOf(least)]})`;
    };
    console.log(
      `| ${scenario.name} | ${names.map((name) => spread(of(name).throughput)).join(' | ')} | ${names.map((name) => spread(of(name).cpu)).join(' | ')} | **${lowest('throughput')}** / **${lowest('cpu')}** |`,
    );
  }
}

/**
 * What tracing costs (docs/observability.md, "Cost"): the peers' app without a tracing option,
 * with `openTelemetry()` and no SDK started, and with the SDK recording every request into an
 * exporter that drops them; with BENCH_BASELINE, also that checkout's build (one from before the
 * integration) beside them, for what the integration costs an app that does not trace.
 */
async function tracingSection(): Promise<void> {
  const proceed = (name: string, tracing: string, checkout?: string) => ({
    name,
    script: './servers/proceed-posts.ts',
    env: { BENCH_TRACING: tracing },
    ...(checkout === undefined ? {} : { checkout }),
  });
  const baseline = process.env.BENCH_BASELINE;
  const variants = [
    proceed('untraced', ''),
    ...(baseline === undefined ? [] : [proceed('baseline build', '', baseline)]),
    proceed('no SDK', 'api'),
    proceed('traced', 'sdk'),
  ];
  reportMany(
    `Tracing: the same app without a tracing option${baseline === undefined ? '' : `, the build at ${baseline}`}, with openTelemetry() and no SDK, and with the SDK recording every request into an exporter that drops it (the ratio is untraced ÷ the best other)`,
    'untraced',
    variants.map((variant) => variant.name),
    await compareMany('untraced', variants, peerScenarios),
  );
}

/**
 * `app.fetch` where users pick a Fetch handler: on Bun (`app.listen` serves it with Bun.serve)
 * against Hono on Bun.serve and Elysia, and on Node through `@hono/node-server` against Hono on the
 * same bridge, beside Proceed on its own Node server (Fastify). The same data calls, no request
 * log anywhere (Elysia has none of its own).
 */
/**
 * A procedure called as an MCP tool against the same procedure over its REST route, on one app
 * (docs/mcp.md): the same data calls, the same answer (the tool's `structuredContent` is the REST
 * body), what the JSON-RPC envelope and the per-call context cost. Bar: at most 1.2 × the CPU.
 * Beside them, the floor: the same two tool calls by hand on Fastify against its REST routes.
 */
async function mcpSection(): Promise<void> {
  const env = { BENCH_OFF: 'request-log', BENCH_MCP: '1' };
  // The floor: the same tool calls by hand on Fastify, against its own REST routes.
  const byHand = { BENCH_LOGS: 'off', BENCH_MCP: '1' };
  const contenders = [
    { name: 'rest', script: './servers/proceed-posts.ts', env },
    { name: 'mcp', script: './servers/proceed-posts.ts', env },
    { name: 'fastify-rest', script: './servers/fastify-posts.ts', env: byHand },
    { name: 'fastify-mcp', script: './servers/fastify-posts.ts', env: byHand },
  ];
  const scenarios: Scenario[] = [toolGet, toolCreate];
  const names = contenders.map((contender) => contender.name);
  const rows = await compareMany('mcp', contenders, scenarios);
  reportMany(
    "A tools/call through the MCP endpoint vs the same procedure over REST, and the same two by hand on Fastify (no request log; the ÷ columns compare mcp with the best of the other three; the bar, tools/call at most 1.2 × its REST call's CPU, is the line after the table)",
    'mcp',
    names,
    rows,
  );
  const cpu = (row: (typeof rows)[number], name: string) => row.samples.get(name)?.cpu ?? Number.NaN;
  for (const row of rows)
    console.log(
      `${row.scenario}: tools/call ÷ REST, server CPU per request: Proceed ${(cpu(row, 'mcp') / cpu(row, 'rest')).toFixed(2)}, Fastify by hand ${(cpu(row, 'fastify-mcp') / cpu(row, 'fastify-rest')).toFixed(2)}`,
    );
}

/** Proceed on Bun against Hono and Elysia there (BENCH_ONLY=bun runs this half of `runtimes`). */
async function bunSection(): Promise<void> {
  installContenders();
  const quiet = { BENCH_OFF: 'request-log' };
  const onBun = [
    { name: 'proceed', script: './servers/proceed-posts.ts', env: quiet, runtime: 'bun' as const },
    {
      name: 'hono',
      script: './contenders/hono-posts.ts',
      env: { BENCH_LOGS: 'off' },
      runtime: 'bun' as const,
    },
    { name: 'elysia', script: './contenders/elysia-posts.ts', runtime: 'bun' as const },
  ];
  await checkDataAccess(onBun);
  reportMany(
    'On Bun: Proceed (app.listen, which serves app.fetch with Bun.serve) vs Hono on Bun.serve (zValidator, hono/jwt) vs Elysia (t schemas, @elysiajs/jwt); no request log; same data calls',
    'proceed',
    onBun.map((contender) => contender.name),
    await compareMany('proceed', onBun, peerScenarios),
  );
}

async function nodeBridgeSection(): Promise<void> {
  installContenders();
  const quiet = { BENCH_OFF: 'request-log' };
  const onNode = [
    { name: 'proceed app.fetch', script: './contenders/proceed-fetch-posts.ts', env: quiet },
    { name: 'hono', script: './contenders/hono-posts.ts', env: { BENCH_LOGS: 'off' } },
    {
      name: 'proceed on Fastify',
      script: './servers/proceed-posts.ts',
      env: { ...quiet, BENCH_ADAPTER: 'fastify' },
    },
  ];
  await checkDataAccess(onNode);
  reportMany(
    'On Node through @hono/node-server: Proceed app.fetch vs Hono, both on the same Node-to-Fetch bridge, beside Proceed on its own Node server (Fastify); no request log; same data calls',
    'proceed app.fetch',
    onNode.map((contender) => contender.name),
    await compareMany('proceed app.fetch', onNode, peerScenarios),
  );
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
