/**
 * `npm run bench:streams`: what file answers and event streams cost (docs/performance.md, "Files
 * and event streams"), on 127.0.0.1, each part bounded in size and time:
 *
 * 1. A 1 GiB file to a client that reads slower than the server can send: the server's resident
 *    memory, before and at its peak.
 * 2. A 10 MB file: Proceed's `fileAt` against `@fastify/static` serving the same file, rounds
 *    alternating, requests per second.
 * 3. BENCH_STREAMS (10,000) event streams open at once on one instance: its resident memory.
 * 4. Those clients leaving: how long until each stream's `finally` ran.
 * 5. A stream faster than its reader for BENCH_STREAM_SECONDS (60): the server's heap, before and
 *    after.
 * 6. A 1 GiB upload (a form with one file, spooled to disk) on Node (Fastify), Bun and Deno
 *    (app.fetch in their own servers), then one the handler reads through: the server's resident
 *    memory, before and at its peak.
 *
 * `BENCH_ONLY=uploads` runs the last part alone.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import {
  closeSync,
  existsSync,
  ftruncateSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { startServer } from './compare.js';

const streams = Number(process.env.BENCH_STREAMS ?? 10_000);
const fastSeconds = Number(process.env.BENCH_STREAM_SECONDS ?? 60);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const mib = 1024 * 1024;
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** @fastify/static lives in bench/contenders, installed apart (its lock file). */
function installContenders(): void {
  const directory = fileURLToPath(new URL('./contenders/', import.meta.url));
  if (existsSync(`${directory}node_modules/@fastify/static`)) return;
  const install = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: directory, stdio: 'inherit' });
  if (install.status !== 0) throw new Error('npm ci in bench/contenders failed');
}

function rssOf(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

/** A GET over a raw socket: the caller reads (or does not read) the answer itself. */
function rawGet(address: string, path: string): Socket {
  const { hostname, port } = new URL(address);
  const socket = connect(Number(port), hostname);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
  return socket;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
};

async function slowDownload(address: string, pid: number | undefined): Promise<void> {
  const before = rssOf(pid);
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssOf(pid));
  }, 25);
  const socket = rawGet(address, '/api/files/big.bin');
  let received = 0;
  let sincePause = 0;
  const started = performance.now();
  socket.on('data', (chunk: Buffer) => {
    received += chunk.length;
    sincePause += chunk.length;
    // About 200 MB/s: slower than the server reads a file from the page cache.
    if (sincePause >= 4 * mib) {
      sincePause = 0;
      socket.pause();
      setTimeout(() => socket.resume(), 20);
    }
    if (received >= 1024 * mib) socket.destroy();
  });
  await once(socket, 'close');
  clearInterval(sampler);
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `1 GiB file to a client reading at ~200 MB/s: ${(received / mib).toFixed(0)} MiB in ${seconds.toFixed(1)} s; server RSS ${before.toFixed(1)} MiB before, ${peak.toFixed(1)} MiB at its peak (+${(peak - before).toFixed(1)} MiB)`,
  );
}

