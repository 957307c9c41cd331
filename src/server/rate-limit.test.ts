import { Redis } from 'ioredis';
import { describe, expect, inject, it, vi } from 'vitest';
import { z } from 'zod';
import { eventually } from '../../test/processes.js';
import { fixtureApp } from '../auth/fixtures/app.js';
import { rateLimitFromEnv } from '../config/env.js';
import { ProceedConfigError, UnauthenticatedError } from '../core/errors.js';
import { procedure, procedures } from '../core/procedure.js';
import { rateLimit } from '../core/steps.js';
import { mcpPlugin } from '../mcp/plugin.js';
import type { AppOptions } from './app.js';
import { createApp } from './create-app.js';

const authProcedures = (rule = rateLimit({ name: 'auth', max: 10 })) =>
  procedures('auth', {
    login: procedure()
      .rest({ method: 'POST', path: '/auth/login' })
      .use(rule)
      .mutation(() => ({ ok: true })),
    me: procedure()
      .rest({ method: 'GET', path: '/auth/me' })
      .query(() => ({ ok: true })),
  });

const appWith = (rule?: ReturnType<typeof rateLimit>, options: AppOptions<object> = {}) =>
  createApp({ logger: false, ...options }).mount([authProcedures(rule)]);

const login = (app: ReturnType<typeof createApp>, ip = '10.0.0.1') =>
  app.inject({ method: 'POST', url: '/api/auth/login', payload: {}, remoteAddress: ip });

describe('rateLimit()', () => {
  it('answers the 11th request in a minute with 429 RATE_LIMITED and Retry-After', async () => {
    const app = appWith();
    for (let i = 1; i <= 10; i += 1) {
      const response = await login(app);
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-ratelimit-remaining']).toBe(String(10 - i));
    }
    const limited = await login(app);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['content-type']).toMatch(/^application\/problem\+json/);
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.json()).toMatchObject({ status: 429, code: 'RATE_LIMITED', title: 'Too many requests' });
    expect(limited.json().detail).toMatch(/try again in \d+ s/);
    await app.close();
  });

  it('counts per client IP and per route, and leaves other routes alone', async () => {
    const rule = rateLimit({ name: 'auth', max: 1 });
    const second = procedures('signup', {
      register: procedure()
        .rest({ method: 'POST', path: '/auth/register' })
        .use(rule)
        .mutation(() => ({ ok: true })),
    });
    const app = appWith(rule).mount([second]);
    expect((await login(app, '10.0.0.1')).statusCode).toBe(200);
    expect((await login(app, '10.0.0.1')).statusCode).toBe(429);
    expect((await login(app, '10.0.0.2')).statusCode).toBe(200);
    const register = await app.inject({
      method: 'POST',
      url: '/api/auth/register',
      remoteAddress: '10.0.0.1',
    });
    expect(register.statusCode).toBe(200);
    for (let i = 0; i < 3; i += 1) {
      const me = await app.inject({ url: '/api/auth/me', remoteAddress: '10.0.0.1' });
      expect(me.statusCode).toBe(200);
      expect(me.headers['x-ratelimit-limit']).toBeUndefined();
    }
    await app.close();
  });

  it('counts HEAD requests with the GET route they reach', async () => {
    const limited = procedures('feed', {
      listFeed: procedure()
        .use(rateLimit({ name: 'feed', max: 2 }))
        .query(() => []),
    });
    const app = createApp({ logger: false }).mount([limited]);
    expect((await app.inject({ method: 'HEAD', url: '/api/feed' })).statusCode).toBe(200);
    expect((await app.inject({ url: '/api/feed' })).statusCode).toBe(200);
    expect((await app.inject({ url: '/api/feed' })).statusCode).toBe(429);
    await app.close();
  });

  it('opens again after the window', async () => {
    // The counters read the clock: a fake one moves past the window without waiting for it.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const app = appWith(rateLimit({ name: 'auth', max: 1, window: 200 }));
      expect((await login(app)).statusCode).toBe(200);
      const limited = await login(app);
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['retry-after']).toBe('1');
      vi.setSystemTime(Date.now() + 199);
      expect((await login(app)).statusCode).toBe(429);
      vi.setSystemTime(Date.now() + 2);
      expect((await login(app)).statusCode).toBe(200);
      await app.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('takes its numbers from the app by rule name', async () => {
    const app = appWith(undefined, { rateLimit: { limits: { auth: { max: 2 } } } });
    expect((await login(app)).headers['x-ratelimit-limit']).toBe('2');
    expect((await login(app)).statusCode).toBe(200);
    expect((await login(app)).statusCode).toBe(429);
    await app.close();
  });

  it('refuses to start with a change to a rule no route uses, naming the rules in use', async () => {
    const app = appWith(undefined, { rateLimit: { limits: { atuh: { max: 2 } } } });
    await expect(app.ready()).rejects.toThrow(
      'rateLimit.limits: no route uses "atuh" (rules in use: "auth")',
    );
  });

  it('refuses impossible numbers, in the rule and in the app', () => {
    expect(() => rateLimit({ name: 'auth', max: 0 })).toThrow(/max must be an integer ≥ 1/);
    expect(() => rateLimit({ name: 'auth', max: 1, window: 0 })).toThrow(/window must be/);
    // The X-RateLimit-* headers are documented as safe integers.
    expect(() => rateLimit({ name: 'auth', max: 2 ** 60 })).toThrow(/max must be an integer ≥ 1/);
    expect(() => rateLimit({ name: '', max: 1 })).toThrow(/needs a name/);
    expect(() => appWith(undefined, { rateLimit: { limits: { auth: { max: 1.5 } } } })).toThrow(
      ProceedConfigError,
    );
    const rule = rateLimit({ name: 'auth', max: 1 });
    expect(() => procedure().use(rule).use(rule)).toThrow(/used twice/);
  });

  it('leaves the route table as it was when a mount is refused for its rate limits', () => {
    const app = createApp({ logger: false, rateLimit: { limits: { auth: { max: 1.5 } } } });
    expect(() => app.mount([authProcedures()])).toThrow(ProceedConfigError);
    expect(app.routes).toEqual([]);
    expect(app.mounts).toEqual([]);
    expect(app.routeTable.healthPrefixes).toEqual([]);
  });

  it('limits the fixture app’s sign-in routes through the app option', async () => {
    const fixture = fixtureApp({ rateLimit: 3 });
    await fixture.ready;
    const attempt = () =>
      fixture.app.inject({
        method: 'POST',
        url: '/api/session',
        payload: { email: 'nobody@example.com', password: 'x' },
      });
    for (let i = 0; i < 3; i += 1) expect((await attempt()).statusCode).toBe(401);
    const limited = await attempt();
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    await fixture.app.close();
  });
});

