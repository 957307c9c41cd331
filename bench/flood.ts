/**
 * `npm run bench:flood`: a connection flood against the compiled blog (docs/deployment.md,
 * "Connection limits"). FLOOD_CONNECTIONS (default 25,000) slow-body connections, spread over
 * FLOOD_PROCESSES client processes (default: one per 7,000, as a process has 20,000 file
 * descriptors here), each sending complete headers and then a byte of its body every 2 s, and
 * opening a new one whenever the server closes one: an attacker keeping the count up. Meanwhile a
 * new client arrives every second (FLOOD_PROBES, default 25) with `GET /api/posts?limit=1` on a
 * connection of its own; the report says how many were answered 200, how many 503, and how many
 * were closed or reset without an answer. Traffic goes to 127.0.0.1 only; it stops by itself.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One client process: opens `count` slow-body connections to `port` and keeps them open. */
async function floodFromHere(port: number, count: number, seconds: number): Promise<void> {
  let open = 0;
  let refused = 0;
  let stopping = false;
  const body = 1000;
  const openOne = () => {
    const socket: Socket = connect(port, '127.0.0.1');
    let trickle: NodeJS.Timeout | undefined;
    socket.on('connect', () => {
      open++;
      socket.write(
        'POST /api/posts HTTP/1.1\r\nHost: flood\r\nContent-Type: application/json\r\n' +
          `Content-Length: ${body}\r\n\r\n{`,
      );
      trickle = setInterval(() => socket.write(' '), 2000);
    });
    socket.on('error', () => {
      refused++;
    });
    socket.on('close', (hadError) => {
      clearInterval(trickle);
      if (!hadError || socket.bytesWritten > 0) open--;
      if (!stopping) setTimeout(openOne, 200);
    });
    socket.on('data', () => undefined);
  };
  for (let index = 0; index < count; index++) {
    openOne();
    if (index % 500 === 499) await sleep(20);
  }
  const report = setInterval(() => process.send?.({ open, refused }), 1000);
  await sleep(seconds * 1000);
  stopping = true;
  clearInterval(report);
  process.exit(0);
}

type ProbeOutcome = 'answered' | 'unavailable' | 'other status' | 'closed' | 'reset' | 'timed out';

/** One new client on a connection of its own: what became of its request. */
function probe(port: number): Promise<{ outcome: ProbeOutcome; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    const done = (outcome: ProbeOutcome) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ outcome, ms: Date.now() - started });
    };
    const timer = setTimeout(() => done('timed out'), 10_000);
    socket.on('connect', () =>
      socket.write('GET /api/posts?limit=1 HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n'),
    );
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1];
      if (status !== undefined && answer.includes('\r\n\r\n')) {
        done(status === '200' ? 'answered' : status === '503' ? 'unavailable' : 'other status');
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) =>
      done(error.code === 'ECONNRESET' ? 'reset' : 'closed'),
    );
    socket.on('close', () => done('closed'));
  });
}

async function main(): Promise<void> {
  const total = Number(process.env.FLOOD_CONNECTIONS ?? 25_000);
  const processes = Number(process.env.FLOOD_PROCESSES ?? Math.ceil(total / 7000));
  const probes = Number(process.env.FLOOD_PROBES ?? 25);
  const port = Number(process.env.FLOOD_PORT ?? 3077);
  const root = fileURLToPath(new URL('..', import.meta.url));

  const server = spawn(
    process.execPath,
    ['bin/proceed.js', 'start', 'examples/blog/dist/main.js', '--port', String(port)],
    {
      cwd: root,
      env: {
        ...process.env,
        NODE_ENV: 'production',
        LOG_LEVEL: 'warn',
        DATABASE_URL: 'memory://',
        JWT_SECRET: randomBytes(32).toString('hex'),
      },
      stdio: ['ignore', 'inherit', 'inherit'],
      detached: true,
    },
  );
  const clients: ChildProcess[] = [];
  try {
    for (let attempt = 0; ; attempt++) {
      const ok = await fetch(`http://127.0.0.1:${port}/api/health`).then(
        (response) => response.ok,
        () => false,
      );
      if (ok) break;
      if (attempt > 600) throw new Error('The blog did not start');
      await sleep(100);
    }
    const seconds = probes + 30;
    const open = new Map<number, number>();
    for (let index = 0; index < processes; index++) {
      const share = Math.floor(total / processes) + (index < total % processes ? 1 : 0);
      const client = fork(
        fileURLToPath(import.meta.url),
        ['client', String(port), String(share), String(seconds)],
        {
          execArgv: ['--import', 'tsx'],
          stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        },
      );
      client.on('message', (message: { open: number }) => open.set(index, message.open));
      clients.push(client);
    }
    const held = () => [...open.values()].reduce((sum, count) => sum + count, 0);
    const openedBy = Date.now() + 60_000;
    while (held() < total * 0.98 && Date.now() < openedBy) await sleep(250);
    console.log(`${held()} of ${total} slow-body connections open, from ${processes} client processes`);

    const outcomes: Record<ProbeOutcome, number> = {
      answered: 0,
      unavailable: 0,
      'other status': 0,
      closed: 0,
      reset: 0,
      'timed out': 0,
    };
    const latencies: number[] = [];
    for (let index = 0; index < probes; index++) {
      const next = sleep(1000);
      const { outcome, ms } = await probe(port);
      outcomes[outcome]++;
      if (outcome === 'answered') latencies.push(ms);
      await next;
    }
    latencies.sort((a, b) => a - b);
    console.log(`meanwhile ${held()} held; ${probes} new clients, one a second:`, outcomes);
    if (latencies.length > 0) {
      console.log(
        `answered in ${latencies[Math.floor(latencies.length / 2)]} ms (median), ${latencies.at(-1)} ms (slowest);`,
        `over 1 s: ${latencies.filter((ms) => ms > 1000).length} (a dropped SYN is retried after 1 s, then 2 s more)`,
      );
    }
  } finally {
    for (const client of clients) client.kill('SIGKILL');
    try {
      process.kill(-(server.pid as number), 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

if (process.argv[2] === 'client') {
  await floodFromHere(Number(process.argv[3]), Number(process.argv[4]), Number(process.argv[5]));
} else {
  await main();
}
