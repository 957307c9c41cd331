/**
 * A PostgreSQL outage end to end (docs/deployment.md, "Database outages"): the blog's database
 * connection goes through a TCP proxy that the test cuts and restores. While it is cut every
 * request that needs the database answers 503 `UNAVAILABLE` with `Retry-After`, never 500, and
 * changes nothing; readiness says 503 and liveness 200; once it is back the same process serves
 * again, without a restart.
 */
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createPostgresDatabase } from './databases.js';
import { expectProblem, uniqueEmail, useBlog } from './harness.js';
import { TcpProxy } from './tcp-proxy.js';

const postgresUrl = inject('postgresUrl');

describe.skipIf(postgresUrl === null)('a database outage', () => {
  let proxy: TcpProxy | undefined;
  // After hooks run last-registered first: the proxy is restored before the blog closes (its
  // pool ends cleanly), and stopped after.
  afterAll(() => proxy?.cut());
  const blog = useBlog({
    name: 'PostgreSQL',
    skip: false,
    open: async () => {
      const server = new URL(postgresUrl ?? '');
      proxy = await new TcpProxy({ host: server.hostname, port: Number(server.port || 5432) }).start();
      const database = await createPostgresDatabase(postgresUrl ?? '');
      const proxied = new URL(database.url);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(proxy.port);
      return { url: proxied.toString(), drop: database.drop };
    },
  });
  afterAll(() => proxy?.restore());

  it('answers 503 with Retry-After while the database is unreachable, then serves again', async () => {
    const session = await blog.register();
    const { accessToken: token } = session;
    if (proxy === undefined) throw new Error('no proxy');
    expect((await blog.get('/api/posts')).status).toBe(200);
    await proxy.cut();

    for (const [method, path, body] of [
      ['GET', '/api/posts', undefined],
      ['GET', '/api/auth/me', undefined],
      ['POST', '/api/posts', { title: 'Lost?', content: 'Never written' }],
      ['POST', '/api/auth/login', { email: session.email, password: session.password }],
    ] as const) {
      const reply = await blog.request(method, path, {
        token,
        ...(body === undefined ? {} : { json: body }),
      });
      expectProblem(reply, 503, 'UNAVAILABLE');
      expect(reply.headers.get('retry-after'), `${method} ${path}`).toBe('5');
    }
    expectProblem(await blog.get('/api/health'), 503, 'UNAVAILABLE');
    expect((await blog.get('/api/health/live')).status).toBe(200);

    await proxy.restore();
    expect((await blog.get('/api/posts')).status).toBe(200);
    expect((await blog.get('/api/health')).status).toBe(200);
    // The write refused during the outage did not happen.
    const mine = await blog.get<{ data: unknown[] }>(`/api/posts?authorId=${session.user.id}`, token);
    expect(mine.body.data).toEqual([]);
    // A new account works end to end again.
    await blog.register({ email: uniqueEmail('after') });
  });
});