describe('rateLimitFromEnv', () => {
  it('reads AUTH_RATE_LIMIT, default 10', () => {
    expect(rateLimitFromEnv({})).toBe(10);
    expect(rateLimitFromEnv({ AUTH_RATE_LIMIT: '' })).toBe(10);
    expect(rateLimitFromEnv({ AUTH_RATE_LIMIT: '25' })).toBe(25);
    expect(() => rateLimitFromEnv({ AUTH_RATE_LIMIT: 'ten' })).toThrow(/positive integer/);
    expect(() => rateLimitFromEnv({ AUTH_RATE_LIMIT: '0' })).toThrow(ProceedConfigError);
  });
});

describe('rateLimit() with a Redis store that cannot be reached', () => {
  // Port 1 on the loopback: nothing listens, every connection is refused at once.
  const unreachable = () =>
    new Redis('redis://127.0.0.1:1', {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      retryStrategy: () => 1000,
    });

  it('refuses a client that would queue commands while Redis is down', () => {
    const queueing = new Redis('redis://127.0.0.1:1', { lazyConnect: true });
    expect(() => createApp({ rateLimit: { redis: queueing } })).toThrow(/enableOfflineQueue: false/);
    expect(() => createApp({ rateLimit: { onStoreError: 'ignore' as never } })).toThrow(
      /onStoreError must be "allow" or "refuse"/,
    );
    expect(() => createApp({ rateLimit: { onStoreError: 'refuse' } })).toThrow(
      /onStoreError applies to a shared store only: set rateLimit.redis too/,
    );
  });

  it.each([
    ['allow', 200, 200, { status: 'degraded', checks: { rateLimitStore: 'unreachable' } }],
    ['refuse', 503, 503, undefined],
  ] as const)(
    'onStoreError %s: the limited route answers %i, readiness %i, never 500; logged once',
    async (policy, routeStatus, healthStatus, healthBody) => {
      const redis = unreachable();
      const lines: string[] = [];
      const app = createApp({
        logger: { stream: { write: (line) => lines.push(line) } },
        rateLimit: { redis, onStoreError: policy },
      }).mount([authProcedures()]);
      try {
        for (let attempt = 0; attempt < 3; attempt++) {
          const response = await login(app);
          expect(response.statusCode).toBe(routeStatus);
          if (routeStatus === 503) expect(response.json()).toMatchObject({ code: 'UNAVAILABLE' });
        }
        const health = await app.inject({ method: 'GET', url: '/api/health' });
        expect(health.statusCode).toBe(healthStatus);
        if (healthBody !== undefined) expect(health.json()).toEqual(healthBody);
        else expect(health.headers['retry-after']).toBe('5');
        const outages = lines.filter((line) => line.includes('Rate-limit store (Redis) unreachable'));
        expect(outages).toHaveLength(1);
      } finally {
        await app.close();
        redis.disconnect();
      }
    },
  );
});

