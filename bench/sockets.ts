/**
 * `npm run bench`'s sockets section (BENCH_ONLY=sockets; docs/performance.md, "WebSockets"):
 * Proceed's socket procedures against the same two sockets written by hand, with `ws` on Node and
 * with `Bun.serve` on Bun. Messages echoed per second (validated through one schema) and pushed
 * per second (as fast as the client reads), rounds alternating between contenders, medians and
 * spread; then the resident memory of one Node server holding 10,000 open sockets.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { type Contender, median, startServer, stopServer } from './compare.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const held = Number(process.env.BENCH_SOCKETS ?? 10_000);
const load = fileURLToPath(new URL('./socket-load.ts', import.meta.url));

const pairs: Array<{ runtime: string; proceed: Contender; byHand: Contender }> = [
  {
    runtime: 'Node',
    proceed: { name: 'proceed', script: './servers/proceed-sockets.ts' },
    byHand: { name: 'ws by hand', script: './servers/ws-sockets.ts' },
  },
  {
    runtime: 'Bun',
    proceed: { name: 'proceed', script: './servers/proceed-sockets.ts', runtime: 'bun' },
    byHand: { name: 'Bun.serve by hand', script: './servers/bun-sockets.ts', runtime: 'bun' },
  },
];

/** Runs the load client on this process's core (the harness is pinned to the load generator's). */
function runLoad(args: string[]): Promise<{ perSecond: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', load, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(output.trim().split('\n').at(-1) ?? '{}'))
        : reject(new Error(`socket-load ${args[0]} exited ${code}`)),
    );
  });
}

const socketUrl = (address: string) => address.replace(/^http/, 'ws');

/** The echo answers what it was sent, on every contender alike. */
async function checkEcho(address: string, name: string): Promise<void> {
  const ws = new WebSocket(`${socketUrl(address)}/echo`);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const answer = new Promise<string>((resolve) => ws.once('message', (data) => resolve(String(data))));
  ws.send('{"text":"same answer"}');
  const text = await answer;
  ws.terminate();
  if (text !== '{"text":"same answer"}') throw new Error(`${name} echoed ${text}`);
}

function residentBytes(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

const rate = (values: number[]) =>
  `${Math.round(median(values)).toLocaleString('en')} (${Math.round(Math.min(...values)).toLocaleString('en')}–${Math.round(Math.max(...values)).toLocaleString('en')})`;

async function measureRates(contender: Contender): Promise<{ echo: number; push: number }> {
  const { info, child } = await startServer(contender);
  try {
    await checkEcho(info.address, contender.name);
    const url = socketUrl(info.address);
    const echo = await runLoad(['echo', url, String(connections), '8', String(seconds)]);
    const push = await runLoad(['push', url, String(connections), String(seconds)]);
    return { echo: echo.perSecond, push: push.perSecond };
  } finally {
    await stopServer(child);
  }
}

/** Resident memory of a server before and with `held` sockets open. */
async function measureHeld(contender: Contender): Promise<{ before: number; after: number }> {
  const { info, child } = await startServer(contender);
  let client: ChildProcess | undefined;
  try {
    await checkEcho(info.address, contender.name);
    const before = residentBytes(child.pid);
    client = spawn(
      process.execPath,
      ['--import', 'tsx', load, 'hold', socketUrl(info.address), String(held)],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    await new Promise<void>((resolve, reject) => {
      client?.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('"held"')) resolve();
      });
      client?.once('exit', (code) => reject(new Error(`socket-load hold exited ${code}`)));
    });
    // Settled: what the open sockets keep, not what their handshakes passed through.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    return { before, after: residentBytes(child.pid) };
  } finally {
    client?.stdin?.end();
    client?.kill();
    await stopServer(child);
  }
}

export async function socketsComparison(): Promise<void> {
  for (const { runtime, proceed, byHand } of pairs) {
    const results = new Map<string, { echo: number[]; push: number[] }>([
      [proceed.name, { echo: [], push: [] }],
      [byHand.name, { echo: [], push: [] }],
    ]);
    for (let round = 0; round < rounds; round++) {
      // Alternated: neither side always runs first, on a machine warmer or busier than before.
      const order = round % 2 === 0 ? [proceed, byHand] : [byHand, proceed];
      for (const contender of order) {
        const measured = await measureRates(contender);
        results.get(contender.name)?.echo.push(measured.echo);
        results.get(contender.name)?.push.push(measured.push);
      }
    }
    const ours = results.get(proceed.name);
    const theirs = results.get(byHand.name);
    if (ours === undefined || theirs === undefined) continue;
    console.log(
      `\nWebSockets on ${runtime}: Proceed (app.listen) vs ${byHand.name}; ${connections} sockets, ${rounds} alternating rounds of ${seconds} s; messages/s, median (min–max)`,
    );
    console.log(`| | ${proceed.name} | ${byHand.name} | ÷ |`);
    console.log('|---|---:|---:|---:|');
    for (const kind of ['echo', 'push'] as const)
      console.log(
        `| ${kind === 'echo' ? 'echoed (8 in flight per socket, validated)' : 'pushed (as fast as the client reads)'} | ${rate(ours[kind])} | ${rate(theirs[kind])} | ${(median(ours[kind]) / median(theirs[kind])).toFixed(2)} |`,
      );
  }
  const node = pairs[0];
  if (node === undefined) return;
  console.log(`\nResident memory of one Node server with ${held.toLocaleString('en')} open sockets`);
  console.log('| | before | with the sockets | per socket |');
  console.log('|---|---:|---:|---:|');
  for (const contender of [node.proceed, node.byHand]) {
    const { before, after } = await measureHeld(contender);
    console.log(
      `| ${contender.name} | ${(before / 2 ** 20).toFixed(0)} MiB | ${(after / 2 ** 20).toFixed(0)} MiB | ${((after - before) / held / 1024).toFixed(1)} KiB |`,
    );
  }
}
