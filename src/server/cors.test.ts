import { afterEach, describe, expect, it } from 'vitest';
import { ProceedError } from '../core/errors.js';
import { procedure, procedures } from '../core/procedure.js';
import type { App, AppOptions } from './app.js';
import { createApp } from './create-app.js';

const apps: App[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

const notes = procedures('notes', {
  listNotes: procedure().query(() => [{ id: 1 }]),
  getNote: procedure().query(() => {
    throw new ProceedError('NOT_FOUND', 'No such note');
  }),
  createNote: procedure().mutation(() => ({ id: 2 })),
});

function app(options: AppOptions<object> = {}): App {
  const created = createApp({ logger: false, ...options }).mount([notes]);
  apps.push(created);
  return created;
}

const site = 'https://app.example.com';

function preflight(target: App, url: string, method: string, origin = site) {
  return target.inject({
    method: 'OPTIONS',
    url,
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': 'authorization, content-type',
    },
  });
}

describe('cors', () => {
  it('is off by default: no CORS headers, and a preflight is an OPTIONS like any other (405)', async () => {
    const plain = app();
    const answer = await plain.inject({ method: 'GET', url: '/api/notes', headers: { origin: site } });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
    const asked = await preflight(plain, '/api/notes', 'POST');
    expect(asked.statusCode).toBe(405);
    expect(asked.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(asked.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers the preflight of an allowed origin on a procedure route, then the request itself', async () => {
    const open = app({ cors: { origins: [site, 'http://localhost:5173'] } });
    const asked = await preflight(open, '/api/notes', 'POST');
    expect(asked.statusCode).toBe(204);
    expect(asked.headers).toMatchObject({
      'access-control-allow-origin': site,
      'access-control-allow-headers': expect.stringContaining('Authorization'),
      'access-control-max-age': '600',
    });
    expect(asked.headers['access-control-allow-methods']).toContain('POST');
    expect(asked.headers['access-control-allow-credentials']).toBeUndefined();
    expect(asked.headers.vary).toContain('Origin');

    const created = await open.inject({ method: 'POST', url: '/api/notes', headers: { origin: site } });
    expect(created.statusCode).toBe(201);
    expect(created.headers['access-control-allow-origin']).toBe(site);
    expect(created.headers['access-control-expose-headers']).toContain('Location');
    expect(created.headers.vary).toContain('Origin');
    // A download resumed or revalidated, or an event stream resumed, from another origin: what
    // it sends may be sent, what it answers may be read.
    const allowed = String(asked.headers['access-control-allow-headers']).split(', ');
    expect(allowed).toEqual(
      expect.arrayContaining(['Range', 'If-Range', 'If-Modified-Since', 'Last-Event-ID']),
    );
    const exposed = String(created.headers['access-control-expose-headers']).split(', ');
    expect(exposed).toEqual(
      expect.arrayContaining(['Content-Disposition', 'Content-Range', 'Accept-Ranges']),
    );
  });

  it('keeps Origin in Vary when a compressed answer adds Accept-Encoding', async () => {
    const big = procedures('pages', {
      listPages: procedure().query(() =>
        Array.from({ length: 100 }, (_, id) => ({ id, text: 'words '.repeat(5) })),
      ),
    });
    const served = createApp({ logger: false, cors: { origins: [site] } }).mount([big]);
    apps.push(served);
    const answer = await served.inject({
      method: 'GET',
      url: '/api/pages',
      headers: { origin: site, 'accept-encoding': 'gzip' },
    });
    expect(answer.headers['content-encoding']).toBe('gzip');
    expect(answer.headers.vary).toBe('Origin, accept-encoding');
  });

  it('gives a problem answer CORS headers too, so the page can read why', async () => {
    const open = app({ cors: { origins: [site] } });
    const missing = await open.inject({ method: 'GET', url: '/api/notes/7', headers: { origin: site } });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['access-control-allow-origin']).toBe(site);
    const unknown = await open.inject({ method: 'GET', url: '/api/nothing', headers: { origin: site } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['access-control-allow-origin']).toBe(site);
  });

  it('refuses other origins, unknown routes, other methods and plain OPTIONS with the usual problems', async () => {
    const open = app({ cors: { origins: [site] } });
    const stranger = await preflight(open, '/api/notes', 'POST', 'https://evil.example');
    expect(stranger.statusCode).toBe(405);
    expect(stranger.headers['access-control-allow-origin']).toBeUndefined();
    const read = await open.inject({
      method: 'GET',
      url: '/api/notes',
      headers: { origin: 'https://evil.example' },
    });
    expect(read.statusCode).toBe(200);
    expect(read.headers['access-control-allow-origin']).toBeUndefined();

    expect((await preflight(open, '/api/nothing', 'GET')).statusCode).toBe(404);
    const wrongMethod = await preflight(open, '/api/notes', 'DELETE');
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.headers.allow).toBe('GET, HEAD, POST');
    const plainOptions = await open.inject({
      method: 'OPTIONS',
      url: '/api/notes',
      headers: { origin: site },
    });
    expect(plainOptions.statusCode).toBe(405);
    expect(plainOptions.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  });

  it("allows any origin with '*', and credentials with listed origins", async () => {
    const any = app({ cors: { origins: '*', maxAge: 60 } });
    const asked = await preflight(any, '/api/notes', 'GET', 'https://anyone.example');
    expect(asked.statusCode).toBe(204);
    expect(asked.headers['access-control-allow-origin']).toBe('https://anyone.example');
    expect(asked.headers['access-control-max-age']).toBe('60');

    const withCookies = app({ cors: { origins: [site], credentials: true } });
    const read = await withCookies.inject({ method: 'GET', url: '/api/notes', headers: { origin: site } });
    expect(read.headers['access-control-allow-credentials']).toBe('true');
  });

  it('refuses options a browser would not honour, naming them', () => {
    expect(() => createApp({ cors: { origins: '*', credentials: true } })).toThrow(
      "cors: origins '*' cannot go with credentials",
    );
    expect(() => createApp({ cors: { origins: ['https://app.example.com/'] } })).toThrow(
      'cors.origins: "https://app.example.com/" is not an origin',
    );
    expect(() => createApp({ cors: { origins: ['app.example.com'] } })).toThrow(/is not an origin/);
    expect(() => createApp({ cors: { origins: [] } })).toThrow(/must list at least one origin/);
    expect(() => createApp({ cors: { origins: [site], maxAge: -1 } })).toThrow(/cors.maxAge/);
  });
});