/** What a call with the password `right, held` waits for: the test opens it. */
let held = Promise.resolve();

/** A route limited per account: `counts` as given, failing when the password is not `right`. */
const accountRoute = (counts?: 'calls' | 'failures', max = 2) =>
  procedures('accounts', {
    signIn: procedure()
      .rest({ method: 'POST', path: '/sign-in' })
      .use(
        rateLimit<unknown, { account: string }>({
          name: 'per-account',
          max,
          window: 60_000,
          key: ({ input }) => (input.account === 'unkeyed' ? undefined : input.account),
          counts,
        }),
      )
      .input(z.object({ account: z.string().min(1), password: z.string() }))
      .mutation(async ({ input }) => {
        // Calls that overlap: each waits until the test lets it answer.
        if (input.password === 'right, held') await held;
        // The server's own failure, as an outage's would be.
        if (input.password === 'crash') throw new Error('The database is gone');
        if (!input.password.startsWith('right')) throw new UnauthenticatedError('wrong password');
        return { ok: true };
      }),
  });

const signIn = (app: ReturnType<typeof createApp>, body: object, ip = '10.0.0.1') =>
  app.inject({ method: 'POST', url: '/api/sign-in', payload: body, remoteAddress: ip });

describe('rateLimit() with a key', () => {
  it('counts per key whatever the address, after the input is valid, with the 429 of a limit', async () => {
    const app = createApp({ logger: false }).mount([accountRoute()]);
    expect((await signIn(app, { account: 'ada', password: 'right' }, '10.0.0.1')).statusCode).toBe(200);
    const second = await signIn(app, { account: 'ada', password: 'right' }, '10.0.0.2');
    expect(second.statusCode).toBe(200);
    // Per-key rules put no X-RateLimit-* on the answers they let through.
    expect(second.headers['x-ratelimit-limit']).toBeUndefined();
    const refused = await signIn(app, { account: 'ada', password: 'right' }, '10.0.0.3');
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 'RATE_LIMITED' });
    expect(refused.headers).toMatchObject({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '0' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Another key, an invalid input and a call the key leaves out are not counted.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      expect((await signIn(app, { account: '', password: 'right' })).statusCode).toBe(400);
      expect((await signIn(app, { account: 'unkeyed', password: 'right' })).statusCode).toBe(200);
    }
    expect((await signIn(app, { account: 'grace', password: 'right' })).statusCode).toBe(200);
    await app.close();
  });

  it('counts only the calls that fail with counts: "failures", and then refuses every call of the key', async () => {
    const app = createApp({ logger: false }).mount([accountRoute('failures')]);
    const statuses: number[] = [];
    for (const password of ['right', 'right', 'right', 'wrong', 'right', 'wrong', 'right'])
      statuses.push((await signIn(app, { account: 'ada', password })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 401, 200, 401, 429]);
    await app.close();
  });

  it('counts failures only: calls it refused, calls that succeeded at once and the server’s own failures are given back', async () => {
    const app = createApp({ logger: false }).mount([accountRoute('failures')]);
    // Six successes at once against a limit of two: those past it are refused while the first
    // two are held, and give their counts back; none is a failure.
    let release = () => {};
    held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const answered: number[] = [];
    const burst = Array.from({ length: 6 }, () =>
      signIn(app, { account: 'ada', password: 'right, held' }).then((answer) => {
        answered.push(answer.statusCode);
        return answer;
      }),
    );
    await eventually(() => answered.length === 4, 10_000, 'the refusals');
    expect(answered).toEqual([429, 429, 429, 429]);
    release();
    await Promise.all(burst);
    expect(answered).toEqual([429, 429, 429, 429, 200, 200]);
    expect((await signIn(app, { account: 'ada', password: 'right' })).statusCode).toBe(200);
    for (let attempt = 0; attempt < 3; attempt += 1)
      expect((await signIn(app, { account: 'ada', password: 'crash' })).statusCode).toBe(500);
    expect((await signIn(app, { account: 'ada', password: 'right' })).statusCode).toBe(200);
    // Two wrong passwords: then every call is refused, the right one too.
    for (const password of ['wrong', 'wrong', 'right'])
      await signIn(app, { account: 'ada', password }).then((answer) => answer.statusCode);
    expect((await signIn(app, { account: 'ada', password: 'right' })).statusCode).toBe(429);
    await app.close();
  });

  it('takes its numbers from the app by name, and refuses a rule that cannot work', async () => {
    const app = createApp({ logger: false, rateLimit: { limits: { 'per-account': { max: 1 } } } }).mount([
      accountRoute(),
    ]);
    expect((await signIn(app, { account: 'ada', password: 'right' })).statusCode).toBe(200);
    expect((await signIn(app, { account: 'ada', password: 'right' })).statusCode).toBe(429);
    await app.close();
    expect(() => rateLimit({ name: 'a', max: 1, counts: 'failures' })).toThrow(
      /counts "failures" needs a key/,
    );
    expect(() => rateLimit({ name: 'a', max: 1, key: () => 'k', counts: 'some' as never })).toThrow(
      /counts must be "calls" or "failures"/,
    );
    expect(() => rateLimit({ name: 'a', max: 1, key: 'email' as never })).toThrow(/key must be a function/);
  });

  it('counts a tool call of the MCP endpoint with the REST calls of the same key', async () => {
    const app = createApp({ logger: false }).mount([accountRoute('failures', 1)]);
    await app.register(mcpPlugin, { collections: ['accounts'] });
    expect((await signIn(app, { account: 'ada', password: 'wrong' })).statusCode).toBe(401);
    const call = await app.fetch(
      new Request('http://localhost/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'signIn', arguments: { account: 'ada', password: 'right' } },
        }),
      }),
      { ip: '10.0.0.9' },
    );
    const { result } = (await call.json()) as { result: { isError: boolean; content: { text: string }[] } };
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.content[0]?.text ?? '{}')).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    await app.close();
  });
});

