/** Headers and cookies a handler sets per request, signed cookies and their rotation. */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ProceedConfigError, ProceedError } from '../core/errors.js';
import { procedure, procedures } from '../core/procedure.js';
import { checkedCookie, ResponseControl } from '../core/response.js';
import { CookieSigner } from '../http/cookies.js';
import { createApp } from './create-app.js';

const oldSecret = 'an old secret of thirty-two bytes or more';
const newSecret = 'a new secret, also thirty-two bytes or more';

const sessions = procedures('sessions', {
  createSession: procedure()
    .input(z.object({ name: z.string() }))
    .mutation(({ input, response }) => {
      response.header('Cache-Control', 'no-store').header('x-served-by', 'sessions');
      response.cookie('session', `user-${input.name}`, { signed: true, maxAge: 3600 });
      response.cookie('theme', 'dark', { httpOnly: false, sameSite: 'strict' });
      return { name: input.name };
    }),
  getSession: procedure()
    .rest({ method: 'GET', path: '/sessions/current' })
    .query(({ ctx }) => ({
      session: ctx.request.cookie('session', { signed: true }) ?? null,
      raw: ctx.request.cookie('session') ?? null,
      theme: ctx.request.cookie('theme') ?? null,
    })),
  deleteSession: procedure()
    .rest({ method: 'DELETE', path: '/sessions', status: 204 })
    .mutation(({ response }) => {
      response.clearCookie('session');
    }),
  failSession: procedure()
    .rest({ method: 'POST', path: '/sessions/fail' })
    .mutation(({ response }) => {
      response.cookie('session', 'half-done', { signed: true });
      throw new ProceedError('CONFLICT', 'Not now');
    }),
});

const appWith = (secrets: string[]) => {
  const app = createApp({ logger: false, cookies: { secrets } });
  app.mount([sessions]);
  return app;
};

function setCookies(headers: Record<string, unknown>): string[] {
  const value = headers['set-cookie'];
  return value === undefined ? [] : Array.isArray(value) ? value : [String(value)];
}

describe('headers and cookies set by a handler', () => {
  const app = appWith([newSecret, oldSecret]);
  afterAll(() => app.close());

  it('sends its headers and each cookie as its own Set-Cookie line, with safe defaults', async () => {
    const response = await app.inject({ method: 'POST', url: '/api/sessions', payload: { name: 'ada' } });
    expect(response.statusCode).toBe(201);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['x-served-by']).toBe('sessions');
    const [session, theme, ...rest] = setCookies(response.headers);
    expect(rest).toEqual([]);
    expect(session).toMatch(
      /^session=user-ada\.[A-Za-z0-9_-]{43}; Max-Age=3600; Path=\/; HttpOnly; Secure; SameSite=Lax$/,
    );
    expect(theme).toBe('theme=dark; Path=/; Secure; SameSite=Strict');
  });

  it('reads back a signed cookie, and refuses it altered, moved to another name or unsigned', async () => {
    const created = await app.inject({ method: 'POST', url: '/api/sessions', payload: { name: 'ada' } });
    const signed = (setCookies(created.headers)[0] ?? '').split(';')[0] ?? '';
    const read = async (cookie: string) =>
      (await app.inject({ method: 'GET', url: '/api/sessions/current', headers: { cookie } })).json();
    expect(await read(`${signed}; theme=dark`)).toEqual({
      session: 'user-ada',
      raw: signed.slice('session='.length),
      theme: 'dark',
    });
    expect((await read(signed.replace('user-ada', 'user-bob'))).session).toBeNull();
    expect((await read('session=user-ada')).session).toBeNull();
    const signature = signed.slice(signed.lastIndexOf('.'));
    const other = new CookieSigner([newSecret]).sign('theme', 'user-ada');
    expect(other.endsWith(signature)).toBe(false);
    expect((await read(`session=user-ada${other.slice(other.lastIndexOf('.'))}`)).session).toBeNull();
    expect(await read('')).toEqual({ session: null, raw: null, theme: null });
  });

  it('keeps cookies signed with an older secret valid after a rotation, and signs with the newest', async () => {
    const before = appWith([oldSecret]);
    const after = appWith([newSecret, oldSecret]);
    const retired = appWith([newSecret]);
    try {
      const created = await before.inject({ method: 'POST', url: '/api/sessions', payload: { name: 'ada' } });
      const cookie = (setCookies(created.headers)[0] ?? '').split(';')[0] ?? '';
      const read = async (app: typeof before) =>
        (await app.inject({ method: 'GET', url: '/api/sessions/current', headers: { cookie } })).json()
          .session;
      expect(await read(after)).toBe('user-ada');
      expect(await read(retired)).toBeNull();
      const renewed = await after.inject({ method: 'POST', url: '/api/sessions', payload: { name: 'ada' } });
      const fresh = (setCookies(renewed.headers)[0] ?? '').split(';')[0] ?? '';
      expect(fresh).not.toBe(cookie);
      expect(
        (
          await retired.inject({ method: 'GET', url: '/api/sessions/current', headers: { cookie: fresh } })
        ).json().session,
      ).toBe('user-ada');
    } finally {
      await Promise.all([before.close(), after.close(), retired.close()]);
    }
  });

  it('clears a cookie on a 204, and sets nothing when the handler fails', async () => {
    const cleared = await app.inject({ method: 'DELETE', url: '/api/sessions' });
    expect(cleared.statusCode).toBe(204);
    expect(setCookies(cleared.headers)).toEqual([
      'session=; Max-Age=0; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; Secure; SameSite=Lax',
    ]);
    const failed = await app.inject({ method: 'POST', url: '/api/sessions/fail' });
    expect(failed.statusCode).toBe(409);
    expect(failed.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(setCookies(failed.headers)).toEqual([]);
  });
});

