/**
 * `npm run bench:slow-clients`: how a Proceed server copes with clients whose headers never
 * finish (docs/deployment.md, "Timeouts"). It opens SLOW_CLIENTS connections (default 15,000:
 * about what one process's 20,000 file descriptors allow on the client side) that send half a
 * request, then times 40 new clients, then waits until the server has cut every stalled one.
 * Traffic goes to 127.0.0.1 only; it stops by itself within a minute.
 */
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const count = Number(process.env.SLOW_CLIENTS ?? 15_000);
const server = spawn(
  process.execPath,
  ['--import', 'tsx', fileURLToPath(new URL('./servers/proceed.ts', import.meta.url))],
  { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NODE_ENV: 'production' } },
);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

try {
  let address = '';
  for await (const line of createInterface({ input: server.stdout })) {
    address = (JSON.parse(line) as { address: string }).address;
    break;
  }
  const port = Number(new URL(address).port);
  const startedAt = Date.now();
  const state = { opened: 0, refused: 0, closed: 0, timedOut: 0 };
  const sockets: Socket[] = [];
  for (let index = 0; index < count; index++) {
    const socket = connect(port, '127.0.0.1');
    socket.on('connect', () => {
      state.opened++;
      socket.write('GET /api/items HTTP/1.1\r\nHost: bench\r\n');
    });
    socket.on('data', (chunk: Buffer) => {
      if (chunk.toString().startsWith('HTTP/1.1 408 ')) state.timedOut++;
    });
    socket.on('error', () => state.refused++);
    socket.on('close', () => state.closed++);
    sockets.push(socket);
    // Batches, so the client itself does not stall on its own connects.
    if (index % 500 === 499) await sleep(10);
  }
  while (state.opened + state.refused < count) await sleep(50);
  console.log(
    `${state.opened} stalled connections open in ${Date.now() - startedAt} ms (${state.refused} refused)`,
  );

  const latencies: number[] = [];
  let failures = 0;
  for (let index = 0; index < 40; index++) {
    const sent = Date.now();
    try {
      const response = await fetch(`${address}/api/items/0190a4f2-5b6c-7d8e-9f00-112233445566`);
      await response.arrayBuffer();
      if (response.status !== 200) failures++;
    } catch {
      failures++;
    }
    latencies.push(Date.now() - sent);
  }
  latencies.sort((a, b) => a - b);
  console.log(
    `40 new clients meanwhile: ${failures} failed; latency median ${latencies[20]} ms, max ${latencies[39]} ms`,
  );
  const deadline = Date.now() + 60_000;
  while (state.closed < count && Date.now() < deadline) await sleep(200);
  console.log(
    `${state.closed} of ${count} cut by the server ${Date.now() - startedAt} ms after the first opened; ${state.timedOut} answered 408`,
  );
  for (const socket of sockets) socket.destroy();
} finally {
  server.kill();
}
