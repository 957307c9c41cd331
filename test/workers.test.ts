/**
 * The compiled blog on PostgreSQL with `proceed start --workers 2`: both workers serve the one
 * port, a token one worker signed is accepted by the other, a logout on one is refused by both,
 * and SIGTERM stops them all with exit 0.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createScratchDatabase } from './postgres.js';
import { bin, eventually, freePort, launch } from './processes.js';

const postgresUrl = inject('postgresUrl');

/** The pids of the processes that logged a completed request. */
function answeringPids(output: string): Set<number> {
  return new Set(
    output
      .split('\n')
      .filter((line) => line.startsWith('{') && line.includes('"msg":"request completed"'))
      .map((line) => (JSON.parse(line) as { pid: number }).pid),
  );
}

describe.skipIf(postgresUrl === null)('the blog with --workers 2 on PostgreSQL', { timeout: 120_000 }, () => {
  let database: Awaited<ReturnType<typeof createScratchDatabase>>;
  beforeAll(async () => {
    database = await createScratchDatabase(postgresUrl ?? '', 'blog_workers');
  });
  afterAll(() => database?.drop());

  it('serves from both workers, shares sessions between them, and stops on SIGTERM', async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const primary = launch(
      process.execPath,
      [bin, 'start', 'examples/blog/dist/main.js', '--workers', '2', '--port', String(port)],
      { env: { DATABASE_URL: database.url, JWT_SECRET: randomBytes(32).toString('hex') } },
    );
    await primary.waitFor(`2 workers serving ${origin}`, 90_000);

    const json = { 'content-type': 'application/json' };
    const registered = await fetch(`${origin}/api/auth/register`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email: 'worker@example.com', password: 'a good long password', name: 'Worker' }),
    });
    expect(registered.status).toBe(201);
    const { accessToken } = (await registered.json()) as { accessToken: string };

    // Separate connections, so the primary hands them to both workers in turn.
    const me = await Promise.all(
      Array.from({ length: 10 }, () =>
        fetch(`${origin}/api/auth/me`, {
          headers: { authorization: `Bearer ${accessToken}`, connection: 'close' },
        }),
      ),
    );
    expect(me.map((response) => response.status)).toEqual(Array(10).fill(200));
    // A worker's log line can reach the shared output after its answer reached us.
    await eventually(
      async () => answeringPids(primary.output()).size === 2,
      10_000,
      'both workers log a request',
    );

    const logout = await fetch(`${origin}/api/auth/logout`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, connection: 'close' },
    });
    expect(logout.status).toBe(200);
    const after = await Promise.all(
      Array.from({ length: 6 }, () =>
        fetch(`${origin}/api/auth/me`, {
          headers: { authorization: `Bearer ${accessToken}`, connection: 'close' },
        }),
      ),
    );
    expect(after.map((response) => response.status)).toEqual(Array(6).fill(401));

    process.kill(primary.pid, 'SIGTERM');
    expect(await primary.exited).toEqual({ code: 0, signal: null });
    expect(primary.output()).toContain('every worker has stopped');
  });
});
