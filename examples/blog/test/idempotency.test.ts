/**
 * Idempotent creates on the blog over real sockets, on both engines: a create sent again with its
 * `Idempotency-Key` replays the first answer, twenty at once create one post, a key reused with
 * another body is refused, and keys live in the database (every instance sees them).
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createBlogApp } from '../src/app.js';
import { engines, expectProblem, useBlog } from './harness.js';
import { inProcess } from './in-process.js';

describe.each(engines())('Idempotency-Key on $name', (engine) => {
  if (engine.skip) {
    it.skip('needs PostgreSQL', () => undefined);
    return;
  }
  const blog = useBlog(engine);

  it('creates exactly one post from twenty simultaneous POSTs with one key, then replays it', async () => {
    const writer = await blog.register();
    const key = randomUUID();
    const send = () =>
      blog.request('POST', '/api/posts', {
        token: writer.accessToken,
        headers: { 'idempotency-key': key },
        json: { title: 'Sent once', content: 'However often the network makes me send it.' },
      });
    const answers = await Promise.all(Array.from({ length: 20 }, send));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    for (const busy of answers.filter((answer) => answer.status === 409))
      expectProblem(busy, 409, 'CONFLICT', /still running/);

    const mine = await blog.request<{ data: { id: string }[] }>(
      'GET',
      `/api/posts?authorId=${writer.user.id}`,
      { token: writer.accessToken },
    );
    expect(mine.body.data).toHaveLength(1);

    const replay = await send();
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.headers.get('location')).toBe(`/api/posts/${mine.body.data[0]?.id}`);
    const original = answers.find((answer) => answer.status === 201);
    if (original !== undefined) expect(replay.text).toBe(original.text);
  });

  it('refuses the key with another body (422) and keeps callers apart', async () => {
    const writer = await blog.register();
    const other = await blog.register();
    const key = randomUUID();
    const first = await blog.request('POST', '/api/posts', {
      token: writer.accessToken,
      headers: { 'idempotency-key': key },
      json: { title: 'One', content: 'x' },
    });
    expect(first.status).toBe(201);
    const changed = await blog.request('POST', '/api/posts', {
      token: writer.accessToken,
      headers: { 'idempotency-key': key },
      json: { title: 'Two', content: 'x' },
    });
    expectProblem(changed, 422, 'IDEMPOTENCY_KEY_REUSED');
    // The same key from another user is their own key: a new post, never the first user's answer.
    const theirs = await blog.request<{ authorId: string }>('POST', '/api/posts', {
      token: other.accessToken,
      headers: { 'idempotency-key': key },
      json: { title: 'One', content: 'x' },
    });
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotency-replayed')).toBeNull();
    expect(theirs.body.authorId).toBe(other.user.id);
  });

  it('replays an admin’s user creation, and refuses a key on a POST that does not replay', async () => {
    const token = await blog.adminToken();
    const key = randomUUID();
    const body = { email: `idem-${randomUUID()}@example.com`, name: 'Made once', password: 'password123' };
    const first = await blog.request('POST', '/api/users', {
      token,
      headers: { 'idempotency-key': key },
      json: body,
    });
    const again = await blog.request('POST', '/api/users', {
      token,
      headers: { 'idempotency-key': key },
      json: body,
    });
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.text).toBe(first.text);

    const login = await blog.request('POST', '/api/auth/login', {
      headers: { 'idempotency-key': randomUUID() },
      json: { email: body.email, password: body.password },
    });
    expectProblem(login, 400, 'VALIDATION_FAILED', /does not take an Idempotency-Key/);
  });
});

const postgres = engines().find((engine) => engine.name === 'PostgreSQL');

describe.skipIf(postgres === undefined || postgres.skip)('Idempotency-Key across instances', () => {
  const blog = useBlog(postgres as NonNullable<typeof postgres>);

  it('keeps keys in the database: a second instance replays what the first answered', async () => {
    const second = await createBlogApp({
      databaseUrl: blog.instance.databaseUrl,
      jwtSecret: blog.instance.secret,
      production: false,
      logger: false,
    });
    try {
      const writer = await blog.register();
      const key = randomUUID();
      const json = { title: 'Across instances', content: 'x' };
      const first = await blog.request('POST', '/api/posts', {
        token: writer.accessToken,
        headers: { 'idempotency-key': key },
        json,
      });
      const replay = await inProcess(second, {
        method: 'POST',
        url: '/api/posts',
        headers: { 'idempotency-key': key, authorization: `Bearer ${writer.accessToken}` },
        payload: json,
      });
      expect(replay.statusCode).toBe(201);
      expect(replay.headers['idempotency-replayed']).toBe('true');
      expect(replay.body).toBe(first.text);
    } finally {
      await second.close();
    }
  });
});