async function tenMegabytes(servers: Array<{ name: string; url: string }>): Promise<void> {
  const results = new Map<string, number[]>(servers.map(({ name }) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const { name, url } of round % 2 === 0 ? servers : [...servers].reverse()) {
      const result = await autocannon({ url, connections: 8, duration: 3 });
      if (result.non2xx > 0 || result.errors > 0)
        throw new Error(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
      results.get(name)?.push(result.requests.average);
    }
  }
  const [proceed, reference] = servers.map(({ name }) => median(results.get(name) ?? []));
  console.log(
    `10 MB file, ${rounds} alternating rounds × 3 s, 8 connections: Proceed fileAt ${proceed?.toFixed(0)} req/s (${(((proceed ?? 0) * 10) / 1.048576).toFixed(0)} MB/s), @fastify/static ${reference?.toFixed(0)} req/s; ratio ${((proceed ?? 0) / (reference ?? 1)).toFixed(2)}`,
  );
}

async function manyStreams(address: string, pid: number | undefined): Promise<void> {
  const before = rssOf(pid);
  const sockets: Socket[] = [];
  let opened = 0;
  for (let batch = 0; batch < streams; batch += 500) {
    const waits: Array<Promise<unknown>> = [];
    for (let index = batch; index < Math.min(streams, batch + 500); index++) {
      const socket = rawGet(address, '/api/ticks/idle');
      sockets.push(socket);
      waits.push(
        new Promise<void>((resolve, reject) => {
          let text = '';
          const read = (chunk: Buffer) => {
            text += chunk.toString();
            if (text.includes('data: ')) {
              socket.off('data', read);
              opened++;
              resolve();
            }
          };
          socket.on('data', read);
          socket.once('error', reject);
        }),
      );
    }
    await Promise.all(waits);
  }
  const open = rssOf(pid);
  console.log(
    `${opened} event streams open at once: server RSS ${before.toFixed(1)} MiB before, ${open.toFixed(1)} MiB with them open (${(((open - before) * 1024) / opened).toFixed(1)} KiB a stream)`,
  );
  const left = now();
  for (const socket of sockets) socket.destroy();
  const finallies: number[] = [];
  const deadline = performance.now() + 30_000;
  while (finallies.length < opened && performance.now() < deadline) {
    await sleep(50);
    const answer = (await (await fetch(`${address}/api/finallies`)).json()) as { at: number[] };
    finallies.push(...answer.at);
  }
  const latencies = finallies.map((at) => at - left);
  console.log(
    `After ${opened} clients left at once: ${finallies.length} finally blocks ran; after the first socket closed: median ${median(latencies).toFixed(1)} ms, p99 ${percentile(latencies, 0.99).toFixed(1)} ms, last ${Math.max(...latencies).toFixed(1)} ms`,
  );
  // One client leaving alone, ten times: the latency of one, not of a crowd.
  const single: number[] = [];
  for (let attempt = 0; attempt < 10; attempt++) {
    const socket = rawGet(address, '/api/ticks/idle');
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    await sleep(20);
    const leftAt = now();
    socket.destroy();
    let at: number[] = [];
    while (at.length === 0) {
      await sleep(5);
      at = ((await (await fetch(`${address}/api/finallies`)).json()) as { at: number[] }).at;
    }
    single.push((at[0] ?? Number.NaN) - leftAt);
  }
  console.log(
    `One client leaving (10 times): its stream's finally ran after median ${median(single).toFixed(2)} ms, at most ${Math.max(...single).toFixed(2)} ms`,
  );
}

async function fastStream(address: string): Promise<void> {
  const memory = async () => {
    await fetch(`${address}/api/collect`, { method: 'POST' });
    return (await (await fetch(`${address}/api/memory`)).json()) as { rss: number; heapUsed: number };
  };
  const socket = rawGet(address, '/api/ticks/fast');
  let received = 0;
  // A reader that takes one chunk every 50 ms: far slower than the handler yields.
  socket.on('data', (chunk: Buffer) => {
    received += chunk.length;
    socket.pause();
    setTimeout(() => socket.resume(), 50);
  });
  await sleep(2000);
  const start = await memory();
  await sleep(fastSeconds * 1000);
  const end = await memory();
  socket.destroy();
  console.log(
    `A stream faster than its reader for ${fastSeconds} s (the reader took ${(received / mib).toFixed(1)} MiB): server heap ${(start.heapUsed / mib).toFixed(1)} → ${(end.heapUsed / mib).toFixed(1)} MiB (${((end.heapUsed - start.heapUsed) / mib).toFixed(1)} MiB), RSS ${(start.rss / mib).toFixed(1)} → ${(end.rss / mib).toFixed(1)} MiB`,
  );
}

/** One 1 GiB form sent as fast as the server takes it; the server's RSS sampled meanwhile. */
async function bigUpload(
  runtime: string,
  address: string,
  pid: number | undefined,
  size = 1024 * mib,
  path = '/api/uploads',
): Promise<void> {
  const boundary = 'proceed-bench-boundary';
  const head = Buffer.from(
    `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = Buffer.alloc(mib, 7);
  const before = rssOf(pid);
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssOf(pid));
  }, 25);
  const started = performance.now();
  const answer = await new Promise<string>((resolve, reject) => {
    const { hostname, port } = new URL(address);
    const sending = request(
      {
        host: hostname,
        port,
        method: 'POST',
        path,
        headers: {
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': String(head.length + size + tail.length),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (part: string) => {
          text += part;
        });
        response.on('end', () => resolve(`${response.statusCode} ${text}`));
      },
    );
    sending.on('error', reject);
    let sent = 0;
    sending.write(head);
    const more = () => {
      while (sent < size) {
        sent += chunk.length;
        if (!sending.write(chunk)) return void sending.once('drain', more);
      }
      sending.end(tail);
    };
    more();
  });
  clearInterval(sampler);
  const seconds = (performance.now() - started) / 1000;
  if (!/^20[01] /.test(answer) || !answer.includes(`"size":${size}`))
    throw new Error(`${runtime}: the upload was answered ${answer}`);
  console.log(
    `${(size / mib).toFixed(0)} MiB upload on ${runtime}, ${path.endsWith('/read') ? 'spooled, then read through by the handler' : 'spooled'}: ${seconds.toFixed(1)} s; server RSS ${before.toFixed(1)} MiB before, ${peak.toFixed(1)} MiB at its peak (+${(peak - before).toFixed(1)} MiB)`,
  );
}

/**
 * A 1 MiB upload first, then the 1 GiB one measured: the first upload of a process loads what
 * spooling needs (node:fs and its kin: tens of MiB on Deno and Bun, whatever the size), a cost
 * paid once, not by each upload (docs/performance.md).
 */
async function measuredUpload(runtime: string, address: string, pid: number | undefined): Promise<void> {
  await bigUpload(`${runtime}, the process's first`, address, pid, mib);
  await bigUpload(runtime, address, pid);
  await bigUpload(runtime, address, pid, 1024 * mib, '/api/uploads/read');
}

/** The streams server on Deno, from its npm package: it prints where it listens. */
async function startOnDeno(env: Record<string, string>): Promise<{ address: string; child: ChildProcess }> {
  const child = spawn(
    fileURLToPath(new URL('../node_modules/deno/deno', import.meta.url)),
    [
      'run',
      '--allow-all',
      '--unstable-sloppy-imports',
      fileURLToPath(new URL('./servers/proceed-streams.ts', import.meta.url)),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NODE_ENV: 'production', ...env } },
  );
  let output = '';
  const address = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (part: Buffer) => {
      output += part.toString();
      const found = /\{"address":"([^"]+)"\}/.exec(output)?.[1];
      if (found !== undefined) resolve(found);
    });
    child.once('exit', (code) => reject(new Error(`Deno exited (${code}) before it listened: ${output}`)));
  });
  return { address, child };
}

