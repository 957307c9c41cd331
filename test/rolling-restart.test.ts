/**
 * A rolling restart as an operator does it (docs/deployment.md, "Shutdown"): two compiled blog
 * instances on one PostgreSQL database behind haproxy, which health-checks `GET /api/health` and
 * never retries (`retries 0`). While clients keep sending reads and sign-ins, each instance in
 * turn gets SIGTERM, drains (readiness 503, still serving), exits 0 and is started again. No
 * client sees an error. Live sockets of the typed client (docs/sockets.md) ride it out: each
 * closed with 1001 opens again through haproxy on the other instance, follows its author again,
 * and receives the posts published after each restart, whichever instance they were published on.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import type { api } from '../examples/blog/src/app.js';
import { type ClientSocket, createClient, type ProblemError } from '../src/client/index.js';
import { createScratchDatabase } from './postgres.js';
import { bin, eventually, freePort, installed, launch, type Running, root } from './processes.js';

const postgresUrl = inject('postgresUrl');
const scratch = mkdtempSync(join(tmpdir(), 'proceed-rolling-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function haproxyConfig(front: number, stats: number, backends: readonly number[]): string {
  return [
    'defaults',
    '  mode http',
    '  timeout connect 1s',
    '  timeout client 30s',
    '  timeout server 30s',
    '  timeout check 2s',
    // An upgraded WebSocket is a tunnel: open as long as its pings keep it busy.
    '  timeout tunnel 1h',
    // Nothing is retried: a request sent to an instance that cannot take it is the client's error.
    '  retries 0',
    'backend blog',
    '  option httpchk GET /api/health',
    '  http-check expect status 200',
    // Two failed checks to go down: one slow answer on a busy machine is not an outage.
    '  default-server inter 200ms fall 2 rise 2',
    ...backends.map((port, index) => `  server blog${index} 127.0.0.1:${port} check`),
    'frontend api',
    `  bind 127.0.0.1:${front}`,
    '  default_backend blog',
    'frontend stats',
    `  bind 127.0.0.1:${stats}`,
    '  stats enable',
    '  stats uri /stats',
    '',
  ].join('\n');
}

/** What haproxy says of each server: `UP`, `DOWN`, `MAINT`, … (its CSV statistics). */
async function serverStates(stats: number): Promise<string[]> {
  const csv = await (await fetch(`http://127.0.0.1:${stats}/stats;csv`)).text();
  const [header = '', ...rows] = csv.trim().split('\n');
  const status = header.replace(/^# /, '').split(',').indexOf('status');
  return rows
    .map((row) => row.split(','))
    .filter((fields) => fields[0] === 'blog' && fields[1]?.startsWith('blog'))
    .map((fields) => fields[status] ?? '');
}

/** Sends a message the live socket refuses and waits for its error frame: what came before is taken. */
async function refusedOnce(socket: ClientSocket<unknown, unknown>): Promise<void> {
  await new Promise<ProblemError>((resolve) => {
    const stop = socket.onProblem((problem) => {
      stop();
      resolve(problem);
    });
    void socket.send({ type: 'settled' });
  });
}

describe.skipIf(postgresUrl === null || !installed('haproxy'))('a rolling restart behind haproxy', () => {
  it('loses no request: every instance drains before it stops', async () => {
    const database = await createScratchDatabase(postgresUrl ?? '', 'rolling');
    const secret = randomBytes(32).toString('hex');
    const start = async (port: number): Promise<Running> => {
      const server = launch(process.execPath, [bin, 'start', 'dist/main.js'], {
        cwd: join(root, 'examples/blog'),
        env: {
          PORT: String(port),
          DATABASE_URL: database.url,
          JWT_SECRET: secret,
          NODE_ENV: 'production',
          // Longer than haproxy takes to see readiness fail (two checks 200 ms apart), with room.
          SHUTDOWN_DRAIN_MS: '1500',
          AUTH_RATE_LIMIT: '1000000',
        },
      });
      await server.waitFor(`Server listening at http://127.0.0.1:${port}`, 90_000);
      return server;
    };
    const ports = [await freePort(), await freePort()];
    const front = await freePort();
    const stats = await freePort();
    const instances = [await start(ports[0] ?? 0), await start(ports[1] ?? 0)];
    const config = join(scratch, 'haproxy.cfg');
    writeFileSync(config, haproxyConfig(front, stats, ports));
    const haproxy = launch('haproxy', ['-f', config, '-db']);
    const base = `http://127.0.0.1:${front}`;
    try {
      const bothUp = async () =>
        (await serverStates(stats).catch(() => [])).filter((state) => state === 'UP').length === 2;
      await eventually(bothUp, 20_000, 'haproxy sees both instances up');
      const credentials = {
        email: `rolling-${randomBytes(4).toString('hex')}@example.com`,
        password: 'pw-rolling-1',
      };
      const registered = await fetch(`${base}/api/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...credentials, name: 'Rolling' }),
      });
      expect(registered.status).toBe(201);
      const author = (await registered.json()) as { accessToken: string; user: { id: string } };

      // Live sockets through haproxy, each following the author again whenever it reopens.
      const live = createClient<typeof api>({
        baseUrl: base,
        WebSocket,
        routes: {
          posts: { livePosts: { method: 'GET', path: '/posts/live', inputMode: 'query', socket: true } },
        },
      });
      type Live = Awaited<ReturnType<typeof live.posts.livePosts>>;
      const subscribe = { type: 'subscribe', authorId: author.user.id } as const;
      const sockets: { socket: Live; titles: string[]; reconnects: number; down: number[] }[] = [];
      for (let index = 0; index < 4; index++) {
        const socket = await live.posts.livePosts();
        const entry = { socket, titles: [] as string[], reconnects: 0, down: [] as number[] };
        socket.onReconnect(() => {
          entry.reconnects++;
          void socket.send(subscribe);
        });
        void (async () => {
          for await (const message of socket) entry.titles.push(message.post.title);
        })();
        await socket.send(subscribe);
        sockets.push(entry);
      }
      // How long each socket is not open: sampled, so a gap is known to within the sampling.
      let sampling = true;
      const sampler = (async () => {
        const since = new Map<Live, number>();
        while (sampling) {
          for (const { socket, down } of sockets) {
            const start = since.get(socket);
            if (socket.state !== 'open' && start === undefined) since.set(socket, Date.now());
            if (socket.state === 'open' && start !== undefined) {
              down.push(Date.now() - start);
              since.delete(socket);
            }
          }
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      })();
      /** Every socket has taken what it was sent: a message it refuses is answered in order. */
      const settled = async () => {
        await eventually(
          () => sockets.every(({ socket }) => socket.state === 'open'),
          20_000,
          'every live socket is open',
        );
        await Promise.all(sockets.map(({ socket }) => refusedOnce(socket)));
      };
      let published = 0;
      const publishAndReceive = async () => {
        await settled();
        const title = `Live ${++published}`;
        const created = await fetch(`${base}/api/posts`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${author.accessToken}` },
          body: JSON.stringify({
            title,
            content: 'Published during a rolling restart.',
            status: 'published',
          }),
        });
        expect(created.status).toBe(201);
        await eventually(
          () => sockets.every(({ titles }) => titles.includes(title)),
          10_000,
          `every live socket receives "${title}"`,
        );
      };
      await publishAndReceive();

      let running = true;
      let answered = 0;
      const failures: string[] = [];
      const client = async (index: number) => {
        for (let round = 0; running; round++) {
          const signIn = (index + round) % 5 === 0;
          try {
            const response = await fetch(`${base}${signIn ? '/api/auth/login' : '/api/posts?limit=5'}`, {
              method: signIn ? 'POST' : 'GET',
              headers: { 'content-type': 'application/json' },
              ...(signIn ? { body: JSON.stringify(credentials) } : {}),
            });
            await response.arrayBuffer();
            if (response.status === 200) answered++;
            else failures.push(`${response.status} ${signIn ? 'login' : 'list'}`);
          } catch (error) {
            failures.push(`${(error as Error).message} ${(error as { cause?: Error }).cause?.message ?? ''}`);
          }
        }
      };
      const clients = Array.from({ length: 8 }, (_, index) => client(index));

      for (const [index, port] of ports.entries()) {
        const old = instances[index] as Running;
        // The clients are being answered through haproxy when the instance is stopped.
        const before = answered;
        await eventually(() => answered >= before + 100, 20_000, 'the clients are answered');
        old.child.kill('SIGTERM');
        expect(await old.exited).toEqual({ code: 0, signal: null });
        instances[index] = await start(port);
        // As an operator would: the next one only once haproxy sends to this one again.
        await eventually(bothUp, 20_000, 'haproxy sees the restarted instance up');
        await publishAndReceive();
      }
      running = false;
      await Promise.all(clients);
      sampling = false;
      await sampler;

      expect(failures).toEqual([]);
      expect(answered).toBeGreaterThan(200);
      // Each socket was closed by the instance it was on, at most once per restart, and opened
      // again within a few tries: the first wait is 250 ms ±20 %, then one handshake (223–311 ms
      // on a quiet machine; the bound leaves room for a busy one and a retry or two).
      for (const { socket, reconnects, down, titles } of sockets) {
        expect(reconnects).toBeGreaterThanOrEqual(1);
        expect(reconnects).toBeLessThanOrEqual(2);
        expect(down).toHaveLength(reconnects);
        for (const gap of down) expect(gap).toBeLessThan(5000);
        expect(titles).toEqual(['Live 1', 'Live 2', 'Live 3']);
        socket.close();
      }
    } finally {
      haproxy.child.kill('SIGTERM');
      for (const instance of instances) instance.child.kill('SIGTERM');
      await Promise.all([haproxy.exited, ...instances.map((instance) => instance.exited)]);
      await database.drop();
    }
  });
});
