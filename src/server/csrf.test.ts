/** Writes that carry cookies from another site are refused; everything else passes untouched. */
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ProceedConfigError } from '../core/errors.js';
import { procedure, procedures } from '../core/procedure.js';
import { createApp } from './create-app.js';

let writes = 0;
const notes = procedures('notes', {
  createNote: procedure()
    .input(z.object({ text: z.string() }).optional())
    .mutation(() => {
      writes++;
      return { id: String(writes) };
    }),
  listNotes: procedure().query(() => []),
});

type Options = Parameters<typeof createApp>[0];
const appWith = (options: Options = {}) => {
  const app = createApp({ logger: false, ...options });
  app.mount([notes]);
  return app;
};

const own = 'https://api.example.com';
const post = (app: ReturnType<typeof appWith>, headers: Record<string, string>) =>
  app.inject({
    method: 'POST',
    url: '/api/notes',
    headers: { host: 'api.example.com', 'x-forwarded-proto': 'https', ...headers },
    payload: { text: 'hi' },
  });

describe('cross-site writes with cookies', () => {
  const app = appWith({ trustProxy: true, csrf: { trustedOrigins: ['https://admin.example.com'] } });
  afterAll(() => app.close());

  it('are refused with 403 before anything runs', async () => {
    const before = writes;
    for (const headers of [
      { cookie: 'session=1', origin: 'https://evil.example' },
      { cookie: 'session=1', origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      { cookie: 'session=1', 'sec-fetch-site': 'cross-site' },
      // A sibling subdomain is same-site, and may belong to someone else.
      { cookie: 'session=1', 'sec-fetch-site': 'same-site' },
      { cookie: 'session=1', origin: 'null' },
      // http is another origin than https.
      { cookie: 'session=1', origin: 'http://api.example.com' },
    ]) {
      const response = await post(app, headers);
      expect(response.statusCode, JSON.stringify(headers)).toBe(403);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.json()).toMatchObject({
        code: 'FORBIDDEN',
        detail: expect.stringMatching(/^Cross-site request refused/),
      });
    }
    expect(writes).toBe(before);
  });

  it('pass from the same origin, a trusted one, or a browser that says so', async () => {
    for (const headers of [
      { cookie: 'session=1', origin: own },
      { cookie: 'session=1', origin: own, 'sec-fetch-site': 'same-origin' },
      { cookie: 'session=1', 'sec-fetch-site': 'same-origin' },
      { cookie: 'session=1', 'sec-fetch-site': 'none' },
      { cookie: 'session=1', origin: 'https://admin.example.com', 'sec-fetch-site': 'same-site' },
    ]) {
      expect((await post(app, headers)).statusCode, JSON.stringify(headers)).toBe(201);
    }
  });

  it('pass without cookies (bearer tokens, servers), or without any browser header', async () => {
    expect(
      (await post(app, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })).statusCode,
    ).toBe(201);
    expect((await post(app, { cookie: 'session=1' })).statusCode).toBe(201);
  });

  it('leave reads alone', async () => {
    const response = await app.inject({
      method: 'GET',
      url: '/api/notes',
      headers: { cookie: 'session=1', origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    expect(response.statusCode).toBe(200);
  });

  it('are refused whatever the body, a form or no type at all', async () => {
    const form = await app.inject({
      method: 'POST',
      url: '/api/notes',
      headers: { host: 'api.example.com', cookie: 'session=1', 'sec-fetch-site': 'cross-site' },
    });
    expect(form.statusCode).toBe(403);
    const text = await app.inject({
      method: 'POST',
      url: '/api/notes',
      headers: {
        host: 'api.example.com',
        cookie: 'session=1',
        'sec-fetch-site': 'cross-site',
        'content-type': 'text/plain',
      },
      payload: 'text=hi',
    });
    expect([403, 415]).toContain(text.statusCode);
  });
});

describe('the check’s settings', () => {
  it('trusts CORS origins that may send credentials, not the others', async () => {
    const withCredentials = appWith({ cors: { origins: ['https://app.example.com'], credentials: true } });
    const withoutCredentials = appWith({ cors: { origins: ['https://app.example.com'] } });
    try {
      const headers = {
        cookie: 'session=1',
        origin: 'https://app.example.com',
        'sec-fetch-site': 'cross-site',
      };
      expect((await post(withCredentials, headers)).statusCode).toBe(201);
      expect((await post(withoutCredentials, headers)).statusCode).toBe(403);
    } finally {
      await Promise.all([withCredentials.close(), withoutCredentials.close()]);
    }
  });

  it('turns off with csrf: false, and refuses an origin that is not one', async () => {
    const off = appWith({ csrf: false });
    try {
      expect((await post(off, { cookie: 'session=1', origin: 'https://evil.example' })).statusCode).toBe(201);
    } finally {
      await off.close();
    }
    for (const origin of [
      'https://admin.example.com/',
      'https://Admin.example.com',
      'https://x.com:443',
      'https://*.example.com',
    ])
      expect(() => appWith({ csrf: { trustedOrigins: [origin] } }), origin).toThrow(ProceedConfigError);
    expect(() => appWith({ csrf: { trusted: [] } as never })).toThrow(/unknown option/);
  });
});
