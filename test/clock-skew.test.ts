/**
 * Revocation whatever the clocks say (docs/auth.md, "User-wide revocation"): three compiled blog
 * instances on one PostgreSQL database, run under `faketime` 3 s behind, on time and 3 s ahead.
 * A password reset on any of them ends every session that began before it, on every instance,
 * and no session that began after it.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createScratchDatabase } from './postgres.js';
import { bin, eventually, freePort, installed, launch, type Running, root } from './processes.js';

const postgresUrl = inject('postgresUrl');

interface Instance {
  name: string;
  base: string;
  server: Running;
}

interface Session {
  accessToken: string;
  refreshToken: string;
}

async function call(instance: Instance, method: string, path: string, body?: unknown, token?: string) {
  const response = await fetch(`${instance.base}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe.skipIf(postgresUrl === null || !installed('faketime'))(
  'revocation across instances whose clocks differ by ±3 s',
  () => {
    let database: { url: string; drop(): Promise<void> };
    const instances: Instance[] = [];
    const email = `skew-${randomBytes(4).toString('hex')}@example.com`;
    let password = 'first password';

    beforeAll(async () => {
      database = await createScratchDatabase(postgresUrl ?? '', 'skew');
      const secret = randomBytes(32).toString('hex');
      for (const [name, offset] of [
        ['behind', '-3s'],
        ['on time', undefined],
        ['ahead', '+3s'],
      ] as const) {
        const port = await freePort();
        const command = [process.execPath, bin, 'start', 'dist/main.js'];
        const [program, ...args] = offset === undefined ? command : ['faketime', '-f', offset, ...command];
        const server = launch(program as string, args, {
          cwd: join(root, 'examples/blog'),
          env: {
            PORT: String(port),
            DATABASE_URL: database.url,
            JWT_SECRET: secret,
            AUTH_RATE_LIMIT: '1000',
          },
        });
        await server.waitFor(`Server listening at http://127.0.0.1:${port}`, 90_000);
        instances.push({ name, base: `http://127.0.0.1:${port}`, server });
      }
      const [first] = instances as [Instance];
      expect(
        (await call(first, 'POST', '/api/auth/register', { email, password, name: 'Skew' })).status,
      ).toBe(201);
    }, 180_000);

    afterAll(async () => {
      // To the process group: faketime runs the blog as its child and passes no signal on.
      for (const { server } of instances) process.kill(-server.pid, 'SIGTERM');
      await Promise.all(instances.map(({ server }) => server.exited));
      await database?.drop();
    });

    const login = async (instance: Instance): Promise<Session> => {
      const answer = await call(instance, 'POST', '/api/auth/login', { email, password });
      expect(answer.status, `login on the instance ${instance.name}`).toBe(200);
      return answer.body as unknown as Session;
    };

    /** Resets the password through `instance`; the reset token comes from its development mailer's log. */
    const reset = async (instance: Instance): Promise<void> => {
      const before = instance.server.output().length;
      expect((await call(instance, 'POST', '/api/auth/forgot-password', { email })).status).toBe(202);
      const logged = () => instance.server.output().slice(before);
      await eventually(async () => logged().includes('Password reset requested'), 10_000, 'the reset mail');
      const token = /"?token"?\s*[:=]\s*"([A-Za-z0-9_-]{20,})"/.exec(logged())?.[1];
      if (token === undefined) throw new Error(`no reset token in the log:\n${logged()}`);
      password = `password ${randomBytes(4).toString('hex')}`;
      expect((await call(instance, 'POST', '/api/auth/reset-password', { token, password })).status).toBe(
        200,
      );
    };

    /** Where a session is accepted: its access token on every instance, and its refresh token. */
    const accepted = async (session: Session) => {
      const statuses = [];
      for (const instance of instances)
        statuses.push((await call(instance, 'GET', '/api/auth/me', undefined, session.accessToken)).status);
      return statuses;
    };

    // One test: processes.ts ends every process it launched after each test.
    it('ends the sessions opened before a reset on any instance, and none opened after', async () => {
      for (const [resetOn, openedOn] of [
        ['behind', 'ahead'],
        ['ahead', 'behind'],
        ['on time', 'ahead'],
        ['behind', 'on time'],
      ]) {
        const resetter = instances.find((instance) => instance.name === resetOn) as Instance;
        const opener = instances.find((instance) => instance.name === openedOn) as Instance;
        const older = [await login(opener), await login(resetter)];
        await reset(resetter);
        // Immediately after, on both sides of the skew.
        const newer = [await login(opener), await login(resetter)];
        const scenario = `reset ${resetOn}, sessions ${openedOn}`;
        for (const session of older) {
          expect(await accepted(session), scenario).toEqual([401, 401, 401]);
          const refreshed = await call(opener, 'POST', '/api/auth/refresh', {
            refreshToken: session.refreshToken,
          });
          expect(refreshed.status, scenario).toBe(401);
        }
        for (const session of newer) expect(await accepted(session), scenario).toEqual([200, 200, 200]);
      }
    });
  },
);
