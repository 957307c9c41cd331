/** `npm run seed` fills a fresh database once, leaves a seeded one alone, and its logins work. */

import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createBlogApp } from '../src/app.js';
import { inProcess } from './in-process.js';

const run = promisify(execFile);
// The compiled seed, as `npm run seed` runs it (the test run builds first).
const script = fileURLToPath(new URL('../dist/seed.js', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'proceed-seed-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const seed = (...args: string[]) =>
  run(process.execPath, [script, ...args], {
    env: {
      ...process.env,
      DATABASE_URL: directory,
      ADMIN_EMAIL: 'seed-admin@example.com',
      ADMIN_PASSWORD: 'seed-admin-pw',
      PASSWORD_HASH_COST: '1024,8,1',
    },
  });

describe('npm run seed', () => {
  it('seeds tens of users and hundreds of posts, once', async () => {
    const first = await seed();
    expect(first.stdout).toContain('Admin:      seed-admin@example.com / seed-admin-pw');
    const again = await seed();
    expect(again.stdout).toContain('Already seeded');

    const app = await createBlogApp({ databaseUrl: directory, logger: false, jwtSecret: 'x'.repeat(32) });
    try {
      const login = await inProcess(app, {
        method: 'POST',
        url: '/api/auth/login',
        payload: { email: 'seed-admin@example.com', password: 'seed-admin-pw' },
      });
      expect(login.statusCode).toBe(200);
      const token = login.json().accessToken as string;
      const users = await inProcess(app, {
        method: 'GET',
        url: '/api/users?limit=1',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(users.json().meta.total).toBeGreaterThanOrEqual(30);
      const published = await inProcess(app, { method: 'GET', url: '/api/posts?limit=100' });
      expect(published.json().data).toHaveLength(100);
      expect(published.json().nextCursor).not.toBeNull();
    } finally {
      await app.close();
    }
  }, 60_000);

  it('is refused with NODE_ENV=production, and writes nothing: its users’ passwords are known', async () => {
    const refused = run(process.execPath, [script], {
      env: { ...process.env, NODE_ENV: 'production', DATABASE_URL: join(directory, 'production') },
    });
    await expect(refused).rejects.toMatchObject({
      stderr: expect.stringContaining('seed: demo users with a known password have no place in production'),
    });
    expect(existsSync(join(directory, 'production'))).toBe(false);
  });
});