const redisUrl = inject('redisUrl');

describe.skipIf(redisUrl === null)('rateLimit() with a key, in Redis', () => {
  it('counts one key across two instances, and gives a success back to a rule that counts failures', async () => {
    const clients = [0, 1].map(
      () => new Redis(redisUrl as string, { enableOfflineQueue: false, maxRetriesPerRequest: 1 }),
    );
    await Promise.all(clients.map((client) => new Promise((resolve) => client.once('ready', resolve))));
    const account = `ada-${process.pid}-${Date.now()}`;
    const apps = clients.map((redis) =>
      createApp({ logger: false, rateLimit: { redis } }).mount([accountRoute('failures', 2)]),
    );
    try {
      const statuses: number[] = [];
      const stored = () =>
        (clients[0] as Redis).get(`proceed:rate-limit:per-account|POST /api/sign-in|key|${account}`);
      // What the key holds once each call's count (and a success's or a refusal's refund) is in.
      const expected = ['1', '1', '1', '2', '2'];
      for (const [index, password] of ['wrong', 'right', 'right', 'wrong', 'right'].entries()) {
        statuses.push((await signIn(apps[index % 2] as (typeof apps)[0], { account, password })).statusCode);
        // A refund is sent after its answer, on that instance's own connection: waited for here.
        for (let tries = 0; (await stored()) !== expected[index] && tries < 200; tries += 1)
          await new Promise((resolve) => setTimeout(resolve, 10));
        expect(await stored()).toBe(expected[index]);
      }
      expect(statuses).toEqual([401, 200, 200, 401, 429]);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
      for (const client of clients) client.disconnect();
    }
  });
});
