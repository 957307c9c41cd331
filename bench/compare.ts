/**
 * Side-by-side comparison of two server processes: the load alternates between them, round after
 * round, and the report gives medians and ratios. Traffic goes to 127.0.0.1 only and stops by
 * itself. Environment: BENCH_ROUNDS (default 3), BENCH_SECONDS per measurement (default 3),
 * BENCH_CONNECTIONS (default 50).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { ServerInfo } from './servers/announce.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
/** How many times each contender's server is started afresh in `compareMany` (rounds each). */
const processes = Number(process.env.BENCH_PROCESSES ?? 2);
const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);

/**
 * With two cores or more and `taskset` (util-linux), this process (the load generator) keeps core
 * 0 and the servers get the others: a server's throughput is then its own, not what the client
 * leaves it. BENCH_PIN=0 turns it off.
 */
export const pinning = pinLoadGenerator();

function pinLoadGenerator(): { serverCores: string; allCores: string } | undefined {
  const count = availableParallelism();
  if (process.env.BENCH_PIN === '0' || count < 2) return undefined;
  // -a: every thread of this process (V8's and libuv's too), not only the main one.
  const pinned = spawnSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
  return pinned.status === 0 ? { serverCores: `1-${count - 1}`, allCores: `0-${count - 1}` } : undefined;
}

/**
 * The command that runs `args` with node (or `executable`) on the given cores (all of them
 * without pinning).
 */
export function onCores(
  cores: 'server' | 'all' | { list: string },
  args: string[],
  executable = process.execPath,
): [string, string[]] {
  if (pinning === undefined) return [executable, args];
  const list = cores === 'server' ? pinning.serverCores : cores === 'all' ? pinning.allCores : cores.list;
  return ['taskset', ['-c', list, executable, ...args]];
}

/** Bun, from its npm package (a dev dependency of this repository). */
const bunExecutable = fileURLToPath(new URL('../node_modules/.bin/bun', import.meta.url));

export interface Contender {
  name: string;
  /** A server script that tells its {@link ServerInfo} (bench/servers/announce.ts)… */
  script?: string;
  /** Another checkout of this repository to run `script` from (BENCH_BASELINE): old against new. */
  checkout?: string;
  env?: Record<string, string>;
  /** …or a start of its own (the blog through the CLI). */
  start?: () => Promise<{ info: ServerInfo; child: ChildProcess }>;
  /** CPU time (µs) of what else serves its requests, e.g. the PostgreSQL server's processes. */
  extraCpuTime?: () => number;
  /** Runs `script` on Bun (which reads TypeScript itself) instead of Node with tsx. */
  runtime?: 'bun';
}

export interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** Per contender, when the contenders need different requests (another path, a token, a method and body). */
  vary?: (
    contender: string,
    server: ServerInfo,
  ) => { path?: string; headers?: Record<string, string>; method?: 'GET' | 'POST'; body?: string };
  expectStatus: number;
  /** Makes two answers comparable when they may differ only where they must (a new record's id). */
  normalize?: (answer: string) => string;
}

export type { ServerInfo } from './servers/announce.js';

interface Sample {
  requests: number;
  /** Requests answered over the whole measurement. */
  total?: number;
  p99: number;
  /** The server's own CPU time per request, in µs (Linux only; NaN elsewhere). */
  cpu?: number;
  /** Of `cpu`, what the contender's `extraCpuTime` counted (the database's processes). */
  extraCpu?: number;
}

/** A process and its descendants (the CLI runs an app in a child of its own). */
function processTree(pid: number | undefined): number[] {
  if (pid === undefined) return [];
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    // gone, or not Linux
  }
  return [pid, ...children.flatMap((child) => processTree(child))];
}

/**
 * User + system CPU time of a process so far, in µs, from /proc (NaN where there is none). With
 * `reaped`, that of its children that have exited and been waited for too.
 */
export function cpuTimeOf(pid: number | undefined, { reaped = false } = {}): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // utime, stime, cutime and cstime are fields 14 to 17 of the line, in clock ticks of 10 ms.
    const own = Number(fields[11]) + Number(fields[12]);
    return (reaped ? own + Number(fields[13]) + Number(fields[14]) : own) * 10_000;
  } catch {
    return Number.NaN;
  }
}

const treeCpuTime = (pid: number | undefined) =>
  processTree(pid).reduce((total, each) => total + cpuTimeOf(each), 0);

