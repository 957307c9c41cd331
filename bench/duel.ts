/**
 * `npm run bench:duel`: two servers side by side on the same core at the same time, each loaded
 * by its own wrk on another core, so whatever the machine does hits both at once; the ratio of
 * their throughputs is then the inverse ratio of their CPU per request (docs/performance.md,
 * "What users would pick instead"). Steadier than alternating rounds on a noisy machine: an A/A
 * duel gives 0.99 ± 0.02. Needs wrk and taskset; traffic goes to 127.0.0.1 only and stops by
 * itself.
 *
 * DUEL="a=./servers/proceed-posts.ts;b=./servers/fastify-posts.ts" (a contender is
 * name=script, optionally ?ENV=value&… for its environment and @/path/to/checkout to run the
 * script from another checkout, old against new; name=bun:script runs the script on Bun); DUEL_SCENARIOS=get,list,post (the posts
 * servers), tool-get,tool-create (getPost and createPost as MCP tool calls to a contender named
 * …mcp, as REST calls to the other: bench/mcp-scenarios.ts) or feed,post-by-id,me,create (the
 * blog: bench/servers/blog.ts on DATABASE_URL); DUEL_PAIRS
 * (fresh process pairs, default 4), DUEL_ROUNDS (per pair and scenario, default 3),
 * DUEL_SECONDS (default 3).
 */
import { bearer, blogScenarios } from './blog-scenarios.js';
import { type Contender, duel, duelOptions, median, type Scenario } from './compare.js';
import { toolCreate, toolGet } from './mcp-scenarios.js';
import { createBody, getPath, listPath } from './servers/posts.js';

function contenderOf(entry: string): Contender {
  const equals = entry.indexOf('=');
  if (equals < 1) throw new Error(`DUEL: "${entry}" is not name=script`);
  let value = entry.slice(equals + 1);
  const at = value.indexOf('@');
  const checkout = at < 0 ? undefined : value.slice(at + 1);
  if (at >= 0) value = value.slice(0, at);
  const onBun = value.startsWith('bun:');
  if (onBun) value = value.slice('bun:'.length);
  const [script, query = ''] = value.split('?') as [string, string?];
  return {
    name: entry.slice(0, equals),
    script,
    ...(onBun ? { runtime: 'bun' as const } : {}),
    env: Object.fromEntries(new URLSearchParams(query)),
    ...(checkout === undefined ? {} : { checkout }),
  };
}

const scenarios = {
  get: { name: 'get', method: 'GET', path: getPath, expectStatus: 200 },
  list: { name: 'list', method: 'GET', path: listPath, expectStatus: 200 },
  post: {
    name: 'post',
    method: 'POST',
    path: '/api/posts',
    body: createBody,
    expectStatus: 201,
    vary: bearer,
  },
  // A contender named …mcp is sent the tool call, the other the REST call (BENCH_MCP=1 on both).
  'tool-get': { ...toolGet, name: 'tool-get' },
  'tool-create': { ...toolCreate, name: 'tool-create' },
  // The blog's routes (bench/servers/blog.ts), as `npm run bench`'s by-hand section reads them.
  ...blogScenarios,
} satisfies Record<string, Scenario>;
type ScenarioName = keyof typeof scenarios;

const entries = (process.env.DUEL ?? '').split(';').filter(Boolean);
if (entries.length !== 2) throw new Error('DUEL names two contenders: DUEL="a=script;b=script"');
const [first, second] = entries.map(contenderOf) as [Contender, Contender];
const names = (process.env.DUEL_SCENARIOS ?? 'get,list,post').split(',') as ScenarioName[];
const options = duelOptions();
const ratios = await duel(
  first,
  second,
  names.map((name) => scenarios[name]),
  options,
);
console.log(
  `${first.name} ÷ ${second.name}, on one core at once (${options.pairs} process pairs × ${options.rounds} rounds × ${options.seconds} s)`,
);
const spread = (values: number[]) =>
  `${median(values).toFixed(3)} (rounds ${Math.min(...values).toFixed(3)}–${Math.max(...values).toFixed(3)})`;
for (const name of names) {
  const { throughput, cpu } = ratios.get(name) ?? { throughput: [], cpu: [] };
  console.log(`${name.padEnd(5)} req/s ${spread(throughput)}, CPU per request ${spread(cpu)}`);
}
