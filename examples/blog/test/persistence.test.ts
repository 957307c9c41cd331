/**
 * The embedded persistent database through the real CLI (docs/blog.md): `proceed start` of the
 * compiled blog on a directory, SIGTERM (exit 0), start again on the same directory with the
 * same JWT_SECRET, and everything is still there: rows, sessions and revocations.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type BlogProcess, startBlogProcess } from './blog-process.js';
import {
  type CursorPage,
  connect,
  expectProblem,
  type PostView,
  type Session,
  type UserView,
} from './harness.js';

describe('the embedded database persists across a restart of the CLI server', () => {
  const started: BlogProcess[] = [];
  let directory = '';

  afterAll(async () => {
    for (const server of started) if (server.child.exitCode === null) server.child.kill('SIGKILL');
    if (directory !== '') await rm(directory, { recursive: true, force: true });
  });

  it('keeps users, posts, sessions and revocations; SIGTERM exits 0', { timeout: 240_000 }, async () => {
    directory = await mkdtemp(join(tmpdir(), 'blog-persist-'));
    const env = {
      DATABASE_URL: join(directory, 'db'),
      JWT_SECRET: randomBytes(32).toString('hex'),
      ADMIN_EMAIL: 'Boss@Example.com',
      ADMIN_PASSWORD: 'first admin password',
    };

    const first = await startBlogProcess(env);
    started.push(first);
    let api = await connect(first.origin);
    const password = 'persistent password';
    const registered = await api.request<Session>('POST', '/api/auth/register', {
      json: { email: 'keeper@example.com', password, name: 'Keeper' },
    });
    expect(registered.status, registered.text).toBe(201);
    const session = registered.body;
    const post = await api.request<Required<PostView>>('POST', '/api/posts', {
      json: { title: 'Survives restarts', content: 'Written before SIGTERM.', status: 'published' },
      token: session.accessToken,
    });
    expect(post.status, post.text).toBe(201);
    const loggedOut = await api.request<Session>('POST', '/api/auth/login', {
      json: { email: 'keeper@example.com', password },
    });
    expect(loggedOut.status).toBe(200);
    expect(
      (await api.request('POST', '/api/auth/logout', { token: loggedOut.body.accessToken })).status,
    ).toBe(200);

    const boss = await api.request<Session>('POST', '/api/auth/login', {
      json: { email: 'boss@example.com', password: 'first admin password' },
    });
    expect(boss.body.user).toMatchObject({ email: 'boss@example.com', role: 'admin' });

    expect(await first.stop(), first.output()).toBe(0);

    // Same directory and secret; ADMIN_PASSWORD changed: the admin is re-keyed, not duplicated.
    const second = await startBlogProcess({ ...env, ADMIN_PASSWORD: 'second admin password' });
    started.push(second);
    api = await connect(second.origin, [password, 'first admin password', 'second admin password']);
    const listed = await api.request<CursorPage<PostView>>('GET', `/api/posts?authorId=${session.user.id}`);
    expect(listed.status, `${listed.text}\n${second.output()}`).toBe(200);
    expect(listed.body.data).toEqual([
      { id: post.body.id, title: 'Survives restarts', excerpt: 'Written before SIGTERM.' },
    ]);
    // The access token from before the restart still works: same secret, same user.
    const me = await api.request<UserView>('GET', '/api/auth/me', { token: session.accessToken });
    expect(me.status, me.text).toBe(200);
    expect(me.body).toEqual(session.user);
    // The logout before the restart still holds: revocations live in the database.
    expectProblem(
      await api.request('GET', '/api/auth/me', { token: loggedOut.body.accessToken }),
      401,
      'INVALID_TOKEN',
    );
    expectProblem(
      await api.request('POST', '/api/auth/refresh', { json: { refreshToken: loggedOut.body.refreshToken } }),
      401,
      'INVALID_TOKEN',
    );
    const refreshed = await api.request<Session>('POST', '/api/auth/refresh', {
      json: { refreshToken: session.refreshToken },
    });
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(
      (await api.request('POST', '/api/auth/login', { json: { email: 'keeper@example.com', password } }))
        .status,
    ).toBe(200);

    expectProblem(
      await api.request('POST', '/api/auth/login', {
        json: { email: 'boss@example.com', password: 'first admin password' },
      }),
      401,
      'UNAUTHENTICATED',
    );
    const rekeyed = await api.request<Session>('POST', '/api/auth/login', {
      json: { email: 'boss@example.com', password: 'second admin password' },
    });
    expect(rekeyed.body.user).toEqual(boss.body.user);
    const admins = await api.request<{ meta: { total: number } }>('GET', '/api/users?role=admin', {
      token: rekeyed.body.accessToken,
    });
    expect(admins.body.meta.total).toBe(1);

    expect(await second.stop(), second.output()).toBe(0);
  });
});