/** Resident memory of a process and its descendants, in MB. */
function treeRss(pid: number | undefined): number {
  let kilobytes = 0;
  for (const each of processTree(pid)) {
    try {
      kilobytes += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${each}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return kilobytes / 1024;
}

/**
 * How Bun resolves `proceedjs` in a checkout: as an app on Bun does, to the package's `bun` entry
 * (without Fastify), from the sources (test/runtimes/tsconfig.json); the root tsconfig would map it
 * to the Node entry. A checkout older than that file resolves as it did.
 */
function bunResolution(checkout: string): string[] {
  const tsconfig = join(checkout, 'test/runtimes/tsconfig.json');
  return existsSync(tsconfig) ? [`--tsconfig-override=${tsconfig}`] : [];
}

/**
 * Starts a contender's server script. It tells where it listens over the IPC channel
 * (bench/servers/announce.ts), so its stdout, request logs and all, goes to /dev/null: what a
 * log costs the server is counted, and the load generator's core reads none of it.
 */
export async function startServer(
  contender: Contender,
  extraEnv: Record<string, string> = {},
  cores: 'server' | { list: string } = 'server',
): Promise<{ info: ServerInfo; child: ChildProcess }> {
  if (contender.start !== undefined) return contender.start();
  if (contender.script === undefined) throw new Error(`${contender.name}: a script or a start`);
  const here = fileURLToPath(new URL(contender.script, import.meta.url));
  const checkout = contender.checkout;
  // tsx maps `proceedjs` to the sources through the tsconfig of the directory it runs in.
  const script = checkout === undefined ? here : join(checkout, relative(root, here));
  const [command, args] =
    contender.runtime === 'bun'
      ? onCores(cores, [...bunResolution(checkout ?? root), script], bunExecutable)
      : onCores(cores, ['--import', 'tsx', script]);
  const child = spawn(command, args, {
    cwd: checkout ?? root,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, NODE_ENV: 'production', ...contender.env, ...extraEnv },
  });
  const info = await new Promise<ServerInfo>((resolve, reject) => {
    child.once('message', (message) => resolve(message as ServerInfo));
    child.once('exit', (code) => reject(new Error(`${contender.name} exited (${code}) before it listened`)));
  });
  child.disconnect();
  return { info, child };
}

/**
 * wrk (Debian's package), when it is installed: a load generator in C, so that one core of it
 * saturates a server on another; else autocannon, which needs more of its core and may cap what
 * a fast server shows.
 */
export const loadGenerator: 'wrk' | 'autocannon' =
  process.env.BENCH_LOAD !== 'autocannon' && spawnSync('wrk', ['--version']).error === undefined
    ? 'wrk'
    : 'autocannon';

/** A wrk script for one scenario: its method, body and headers, and a summary as JSON at the end. */
function wrkScript(method: string, body: string | undefined, headers: Record<string, string>): string {
  const lua = (text: string) => JSON.stringify(text);
  return [
    `wrk.method = ${lua(method)}`,
    ...(body === undefined ? [] : [`wrk.body = ${lua(body)}`]),
    ...Object.entries(headers).map(([name, value]) => `wrk.headers[${lua(name)}] = ${lua(value)}`),
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format(\'{"requests":%d,"micros":%d,"errors":%d,"status":%d,"p99":%f}\\n\',',
    '    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status,',
    '    latency:percentile(99) / 1000))',
    'end',
  ].join('\n');
}

/** One wrk run of a scenario against `url`: requests per second, p99 and the total answered. */
export async function measureWithWrk(
  url: string,
  scenario: Scenario,
  headers: Record<string, string>,
  duration: number,
  contender: string,
): Promise<Sample> {
  const directory = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
  try {
    const script = join(directory, 'scenario.lua');
    writeFileSync(script, wrkScript(scenario.method, scenario.body, headers));
    const run = spawn(
      'wrk',
      ['-t1', `-c${connections}`, `-d${duration}s`, '--timeout', '10s', '-s', script, url],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let output = '';
    run.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    // 'close', not 'exit': wrk can exit before its last line has been read from the pipe.
    const [code] = (await once(run, 'close')) as [number | null];
    const last = output.trim().split('\n').at(-1) ?? '';
    if (!last.startsWith('{'))
      throw new Error(
        `${contender} ${scenario.name}: wrk exited (${code}) without its summary: ${output.trim()}`,
      );
    const summary = JSON.parse(last) as {
      requests: number;
      micros: number;
      errors: number;
      status: number;
      p99: number;
    };
    if (summary.errors > 0 || summary.status > 0 || !(summary.requests > 0)) {
      throw new Error(
        `${contender} ${scenario.name}: ${summary.errors} socket errors, ${summary.status} answers not 2xx or 3xx`,
      );
    }
    return {
      requests: summary.requests / (summary.micros / 1e6),
      total: summary.requests,
      p99: Math.round(summary.p99 * 100) / 100,
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

async function measure(
  server: ServerInfo,
  scenario: Scenario,
  contender: string,
  duration: number,
): Promise<Sample> {
  const varied = scenario.vary?.(contender, server) ?? {};
  const method = varied.method ?? scenario.method;
  const body = varied.body ?? scenario.body;
  if (loadGenerator === 'wrk') {
    return measureWithWrk(
      `${server.address}${varied.path ?? scenario.path}`,
      { ...scenario, method, ...(body === undefined ? {} : { body }) },
      { 'content-type': 'application/json', ...varied.headers },
      duration,
      contender,
    );
  }
  const result = await autocannon({
    url: `${server.address}${varied.path ?? scenario.path}`,
    method,
    connections,
    duration,
    headers: { 'content-type': 'application/json', ...varied.headers },
    ...(body === undefined ? {} : { body }),
  });
  const statusCount = (result as unknown as { statusCodeStats?: Record<string, { count: number }> })
    .statusCodeStats;
  const expected = statusCount?.[String(scenario.expectStatus)]?.count ?? 0;
  if (result.errors > 0 || result.non2xx > 0 || expected === 0) {
    throw new Error(
      `${contender} ${scenario.name}: ${result.errors} errors, ${result.non2xx} non-2xx, statuses ${JSON.stringify(statusCount)}`,
    );
  }
  return { requests: result.requests.average, total: result.requests.total, p99: result.latency.p99 };
}

/**
 * Stops a server and waits for it to be gone; one that has already exited (a crash that made a
 * measurement throw) is not waited for, or the run would hang instead of reporting the error.
 */
export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** A duel's size from DUEL_PAIRS, DUEL_ROUNDS and DUEL_SECONDS (default 4 pairs × 3 rounds × 3 s). */
export function duelOptions(): { pairs: number; rounds: number; seconds: number } {
  return {
    pairs: Number(process.env.DUEL_PAIRS ?? 4),
    rounds: Number(process.env.DUEL_ROUNDS ?? 3),
    seconds: Number(process.env.DUEL_SECONDS ?? 3),
  };
}

/** Per round of a duel, first ÷ second: requests per second, and CPU per request (second's ÷ first's). */
export interface DuelRatios {
  throughput: number[];
  cpu: number[];
}

/**
 * Two contenders side by side on one core at the same time, each loaded by its own wrk, so
 * whatever the machine does hits both at once: the ratio of their throughputs is then the inverse
 * ratio of their CPU per request, steadier than alternating rounds on a noisy machine (an A/A
 * duel gives 0.99 ± 0.02, docs/performance.md). Each of `pairs` fresh process pairs (started in
 * alternating order: a process started second finds a warmer machine) runs every scenario once to
 * warm up, then `rounds` times; the result is `first ÷ second` of each round, per scenario, in
 * throughput and in CPU per request (each server's own, from /proc: a scheduler that gives one
 * of the two more of the core moves the first, not the second; /proc counts 10 ms ticks, so one
 * round's CPU ratio is good to about 1 %). Needs wrk and taskset.
 */
export async function duel(
  first: Contender,
  second: Contender,
  scenarios: Scenario[],
  { pairs = 4, rounds: duelRounds = 3, seconds: duelSeconds = 3 } = {},
): Promise<Map<string, DuelRatios>> {
  if (loadGenerator !== 'wrk' || pinning === undefined)
    throw new Error('a duel needs wrk and taskset (util-linux), and two cores or more');
  if (first.name === second.name) throw new Error(`a duel needs two names, not ${first.name} twice`);
  // Both servers on the first core the load generator leaves, whatever the machine has: sharing
  // one core is what makes the ratio that of their CPU per request.
  const core = { list: pinning.serverCores.split(/[-,]/)[0] ?? '1' };
  const ratios = new Map<string, DuelRatios>(
    scenarios.map((scenario) => [scenario.name, { throughput: [], cpu: [] }]),
  );
  for (let pair = 0; pair < pairs; pair++) {
    const order = pair % 2 === 0 ? [first, second] : [second, first];
    const started = new Map<string, Awaited<ReturnType<typeof startServer>>>();
    try {
      for (const contender of order) started.set(contender.name, await startServer(contender, {}, core));
      const a = started.get(first.name)!;
      const b = started.get(second.name)!;
      for (const scenario of scenarios) {
        const both = () =>
          Promise.all([
            measure(a.info, scenario, first.name, duelSeconds),
            measure(b.info, scenario, second.name, duelSeconds),
          ]);
        await both(); // warm-up
        for (let round = 0; round < duelRounds; round++) {
          const before = [treeCpuTime(a.child.pid), treeCpuTime(b.child.pid)] as const;
          const [sampleA, sampleB] = await both();
          const cpuA = (treeCpuTime(a.child.pid) - before[0]) / (sampleA.total ?? sampleA.requests);
          const cpuB = (treeCpuTime(b.child.pid) - before[1]) / (sampleB.total ?? sampleB.requests);
          const taken = ratios.get(scenario.name)!;
          taken.throughput.push(sampleA.requests / sampleB.requests);
          taken.cpu.push(cpuB / cpuA);
        }
      }
    } finally {
      for (const { child } of started.values()) await stopServer(child);
    }
  }
  return ratios;
}

/** Runs scenarios against two contenders, alternating; returns median req/s and p99 per pair. */
export async function compare(baseline: Contender, candidate: Contender, scenarios: Scenario[]) {
  const servers = await Promise.all([startServer(baseline), startServer(candidate)]);
  const addresses = new Map([
    [baseline.name, servers[0].info],
    [candidate.name, servers[1].info],
  ]);
  const rows: Array<{
    scenario: string;
    baseline: Sample;
    candidate: Sample;
    ratio: number;
    /** The lowest and highest ratio of one round's pair: how far a single round can be trusted. */
    ratioRange: [number, number];
    p99Ratio: number;
  }> = [];
  try {
    for (const scenario of scenarios) {
      const samples = new Map<string, Sample[]>([
        [baseline.name, []],
        [candidate.name, []],
      ]);
      for (const name of addresses.keys()) await measure(addresses.get(name)!, scenario, name, 1);
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? [baseline.name, candidate.name] : [candidate.name, baseline.name];
        for (const name of order)
          samples.get(name)!.push(await measure(addresses.get(name)!, scenario, name, seconds));
      }
      const summarize = (name: string): Sample => ({
        requests: median(samples.get(name)!.map((sample) => sample.requests)),
        p99: median(samples.get(name)!.map((sample) => sample.p99)),
      });
      const base = summarize(baseline.name);
      const cand = summarize(candidate.name);
      const roundRatios = samples
        .get(candidate.name)!
        .map((sample, round) => sample.requests / samples.get(baseline.name)![round]!.requests);
      rows.push({
        scenario: scenario.name,
        baseline: base,
        candidate: cand,
        ratio: cand.requests / base.requests,
        ratioRange: [Math.min(...roundRatios), Math.max(...roundRatios)],
        p99Ratio: cand.p99 / base.p99,
      });
    }
  } finally {
    for (const { child } of servers) await stopServer(child);
  }
  return rows;
}

export function report(
  title: string,
  baseline: string,
  candidate: string,
  rows: Awaited<ReturnType<typeof compare>>,
) {
  console.log(
    `\n${title} (${rounds} rounds × ${seconds}s, ${connections} connections, medians${placement()})`,
  );
  console.log(
    `| scenario | ${baseline} req/s | ${candidate} req/s | ratio | rounds' ratios | ${baseline} p99 ms | ${candidate} p99 ms | p99 ratio |`,
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    console.log(
      `| ${row.scenario} | ${row.baseline.requests.toFixed(0)} | ${row.candidate.requests.toFixed(0)} | ${row.ratio.toFixed(2)} | ${row.ratioRange[0].toFixed(2)}–${row.ratioRange[1].toFixed(2)} | ${row.baseline.p99} | ${row.candidate.p99} | ${row.p99Ratio.toFixed(2)} |`,
    );
  }
}

/** One request's answer, as compared between contenders before any timing. */
export async function answerOf(server: ServerInfo, scenario: Scenario, contender: string): Promise<string> {
  const varied = scenario.vary?.(contender, server) ?? {};
  const body = varied.body ?? scenario.body;
  const response = await fetch(`${server.address}${varied.path ?? scenario.path}`, {
    method: varied.method ?? scenario.method,
    headers: { 'content-type': 'application/json', ...varied.headers },
    ...(body === undefined ? {} : { body }),
  });
  return `${response.status} location=${response.headers.get('location')}\n${await response.text()}`;
}

export interface ManyRow {
  scenario: string;
  /** Median req/s and p99 per contender. */
  samples: Map<string, Sample>;
  /** The candidate's median over the best other contender's. */
  ratio: number;
  /** The leanest other contender's server CPU per request over the candidate's (above 1: the candidate needs less). */
  cpuRatio: number;
  /** Per round: the candidate over the best other of that round; lowest and highest. */
  ratioRange: [number, number];
  best: string;
  /** How many times each contender's server was started (its rounds taken in each). */
  processes: number;
  /** Seconds of warm-up, seconds per round and rounds per process. */
  timing: { warmup: number; seconds: number; rounds: number };
}

/**
 * Runs scenarios against several contenders, each round in another order. Before timing, checks
 * that every contender gives the same answer (status, Location, body) byte for byte, unless
 * `sameAnswers` is false (two databases make their own ids). The result also holds each server's
 * resident memory (its process tree) after the run.
 */
export async function compareMany(
  candidate: string,
  contenders: Contender[],
  scenarios: Scenario[],
  {
    sameAnswers = true,
    generations = processes,
    timing = { warmup: 1, seconds, rounds },
  }: {
    sameAnswers?: boolean;
    generations?: number;
    /** Seconds of warm-up per contender and scenario, seconds per round, rounds per process. */
    timing?: { warmup: number; seconds: number; rounds: number };
  } = {},
) {
  const names = contenders.map((contender) => contender.name);
  const extras = new Map(contenders.map((contender) => [contender.name, contender.extraCpuTime]));
  const rss = new Map<string, number>();
  const samples = scenarios.map(() => new Map<string, Sample[]>(names.map((name) => [name, []])));
  // Two processes of one program can differ by several percent (JIT and memory layout): each
  // generation starts every contender afresh, and the medians are taken over all of them.
  for (let generation = 0; generation < generations; generation++) {
    const servers = await Promise.all(contenders.map((contender) => startServer(contender)));
    const info = new Map(names.map((name, index) => [name, servers[index]!.info]));
    const pids = new Map(names.map((name, index) => [name, servers[index]!.child.pid]));
    try {
      for (const [index, scenario] of scenarios.entries()) {
        if (generation === 0) await checkAnswers(scenario, names, info, sameAnswers);
        for (const name of names) await measure(info.get(name)!, scenario, name, timing.warmup);
        for (let round = 0; round < timing.rounds; round++) {
          const turn = generation * timing.rounds + round;
          const order = names.map((_, at) => names[(at + turn) % names.length]!);
          for (const name of order) {
            const pid = pids.get(name);
            const extra = extras.get(name);
            const before = { own: treeCpuTime(pid), extra: extra?.() ?? 0 };
            const sample = await measure(info.get(name)!, scenario, name, timing.seconds);
            const own = treeCpuTime(pid) - before.own;
            const outside = (extra?.() ?? 0) - before.extra;
            const count = sample.total ?? sample.requests * timing.seconds;
            samples[index]!.get(name)!.push({
              ...sample,
              cpu: (own + outside) / count,
              ...(extra === undefined ? {} : { extraCpu: outside / count }),
            });
          }
        }
      }
      if (generation === generations - 1) for (const name of names) rss.set(name, treeRss(pids.get(name)));
    } finally {
      for (const { child } of servers) await stopServer(child);
    }
  }
  const rows: ManyRow[] = scenarios.map((scenario, index) => {
    const taken = samples[index]!;
    const medians = new Map(
      names.map((name) => [
        name,
        {
          requests: median(taken.get(name)!.map((sample) => sample.requests)),
          p99: median(taken.get(name)!.map((sample) => sample.p99)),
          cpu: median(taken.get(name)!.map((sample) => sample.cpu ?? Number.NaN)),
          ...(extras.get(name) === undefined
            ? {}
            : { extraCpu: median(taken.get(name)!.map((sample) => sample.extraCpu ?? Number.NaN)) }),
        },
      ]),
    );
    const others = names.filter((name) => name !== candidate);
    const best = others.reduce((a, b) => (medians.get(a)!.requests >= medians.get(b)!.requests ? a : b));
    const roundRatios = taken
      .get(candidate)!
      .map(
        (sample, round) =>
          sample.requests / Math.max(...others.map((name) => taken.get(name)![round]!.requests)),
      );
    const leanest = Math.min(...others.map((name) => medians.get(name)!.cpu ?? Number.NaN));
    return {
      scenario: scenario.name,
      samples: medians,
      cpuRatio: leanest / (medians.get(candidate)!.cpu ?? Number.NaN),
      ratio: medians.get(candidate)!.requests / medians.get(best)!.requests,
      ratioRange: [Math.min(...roundRatios), Math.max(...roundRatios)] as [number, number],
      best,
      processes: generations,
      timing,
    };
  });
  return Object.assign(rows, { rss });
}

/**
 * Before any timing: every contender gives the same answer (status, Location, body) byte for
 * byte, unless `sameAnswers` is false (two databases make their own ids).
 */
async function checkAnswers(
  scenario: Scenario,
  names: string[],
  info: Map<string, ServerInfo>,
  sameAnswers: boolean,
): Promise<void> {
  const normalize = scenario.normalize ?? ((answer: string) => answer);
  const answers = (await Promise.all(names.map((name) => answerOf(info.get(name)!, scenario, name)))).map(
    normalize,
  );
  for (const [index, answer] of answers.entries()) {
    if (!sameAnswers && answer.startsWith(`${scenario.expectStatus} `)) continue;
    if (answer !== answers[0])
      throw new Error(
        `${scenario.name}: ${names[index]} answers differently from ${names[0]}:\n${answer}\n---\n${answers[0]}`,
      );
  }
}

export function reportMany(title: string, candidate: string, names: string[], rows: ManyRow[]) {
  const started = rows[0]?.processes ?? processes;
  const timing = rows[0]?.timing ?? { warmup: 1, seconds, rounds };
  console.log(
    `\n${title} (${started} ${started === 1 ? 'process' : 'processes'} × ${timing.rounds} rounds × ${timing.seconds}s each after ${timing.warmup}s of warm-up, ${connections} connections, medians${placement()})`,
  );
  // Where a contender's database runs in other processes, the CPU column says how much was theirs.
  const outside = rows.some((row) => names.some((name) => row.samples.get(name)!.extraCpu !== undefined));
  const of = (sample: Sample) => (sample.extraCpu === undefined ? '' : ` (db ${sample.extraCpu.toFixed(0)})`);
  console.log(
    `| scenario | ${names.map((name) => `${name} req/s`).join(' | ')} | ${candidate} ÷ best other | rounds' ratios | server CPU µs/req${outside ? ', of which the database' : ''} (${names.join(' / ')}) | CPU: leanest other ÷ ${candidate} | p99 ms (${names.join(' / ')}) |`,
  );
  console.log(`|---|${names.map(() => '---:').join('|')}|---:|---:|---:|---:|---:|`);
  for (const row of rows) {
    const cells = names.map((name) => row.samples.get(name)!.requests.toFixed(0));
    const cpu = names
      .map((name) => {
        const sample = row.samples.get(name)!;
        return `${(sample.cpu ?? Number.NaN).toFixed(1)}${of(sample)}`;
      })
      .join(' / ');
    const p99 = names.map((name) => row.samples.get(name)!.p99.toFixed(1)).join(' / ');
    console.log(
      `| ${row.scenario} | ${cells.join(' | ')} | ${row.ratio.toFixed(2)} (vs ${row.best}) | ${row.ratioRange[0].toFixed(2)}–${row.ratioRange[1].toFixed(2)} | ${cpu} | ${row.cpuRatio.toFixed(2)} | ${p99} |`,
    );
  }
}

function placement(): string {
  return `, ${loadGenerator}${
    pinning === undefined
      ? ', client and servers sharing every core'
      : `, client on core 0, servers on ${pinning.serverCores}`
  }`;
}
