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
 * script from another checkout, old against new); DUEL_SCENARIOS=get,list,post; DUEL_PAIRS
 * (fresh process pairs, default 4), DUEL_ROUNDS (per pair and scenario, default 3),
 * DUEL_SECONDS (default 3).
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Contender, startServer } from './compare.js';
import { createBody, getPath, listPath } from './servers/posts.js';

function contenderOf(entry: string): Contender {
  const equals = entry.indexOf('=');
  if (equals < 1) throw new Error(`DUEL: "${entry}" is not name=script`);
  let value = entry.slice(equals + 1);
  const at = value.indexOf('@');
  const checkout = at < 0 ? undefined : value.slice(at + 1);
  if (at >= 0) value = value.slice(0, at);
  const [script, query = ''] = value.split('?') as [string, string?];
  return {
    name: entry.slice(0, equals),
    script,
    env: Object.fromEntries(new URLSearchParams(query)),
    ...(checkout === undefined ? {} : { checkout }),
  };
}

const scenarios = {
  get: { method: 'GET', path: getPath, body: undefined, bearer: false },
  list: { method: 'GET', path: listPath, body: undefined, bearer: false },
  post: { method: 'POST', path: '/api/posts', body: createBody, bearer: true },
} as const;
type ScenarioName = keyof typeof scenarios;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

function wrkScript(scenario: (typeof scenarios)[ScenarioName], token: string | undefined): string {
  const lua = (text: string) => JSON.stringify(text);
  return [
    `wrk.method = ${lua(scenario.method)}`,
    ...(scenario.body === undefined ? [] : [`wrk.body = ${lua(scenario.body)}`]),
    'wrk.headers["content-type"] = "application/json"',
    ...(scenario.bearer && token !== undefined
      ? [`wrk.headers["authorization"] = ${lua(`Bearer ${token}`)}`]
      : []),
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format(\'{"requests":%d,"micros":%d,"bad":%d}\\n\', summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout + e.status))',
    'end',
  ].join('\n');
}

async function load(url: string, script: string, seconds: number): Promise<number> {
  const run = spawn('taskset', ['-c', '0', 'wrk', '-t1', '-c32', `-d${seconds}s`, '-s', script, url], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  run.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  await once(run, 'exit');
  const summary = JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as {
    requests: number;
    micros: number;
    bad: number;
  };
  if (summary.bad > 0 || !(summary.requests > 0)) throw new Error(`${url}: ${summary.bad} failed answers`);
  return summary.requests / (summary.micros / 1e6);
}

const entries = (process.env.DUEL ?? '').split(';').filter(Boolean);
if (entries.length !== 2) throw new Error('DUEL names two contenders: DUEL="a=script;b=script"');
for (const tool of ['wrk', 'taskset']) {
  if (spawnSync(tool, ['--version']).error !== undefined) throw new Error(`bench:duel needs ${tool}`);
}
const [first, second] = entries.map(contenderOf) as [Contender, Contender];
const names = (process.env.DUEL_SCENARIOS ?? 'get,list,post').split(',') as ScenarioName[];
const pairs = Number(process.env.DUEL_PAIRS ?? 4);
const rounds = Number(process.env.DUEL_ROUNDS ?? 3);
const seconds = Number(process.env.DUEL_SECONDS ?? 3);
const directory = mkdtempSync(join(tmpdir(), 'bench-duel-'));
const ratios = new Map<ScenarioName, number[]>(names.map((name) => [name, []]));
try {
  for (let pair = 0; pair < pairs; pair++) {
    // Which one starts first alternates: a process started second finds a warmer machine.
    const order = pair % 2 === 0 ? [first, second] : [second, first];
    const started = new Map<string, Awaited<ReturnType<typeof startServer>>>();
    // Both on the cores the load generator leaves (core 1 of two): `startServer` pins them.
    for (const contender of order) started.set(contender.name, await startServer(contender));
    try {
      const a = started.get(first.name);
      const b = started.get(second.name);
      if (a === undefined || b === undefined) throw new Error('a contender did not start');
      for (const name of names) {
        const scenario = scenarios[name];
        const scriptA = join(directory, `${name}-a.lua`);
        const scriptB = join(directory, `${name}-b.lua`);
        writeFileSync(scriptA, wrkScript(scenario, a.info.token));
        writeFileSync(scriptB, wrkScript(scenario, b.info.token));
        const both = () =>
          Promise.all([
            load(`${a.info.address}${scenario.path}`, scriptA, seconds),
            load(`${b.info.address}${scenario.path}`, scriptB, seconds),
          ]);
        await both(); // warm-up
        for (let round = 0; round < rounds; round++) {
          const [rateA, rateB] = await both();
          ratios.get(name)?.push(rateA / rateB);
        }
      }
    } finally {
      for (const { child } of started.values()) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    }
  }
} finally {
  rmSync(directory, { recursive: true, force: true });
}
console.log(
  `${first.name} ÷ ${second.name}, on one core at once (${pairs} process pairs × ${rounds} rounds × ${seconds} s)`,
);
for (const name of names) {
  const values = ratios.get(name) ?? [];
  console.log(
    `${name.padEnd(5)} median ${median(values).toFixed(3)}, rounds ${Math.min(...values).toFixed(3)}–${Math.max(...values).toFixed(3)}`,
  );
}
