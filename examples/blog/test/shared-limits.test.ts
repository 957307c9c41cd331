/**
 * Rate limits shared by instances through Redis (docs/deployment.md, "Shared rate limits"):
 * three blog instances on one PostgreSQL database and one Redis count sign-ins together, and
 * when that Redis dies nothing answers 500: sign-ins pass (or, by choice, get 503) and readiness
 * says so; when it is back, the limits apply again. The Redis is the test's own, on its own port.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { BlogOptions } from '../src/settings.js';
import { createPostgresDatabase } from './databases.js';
import { type BlogInstance, type Engine, expectProblem, startBlog, uniqueEmail } from './harness.js';
import { RedisServer } from './redis-server.js';

const postgresUrl = inject('postgresUrl');
const limit = 5;

describe.skipIf(postgresUrl === null || !RedisServer.installed())(
  'rate limits shared in Redis by three instances',
  () => {
    const redis = new RedisServer();
    let database: { url: string; drop(): Promise<void> };
    const instances: BlogInstance[] = [];
    const credentials = { email: uniqueEmail('limited'), password: 'correct horse battery' };

    /** One database for every instance; dropped once, after all of them closed. */
    const shared: Engine = {
      name: 'PostgreSQL',
      skip: false,
      open: async () => ({ url: database.url, drop: async () => undefined }),
    };
    const start = (options: Partial<BlogOptions> = {}) =>
      startBlog(shared, { authRateLimit: limit, redisUrl: redis.url, ...options }).then((blog) => {
        instances.push(blog);
        return blog;
      });
    const login = (blog: BlogInstance) => blog.request('POST', '/api/auth/login', { json: credentials });
    const health = (blog: BlogInstance) => blog.request<{ status: string }>('GET', '/api/health');

    beforeAll(async () => {
      await redis.start();
      database = await createPostgresDatabase(postgresUrl ?? '');
      const first = await start();
      await start();
      await start();
      // Registering counts against the register route's own limit, not login's.
      expect(
        (await first.request('POST', '/api/auth/register', { json: { ...credentials, name: 'Limited' } }))
          .status,
      ).toBe(201);
    });

    afterAll(async () => {
      await redis.start().catch(() => undefined);
      for (const blog of instances) await blog.close();
      await database?.drop();
      await redis.stop();
    });

    it(`lets exactly ${limit} sign-ins a minute through, in total over the three`, async () => {
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 3 * limit; attempt++) {
        const blog = instances[attempt % 3] as BlogInstance;
        const reply = await login(blog);
        if (reply.status === 429) expectProblem(reply, 429, 'RATE_LIMITED');
        statuses.push(reply.status);
      }
      expect(statuses.filter((status) => status === 200)).toHaveLength(limit);
      expect(statuses.filter((status) => status === 429)).toHaveLength(2 * limit);
      expect(statuses.slice(0, limit).every((status) => status === 200)).toBe(true);
    });

    it('with Redis dead: sign-ins pass, readiness says degraded, nothing answers 500', async () => {
      await redis.stop();
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 2 * limit; attempt++) {
        statuses.push((await login(instances[attempt % 3] as BlogInstance)).status);
      }
      expect(statuses).toEqual(Array(2 * limit).fill(200));
      const readiness = await health(instances[0] as BlogInstance);
      expect(readiness.status).toBe(200);
      expect(readiness.body).toEqual({ status: 'degraded', checks: { rateLimitStore: 'unreachable' } });
    });

    it('with Redis dead and the refuse policy: 503 UNAVAILABLE on limited routes and readiness', async () => {
      const strict = await start({ rateLimitOnStoreError: 'refuse' });
      const reply = await login(strict);
      expectProblem(reply, 503, 'UNAVAILABLE');
      expect(reply.headers.get('retry-after')).toBe('5');
      expectProblem(await health(strict), 503, 'UNAVAILABLE');
      // Routes without a limit still serve, to a client that reaches the instance directly.
      expect((await strict.request('GET', '/api/posts')).status).toBe(200);
    });

    it('with Redis back: the limits apply again, on every instance', async () => {
      await redis.start();
      // Each instance reconnects on its own time; until all have, one still lets every sign-in pass.
      for (const instance of instances) {
        for (let wait = 0; (await health(instance as BlogInstance)).body.status !== 'ok'; wait++) {
          if (wait > 100) throw new Error('an instance did not reconnect to Redis');
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      // The restarted Redis kept nothing: a new window of `limit` sign-ins, shared again.
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 2 * limit; attempt++) {
        statuses.push((await login(instances[attempt % 3] as BlogInstance)).status);
      }
      expect(statuses.filter((status) => status === 200)).toHaveLength(limit);
      expect(statuses.filter((status) => status === 429)).toHaveLength(limit);
    });
  },
);
