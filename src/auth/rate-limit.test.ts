import { describe, expect, it } from 'vitest';
import { rateLimitFromEnv } from '../config/env.js';
import { ProceedConfigError } from '../core/errors.js';
import { procedure, procedures } from '../core/procedure.js';
import { createApp } from '../server/app.js';
import { fixtureApp } from './fixtures/app.js';
import { authRateLimit } from './rate-limit.js';

const p = () => procedure();
const auth = procedures('auth', {
  login: p()
    .rest({ method: 'POST', path: '/auth/login' })
    .mutation(() => ({ ok: true })),
  me: p()
    .rest({ method: 'GET', path: '/auth/me' })
    .query(() => ({ ok: true })),
});

const login = (app: { inject: ReturnType<typeof createApp>['inject'] }, ip = '10.0.0.1') =>
  app.inject({ method: 'POST', url: '/api/auth/login', payload: {}, remoteAddress: ip });

describe('authRateLimit', () => {
  it('answers the 11th request in a minute with 429 RATE_LIMITED and Retry-After', async () => {
    const app = createApp({ logger: false }).mount([auth]);
    await authRateLimit(app, { routes: ['POST /api/auth/login'], max: 10 });
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

  it('works when registered before the routes are mounted', async () => {
    const app = createApp({ logger: false });
    await authRateLimit(app, { routes: ['/api/auth/login'], max: 2 });
    app.mount([auth]);
    expect((await login(app)).statusCode).toBe(200);
    expect((await login(app)).statusCode).toBe(200);
    expect((await login(app)).statusCode).toBe(429);
    await app.close();
  });

  it('counts per client IP and per route, and leaves other routes alone', async () => {
    const app = createApp({ logger: false }).mount([auth]);
    await authRateLimit(app, { routes: ['POST /api/auth/login'], max: 1 });
    expect((await login(app, '10.0.0.1')).statusCode).toBe(200);
    expect((await login(app, '10.0.0.1')).statusCode).toBe(429);
    expect((await login(app, '10.0.0.2')).statusCode).toBe(200);
    for (let i = 0; i < 3; i += 1) {
      const me = await app.inject({ url: '/api/auth/me', remoteAddress: '10.0.0.1' });
      expect(me.statusCode).toBe(200);
      expect(me.headers['x-ratelimit-limit']).toBeUndefined();
    }
    await app.close();
  });

  it('opens again after the window', async () => {
    const app = createApp({ logger: false }).mount([auth]);
    await authRateLimit(app, { routes: ['POST /api/auth/login'], max: 1, timeWindow: 200 });
    expect((await login(app)).statusCode).toBe(200);
    const limited = await login(app);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('1');
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect((await login(app)).statusCode).toBe(200);
    await app.close();
  });

  it('refuses to start when a listed route does not exist', async () => {
    const app = createApp({ logger: false }).mount([auth]);
    await authRateLimit(app, {
      routes: ['POST /api/auth/logon', 'GET /api/auth/login', 'POST /api/auth/login'],
    });
    await expect(app.ready()).rejects.toThrow('no such route: POST /api/auth/logon, GET /api/auth/login');
  });

  it('refuses malformed route specs and limits', async () => {
    const app = createApp({ logger: false });
    await expect(authRateLimit(app, { routes: ['login'] })).rejects.toThrow(ProceedConfigError);
    await expect(authRateLimit(app, { routes: ['FETCH /x'] })).rejects.toThrow(ProceedConfigError);
    await expect(authRateLimit(app, { routes: ['/x'], max: 0 })).rejects.toThrow(ProceedConfigError);
  });

  it('is applied by authPlugin({ rateLimit })', async () => {
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