describe('two cookies over a real socket', () => {
  const app = appWith([newSecret]);
  let port = 0;
  beforeAll(async () => {
    port = Number(new URL(await app.listen({ port: 0, host: '127.0.0.1' })).port);
  });
  afterAll(() => app.close());

  it('leave as two Set-Cookie header lines, never folded into one', async () => {
    const raw = await new Promise<string[]>((resolve, reject) => {
      const sent = httpRequest(
        {
          port,
          host: '127.0.0.1',
          method: 'POST',
          path: '/api/sessions',
          headers: { 'content-type': 'application/json' },
        },
        (response) => {
          response.resume();
          response.on('end', () => resolve(response.rawHeaders));
        },
      );
      sent.on('error', reject);
      sent.end('{"name":"ada"}');
    });
    const lines = raw.filter((_, index) => index % 2 === 0 && raw[index]?.toLowerCase() === 'set-cookie');
    expect(lines).toHaveLength(2);
  });
});

describe('mistakes refused where they are made', () => {
  it('refuses cookies browsers would drop', () => {
    expect(() => checkedCookie('__Host-id', 'x', { domain: 'example.com' })).toThrow(/__Host- cookie/);
    expect(() => checkedCookie('__Host-id', 'x', { path: '/api' })).toThrow(/__Host- cookie/);
    expect(() => checkedCookie('__Host-id', 'x', { secure: false })).toThrow(/__Host- cookie/);
    expect(() => checkedCookie('__Secure-id', 'x', { secure: false })).toThrow(/__Secure- cookie/);
    expect(() => checkedCookie('id', 'x', { sameSite: 'none', secure: false })).toThrow(/needs secure/);
    expect(() => checkedCookie('two words', 'x')).toThrow(/token/);
    expect(() => checkedCookie('id', 'x', { maxAge: 1.5 })).toThrow(/whole number/);
    expect(checkedCookie('__Host-id', 'x').options).toMatchObject({ path: '/', secure: true });
    // Browsers match prefixes whatever their case; attributes that cannot be written fail here.
    expect(() => checkedCookie('__host-id', 'x', { domain: 'example.com' })).toThrow(/__Host- cookie/);
    expect(() => checkedCookie('id', 'x', { path: '/a;b' })).toThrow(/path has a character/);
    expect(() => checkedCookie('id', 'x', { expires: new Date('nope') })).toThrow(/valid Date/);
  });

  it('refuses headers Proceed owns, and values with control characters', () => {
    const response = new ResponseControl([200]);
    for (const name of ['Content-Type', 'set-cookie', 'ETag', 'Content-Length', 'X-Request-Id', 'Location'])
      expect(() => response.header(name, 'x')).toThrow(ProceedConfigError);
    expect(() => response.header('x-note', 'a\r\nb: c')).toThrow(/control character/);
    expect(() => response.header('bad name', 'x')).toThrow(/not a header name/);
    expect(response.header('X-Note', 'one').header('x-note', 'two').headers).toEqual([['x-note', 'two']]);
  });

  it('refuses short secrets at start-up, and a signed cookie on an app without secrets', async () => {
    expect(() => createApp({ logger: false, cookies: { secrets: ['short'] } })).toThrow(/at least 32 bytes/);
    const app = createApp({ logger: false });
    app.mount([sessions]);
    try {
      const response = await app.inject({ method: 'POST', url: '/api/sessions', payload: { name: 'ada' } });
      expect(response.statusCode).toBe(500);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body).not.toContain('secret');
      expect(setCookies(response.headers)).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
