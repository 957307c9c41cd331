/** ADMIN_EMAIL and ADMIN_PASSWORD at start-up: create, leave alone, or take over and end old sessions. */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type BlogOptions, createBlogApp } from '../src/app.js';
import { inProcess } from './in-process.js';

const directory = mkdtempSync(join(tmpdir(), 'proceed-admin-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const jwtSecret = 'admin-seed-test-secret-of-32-bytes!!';

async function withBlog<T>(
  options: Partial<BlogOptions>,
  work: (request: Request) => Promise<T>,
): Promise<T> {
  const app = await createBlogApp({ databaseUrl: directory, jwtSecret, logger: false, ...options });
  try {
    return await work(async (method, url, payload, token) => {
      const response = await inProcess(app, {
        method: method as 'GET',
        url,
        ...(payload === undefined ? {} : { payload: payload as object }),
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      });
      return { status: response.statusCode, body: response.json() };
    });
  } finally {
    await app.close();
  }
}

type Request = (
  method: string,
  url: string,
  payload?: unknown,
  token?: string,
) => Promise<{ status: number; body: { accessToken: string; refreshToken: string; role?: string } }>;

describe('admin seeding', () => {
  it('takes over an account registered with the admin email, ending its sessions', async () => {
    const squatter = await withBlog({}, async (request) => {
      const registered = await request('POST', '/api/auth/register', {
        email: 'boss@example.com',
        password: 'squatter-password',
        name: 'Not the boss',
      });
      expect(registered.status).toBe(201);
      return registered.body;
    });

    const admin = { email: 'Boss@Example.com', password: 'the-real-admin-password' };
    const adminSession = await withBlog({ admin }, async (request) => {
      expect((await request('GET', '/api/auth/me', undefined, squatter.accessToken)).status).toBe(401);
      expect(
        (await request('POST', '/api/auth/refresh', { refreshToken: squatter.refreshToken })).status,
      ).toBe(401);
      expect(
        (await request('POST', '/api/auth/login', { email: admin.email, password: 'squatter-password' }))
          .status,
      ).toBe(401);
      const login = await request('POST', '/api/auth/login', admin);
      expect(login.status).toBe(200);
      return login.body;
    });

    await withBlog({ admin }, async (request) => {
      const me = await request('GET', '/api/auth/me', undefined, adminSession.accessToken);
      expect(me.status).toBe(200);
      expect(me.body.role).toBe('admin');
    });
  });

  it('refuses to start with an admin email that is none or too long, or a short password', async () => {
    await expect(
      createBlogApp({
        databaseUrl: 'memory://',
        jwtSecret,
        logger: false,
        admin: { email: 'boss', password: 'long-enough' },
      }),
    ).rejects.toThrow('ADMIN_EMAIL "boss" is not an email address');
    await expect(
      createBlogApp({
        databaseUrl: 'memory://',
        jwtSecret,
        logger: false,
        admin: { email: 'a@b.co', password: 'short' },
      }),
    ).rejects.toThrow('ADMIN_PASSWORD must have at least 8 characters');
    // The user views say no email is longer than the inputs allow.
    await expect(
      createBlogApp({
        databaseUrl: 'memory://',
        jwtSecret,
        logger: false,
        admin: {
          email: `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.example`,
          password: 'long-enough',
        },
      }),
    ).rejects.toThrow('ADMIN_EMAIL is longer than 254 characters');
  });
});
