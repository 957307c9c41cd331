/**
 * The load of `npm run bench`'s sockets section (bench/sockets.ts), run as a process of its own
 * on the load generator's core. Prints one JSON line.
 *
 *   echo <url> <connections> <inFlight> <seconds>: messages echoed per second, each connection
 *     keeping `inFlight` messages under way (after a 1 s warm-up).
 *   push <url> <connections> <seconds>: messages received per second from servers that send as
 *     fast as their clients read.
 *   hold <url> <count>: opens `count` sockets, prints `{"held":count}`, keeps them until stdin ends.
 */
import WebSocket from 'ws';

const [mode, url = '', ...rest] = process.argv.slice(2);
const numbers = rest.map(Number);

function connect(path: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url}${path}`, { perMessageDeflate: false });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

async function connectAll(path: string, count: number): Promise<WebSocket[]> {
  const sockets: WebSocket[] = [];
  // A few hundred handshakes at a time: the server's backlog is not what is measured.
  for (let start = 0; start < count; start += 250)
    sockets.push(
      ...(await Promise.all(Array.from({ length: Math.min(250, count - start) }, () => connect(path)))),
    );
  return sockets;
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Messages received per second on `sockets` over `seconds`, after a 1 s warm-up; `onMessage`
 * answers each one (the echo) or nothing (the push). Prints the figure and closes the sockets.
 */
async function measure(sockets: WebSocket[], seconds: number, onMessage: (ws: WebSocket) => void) {
  let counted = 0;
  let counting = false;
  for (const ws of sockets)
    ws.on('message', () => {
      if (counting) counted++;
      onMessage(ws);
    });
  await wait(1000);
  counting = true;
  const started = performance.now();
  await wait(seconds * 1000);
  counting = false;
  const elapsed = (performance.now() - started) / 1000;
  for (const ws of sockets) ws.terminate();
  console.log(JSON.stringify({ perSecond: counted / elapsed }));
}

async function echo(connections: number, inFlight: number, seconds: number): Promise<void> {
  const sockets = await connectAll('/echo', connections);
  const message = JSON.stringify({ text: 'hello, socket' });
  const measuring = measure(sockets, seconds, (ws) => ws.send(message));
  for (const ws of sockets) for (let index = 0; index < inFlight; index++) ws.send(message);
  await measuring;
}

async function push(connections: number, seconds: number): Promise<void> {
  await measure(await connectAll('/push', connections), seconds, () => undefined);
}

async function hold(count: number): Promise<void> {
  const sockets = await connectAll('/echo', count);
  console.log(JSON.stringify({ held: sockets.length }));
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.once('end', resolve));
  for (const ws of sockets) ws.terminate();
}

if (mode === 'echo') await echo(numbers[0] ?? 50, numbers[1] ?? 8, numbers[2] ?? 3);
else if (mode === 'push') await push(numbers[0] ?? 50, numbers[1] ?? 3);
else if (mode === 'hold') await hold(numbers[0] ?? 10_000);
else throw new Error(`socket-load: unknown mode ${mode}`);
process.exit(0);
