/**
 * CORS on the blog over real sockets, on both engines: `CORS_ORIGINS` (here `corsOrigins`)
 * lets a listed origin's preflight and requests through with the headers a browser needs; any
 * other origin gets no CORS headers. A real browser's view is in cors.browser.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { engines, useBlog } from './harness.js';

const site = 'https://app.example.com';

describe.each(engines())('CORS on $name', (engine) => {
  if (engine.skip) {
    it.skip('needs PostgreSQL', () => undefined);
    return;
  }
  const blog = useBlog(engine, { corsOrigins: [site] });

  it('answers the preflight of a listed origin, then the request, with what a script may read', async () => {
    const preflight = await fetch(`${blog.origin}/api/posts`, {
      method: 'OPTIONS',
      headers: {
        origin: site,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(site);
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Authorization.*Content-Type/);
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');

    const writer = await blog.register();
    const created = await fetch(`${blog.origin}/api/posts`, {
      method: 'POST',
      headers: {
        origin: site,
        authorization: `Bearer ${writer.accessToken}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ title: 'From another origin', content: 'Sent by a page elsewhere.' }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('access-control-allow-origin')).toBe(site);
    expect(created.headers.get('access-control-expose-headers')).toContain('Location');
    expect(created.headers.get('vary')).toContain('Origin');
  });

  it('gives another origin no CORS headers, and its preflight the usual 405 problem', async () => {
    const stranger = 'https://elsewhere.example';
    const read = await fetch(`${blog.origin}/api/posts`, { headers: { origin: stranger } });
    expect(read.status).toBe(200);
    expect(read.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await fetch(`${blog.origin}/api/posts`, {
      method: 'OPTIONS',
      headers: { origin: stranger, 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(405);
    expect(preflight.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  });
});