async function uploads(env: Record<string, string>): Promise<void> {
  for (const runtime of ['Node (Fastify)', 'Bun (app.fetch)'] as const) {
    const server = await startServer(
      {
        name: runtime,
        script: './servers/proceed-streams.ts',
        ...(runtime.startsWith('Bun') ? { runtime: 'bun' as const } : {}),
      },
      env,
    );
    try {
      await measuredUpload(runtime, server.info.address, server.child.pid);
    } finally {
      await stop(server.child);
    }
  }
  const deno = await startOnDeno(env);
  try {
    await measuredUpload('Deno (app.fetch)', deno.address, deno.child.pid);
  } finally {
    await stop(deno.child);
  }
}

installContenders();
const directory = mkdtempSync(join(tmpdir(), 'proceed-streams-'));
try {
  // A sparse 1 GiB file (reads as zeros, costs no disk) and a real 10 MB one.
  const big = openSync(join(directory, 'big.bin'), 'w');
  ftruncateSync(big, 1024 * mib);
  closeSync(big);
  writeFileSync(join(directory, 'ten.bin'), Buffer.alloc(10 * 1024 * 1024, 7));
  const env = { BENCH_FILES_DIR: directory, NODE_OPTIONS: '--expose-gc' };

  if (process.env.BENCH_ONLY !== 'uploads') {
    const proceed = await startServer({ name: 'proceed', script: './servers/proceed-streams.ts' }, env);
    try {
      await slowDownload(proceed.info.address, proceed.child.pid);
      const reference = await startServer(
        { name: '@fastify/static', script: './contenders/fastify-static.ts' },
        env,
      );
      try {
        await tenMegabytes([
          { name: 'proceed', url: `${proceed.info.address}/api/files/ten.bin` },
          { name: 'static', url: `${reference.info.address}/files/ten.bin` },
        ]);
      } finally {
        await stop(reference.child);
      }
      await manyStreams(proceed.info.address, proceed.child.pid);
      await fastStream(proceed.info.address);
    } finally {
      await stop(proceed.child);
    }
  }
  await uploads(env);
} finally {
  rmSync(directory, { recursive: true, force: true });
}
