/**
 * `npm start` as a user and an operator meet it: the compiled blog on an embedded database in a
 * directory. A signal, sent to npm, to the proceed process under it, or to the whole process
 * group (a terminal's Ctrl+C, `kill -- -PGID`), stops the server from accepting, lets the request
 * in flight finish, closes the database and exits 0. A bad setting is refused before the database
 * opens, and a second process on the same directory is refused without touching it.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  accepts,
  eventually,
  freePort,
  launch,
  type Running,
  requestInFlight,
  runToEnd,
} from './processes.js';

const scratch = mkdtempSync(join(tmpdir(), 'proceed-npm-start-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** One database directory for the whole file: each start after the first reopens it (fast). */
const databaseDirectory = join(scratch, 'db');
const lockFile = join(databaseDirectory, 'proceed.lock');
const secret = randomBytes(32).toString('hex');

async function npmStart(port: number, env: Record<string, string> = {}): Promise<Running> {
  const server = launch('npm', ['start'], {
    env: { PORT: String(port), DATABASE_URL: databaseDirectory, JWT_SECRET: secret, ...env },
  });
  await server.waitFor(`Server listening at http://127.0.0.1:${port}`, 90_000);
  return server;
}

/** The pid of the process that listens: the proceed process under npm. */
function serverPid(server: Running): number {
  const line = server
    .output()
    .split('\n')
    .find((text) => text.startsWith('{') && text.includes('Server listening'));
  return (JSON.parse(line ?? '{}') as { pid: number }).pid;
}

type Target = 'npm' | 'proceed' | 'group';

async function stopWithRequestInFlight(target: Target, signal: 'SIGTERM' | 'SIGINT'): Promise<void> {
  const port = await freePort();
  // At debug, each request is also logged on arrival: the test sees the server has it.
  const server = await npmStart(port, { LOG_LEVEL: 'debug' });
  const proceedPid = serverPid(server);
  expect(proceedPid).not.toBe(server.pid);
  expect(existsSync(lockFile)).toBe(true);

  const email = `in-flight-${randomBytes(4).toString('hex')}@example.com`;
  const inFlight = requestInFlight(port, '/api/auth/register', {
    email,
    password: 'a good long password',
    name: 'In Flight',
  });
  await inFlight.sent;
  // The server has the request (it was routed) before the signal comes.
  await server.waitFor(/"url":"\/api\/auth\/register"[^\n]*"msg":"incoming request"/);
  if (target === 'npm') process.kill(server.pid, signal);
  else if (target === 'proceed') process.kill(proceedPid, signal);
  else process.kill(-server.pid, signal);

  await server.waitFor(`${signal} received: shutting down`);
  await eventually(async () => !(await accepts(port)), 10_000, 'the server stops accepting connections');
  inFlight.finish();
  const answer = await inFlight.answer;
  expect(answer).toMatch(/^HTTP\/1\.1 201 Created/);
  expect(answer).toContain(email);

  expect(await server.exited).toEqual({ code: 0, signal: null });
  // The database was closed: the process let go of the directory.
  expect(existsSync(lockFile)).toBe(false);
}

describe('npm start on the compiled blog', { timeout: 120_000 }, () => {
  it('SIGTERM to npm: drains the request in flight, closes the database, exits 0', () =>
    stopWithRequestInFlight('npm', 'SIGTERM'));

  it('SIGINT to the proceed process under npm: the same, and npm exits 0 with it', () =>
    stopWithRequestInFlight('proceed', 'SIGINT'));

  it('SIGTERM to the whole process group (kill -- -PGID): the same', () =>
    stopWithRequestInFlight('group', 'SIGTERM'));

  it('SIGINT to the whole process group (Ctrl+C in a terminal): the same', () =>
    stopWithRequestInFlight('group', 'SIGINT'));

  it('refuses a second process on the same directory, and the first one is untouched', async () => {
    const port = await freePort();
    const server = await npmStart(port);
    const origin = `http://127.0.0.1:${port}`;
    const before = await (await fetch(`${origin}/api/posts?limit=100`)).text();

    const seed = await runToEnd('npm', ['run', 'seed'], { env: { DATABASE_URL: databaseDirectory } });
    expect(seed.code).toBe(1);
    expect(seed.stderr).toContain(
      `seed: The database directory ${databaseDirectory} is in use by another process`,
    );
    expect(seed.stderr).toContain('DATABASE_URL=postgres://');

    const second = await runToEnd('npm', ['start'], {
      env: { PORT: String(await freePort()), DATABASE_URL: databaseDirectory, JWT_SECRET: secret },
    });
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(
      /proceed: The database directory .* is in use by another process \(pid \d+/,
    );

    expect(await (await fetch(`${origin}/api/posts?limit=100`)).text()).toBe(before);
    expect(existsSync(lockFile)).toBe(true);
    process.kill(server.pid, 'SIGTERM');
    expect((await server.exited).code).toBe(0);
  });

  it('refuses to start in production without JWT_SECRET before it opens the database', async () => {
    const untouched = join(scratch, 'never-created');
    const refused = await runToEnd('npm', ['start'], {
      env: { NODE_ENV: 'production', PORT: String(await freePort()), DATABASE_URL: untouched },
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('proceed: JWT_SECRET is not set. With NODE_ENV=production');
    expect(existsSync(untouched)).toBe(false);
  });

  it('refuses a port in use before it opens the database', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    const untouched = join(scratch, 'never-created-for-the-port');
    try {
      const refused = await runToEnd('npm', ['start'], {
        env: { PORT: String(port), DATABASE_URL: untouched, JWT_SECRET: secret },
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`proceed: Port ${port} is already in use on 127.0.0.1 (EADDRINUSE)`);
      expect(existsSync(untouched)).toBe(false);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it('refuses --workers on an embedded database before it opens it', async () => {
    const untouched = join(scratch, 'never-created-either');
    const refused = await runToEnd('npm', ['start', '--', '--workers', '1'], {
      env: { PORT: String(await freePort()), DATABASE_URL: untouched, JWT_SECRET: secret },
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `proceed: --workers needs a PostgreSQL server: an embedded PGlite database (${untouched}) lives in one process`,
    );
    expect(existsSync(untouched)).toBe(false);
  });
});
