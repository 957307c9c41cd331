/**
 * A restart right after a crash, on an embedded PGlite directory (docs/blog.md, "The embedded
 * database"): the compiled blog is killed with SIGKILL while it acknowledges writes, and a new
 * one starts on the same directory at once, as a supervisor (systemd, Docker's restart policy,
 * Kubernetes) does. The killed server's parent never reaps it, as a container's init that does
 * not reap would: it stays a zombie for good, and a zombie is no holder of the directory. The new
 * one serves, with every acknowledged write; five times over.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { PostAuthenticated, Session } from './harness.js';
import { launch, proceedBin, type Running } from './support.js';

const directories: string[] = [];
afterAll(() => Promise.all(directories.map((path) => rm(path, { recursive: true, force: true }))));

interface Crashable {
  origin: string;
  /** The server's pid: a process group of its own, under a parent that never reaps it. */
  pid: number;
  parent: Running;
}

/**
 * Polls readiness until 200, at the address of the server's "Server listening" line: it listens on
 * a port the system picks, as one found free beforehand could be taken by another test's server
 * while the database starts, and the health check would then reach that server. Fails when the
 * server reports a refusal or 90 s pass. Resolves to the server's origin.
 */
async function serving(parent: Running): Promise<string> {
  const deadline = Date.now() + 90_000; // a new directory runs initdb: seconds, more on a busy machine
  for (;;) {
    const origin = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(parent.output())?.[1];
    const ok =
      origin !== undefined &&
      (await fetch(`${origin}/api/health`).then(
        (response) => response.status === 200,
        () => false,
      ));
    if (ok) return origin;
    if (/in use by|Error/.test(parent.output()) || Date.now() > deadline) {
      throw new Error(`The blog did not start:\n${parent.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Starts the compiled blog as the child of a shell that then becomes `sleep`: a parent that never
 * reaps. `setsid` puts the server in a process group of its own, which the test kills.
 */
async function start(directory: string, secret: string): Promise<Crashable> {
  const parent = launch(
    'sh',
    [
      '-c',
      `setsid "${process.execPath}" "${proceedBin}" start dist/main.js --port 0 & echo "server pid $!"; exec sleep 600`,
    ],
    { env: { DATABASE_URL: directory, JWT_SECRET: secret, LOG_LEVEL: 'info' } },
  );
  await parent.waitFor(/server pid \d+/);
  const pid = Number(/server pid (\d+)/.exec(parent.output())?.[1]);
  const origin = await serving(parent);
  return { origin, pid, parent };
}

/** Resolves once `pid` has exited: gone, or a zombie its parent never reaps. */
async function exited(pid: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    // The state follows the command's name in parentheses: `Z` for a zombie.
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
    if (stat === undefined || / Z /.test(stat.slice(stat.lastIndexOf(')')))) return;
    if (Date.now() > deadline) throw new Error(`The blog (pid ${pid}) did not exit in 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function post(origin: string, path: string, body: unknown, token?: string) {
  const response = await fetch(`${origin}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as unknown };
}

describe('SIGKILL, then an immediate start on the same PGlite directory', () => {
  it('serves again at once with every acknowledged write, five times, the killed server a zombie', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'blog-crash-'));
    directories.push(directory);
    const secret = randomBytes(32).toString('hex');
    let server = await start(directory, secret);
    const registered = await post(server.origin, '/api/auth/register', {
      email: 'crash@example.com',
      password: 'password1',
      name: 'Crash',
    });
    expect(registered.status).toBe(201);
    const { accessToken: token } = registered.body as Session;
    const acknowledged: string[] = [];

    for (let round = 1; round <= 5; round++) {
      // Writes keep coming while the server is killed: the ones answered 201 must all survive.
      let killed = false;
      const writer = (async () => {
        for (let index = 0; !killed; index++) {
          const created = await post(
            server.origin,
            '/api/posts',
            { title: `Round ${round}, post ${index}`, content: 'Acknowledged', status: 'published' },
            token,
          ).catch(() => undefined);
          if (created?.status === 201) acknowledged.push((created.body as PostAuthenticated).id);
        }
      })();
      const before = acknowledged.length;
      while (acknowledged.length < before + 10) await new Promise((resolve) => setTimeout(resolve, 5));
      process.kill(-server.pid, 'SIGKILL');
      killed = true;
      await writer;

      const next = await start(directory, secret);
      // The killed server was never reaped: it is a zombie (or, on a slow machine, still exiting).
      expect(next.parent.output()).not.toMatch(/in use by/);
      server = next;
    }

    for (const id of acknowledged) {
      const response = await fetch(`${server.origin}/api/posts/${id}`);
      expect(response.status, `post ${id}`).toBe(200);
    }
    expect(acknowledged.length).toBeGreaterThanOrEqual(50);
    process.kill(-server.pid, 'SIGTERM');
    // Its shutdown still writes the directory: it is removed once the server has exited.
    await exited(server.pid);
  });
});
