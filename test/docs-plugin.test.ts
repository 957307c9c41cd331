/**
 * The docs plugin served by a real App: an integration test of src/openapi with src/server, kept
 * here so that src/openapi depends on nothing in the server (docs/architecture.md).
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { procedure, procedures } from '../src/core/procedure.js';
import { generateOpenApi } from '../src/openapi/generate.js';
import { docsPlugin } from '../src/openapi/plugin.js';
import type { OpenApiDocument } from '../src/openapi/types.js';
import { createApp } from '../src/server/create-app.js';
import { notes, notesApp } from './fixtures/notes.js';

const openapi = { info: { title: 'Notes API', version: '2.0.0' } };

const tags = procedures('tags', {
  listTags: procedure()
    .output(z.array(z.string()))
    .query(() => ['a']),
});

async function documentedApp() {
  const app = notesApp();
  await app.register(docsPlugin, { routePrefix: '/api/docs', openapi });
  return app;
}

/** The `href` and `src` of the page that point at files, in order. */
function assetUrls(html: string): string[] {
  return [...html.matchAll(/(?:href|src)="([^"]+)"/g)].map((match) => match[1] ?? '');
}

describe('docsPlugin', () => {
  it('serves the OpenAPI document as JSON at {routePrefix}/json', async () => {
    const app = await documentedApp();
    const response = await app.inject({ method: 'GET', url: '/api/docs/json' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    const document = response.json<OpenApiDocument>();
    expect(document.openapi).toBe('3.1.0');
    expect(document.info).toEqual({ title: 'Notes API', version: '2.0.0' });
    expect(document).toEqual(generateOpenApi({ app: notesApp(), ...openapi }));
    expect(document.paths['/api/notes']?.get?.operationId).toBe('listNotes');
    // The docs routes are not part of the API they document.
    expect(Object.keys(document.paths).some((path) => path.startsWith('/api/docs'))).toBe(false);
    await expect(SwaggerParser.validate(document as never)).resolves.toBeDefined();
    await app.close();
  });

  it('serves the same document as YAML at {routePrefix}/yaml', async () => {
    const app = await documentedApp();
    const [json, yaml] = await Promise.all([
      app.inject({ method: 'GET', url: '/api/docs/json' }),
      app.inject({ method: 'GET', url: '/api/docs/yaml' }),
    ]);
    expect(yaml.statusCode).toBe(200);
    expect(yaml.headers['content-type']).toMatch(/^application\/x-yaml/);
    expect(yaml.body).toMatch(/^openapi: 3\.1\.0$/m);
    expect(yaml.body).not.toMatch(/[&*]a\d+/);
    expect(parse(yaml.body)).toEqual(json.json());
    await app.close();
  });

  it('answers two first requests for the YAML, made when asked for, alike and with its tag, and a revalidation with 304', async () => {
    const app = await documentedApp();
    const [first, second] = await Promise.all([
      app.inject({ method: 'GET', url: '/api/docs/yaml' }),
      app.inject({ method: 'GET', url: '/api/docs/yaml' }),
    ]);
    expect(second.body).toBe(first.body);
    const tag = first.headers.etag as string;
    expect(tag).toMatch(/^"[\w-]{27}"$/);
    expect(second.headers.etag).toBe(tag);
    const unchanged = await app.inject({
      method: 'GET',
      url: '/api/docs/yaml',
      headers: { 'if-none-match': tag },
    });
    expect(unchanged.statusCode).toBe(304);
    expect(unchanged.body).toBe('');
    // A 304 repeats the 200's Cache-Control and ETag (RFC 9110, 15.4.5), and its policy.
    expect(unchanged.headers['cache-control']).toBe('no-cache');
    expect(unchanged.headers.etag).toBe(tag);
    expect(unchanged.headers['content-security-policy']).toBe(first.headers['content-security-policy']);
    await app.close();
  });

  it('serves the interactive UI at {routePrefix} with every asset from the server itself', async () => {
    const app = await documentedApp();
    const page = await app.inject({ method: 'GET', url: '/api/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('<div id="swagger-ui"></div>');
    expect(page.body).toContain('<title>Notes API: API documentation</title>');
    const urls = assetUrls(page.body);
    expect(urls.length).toBeGreaterThanOrEqual(5);
    expect(urls.filter((url) => !url.startsWith('/api/docs/static/'))).toEqual([]);
    expect(urls).toEqual(
      expect.arrayContaining([
        '/api/docs/static/swagger-ui.css',
        '/api/docs/static/swagger-ui-bundle.js',
        '/api/docs/static/swagger-ui-standalone-preset.js',
        '/api/docs/static/swagger-initializer.js',
      ]),
    );
    for (const url of urls) {
      const asset = await app.inject({ method: 'GET', url });
      expect(asset.statusCode, url).toBe(200);
      expect(asset.body.length, url).toBeGreaterThan(0);
      if (url.endsWith('.js')) expect(asset.headers['content-type'], url).toMatch(/javascript/);
      if (url.endsWith('.css')) expect(asset.headers['content-type'], url).toMatch(/^text\/css/);
    }
    const initializer = await app.inject({ method: 'GET', url: '/api/docs/static/swagger-initializer.js' });
    expect(initializer.body).toContain("resolveUrl('./json')");
    // The UI would otherwise send the document to validator.swagger.io.
    expect(initializer.body).toContain('validatorUrl: null');
    await app.close();
  });

  it('sends the page with a same-origin Content-Security-Policy that forbids framing', async () => {
    const app = await documentedApp();
    const page = await app.inject({ method: 'GET', url: '/api/docs' });
    const policy = String(page.headers['content-security-policy']);
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).toContain("object-src 'none'");
    expect(policy).not.toContain('upgrade-insecure-requests');
  });

  it('serves the UI with a trailing slash too, with relative asset URLs', async () => {
    const app = await documentedApp();
    const page = await app.inject({ method: 'GET', url: '/api/docs/' });
    expect(page.statusCode).toBe(200);
    expect(assetUrls(page.body)).toContain('./static/swagger-ui-bundle.js');
    await app.close();
  });

  // Known gap in core: @fastify/static calls the not-found handler from its GET wildcard route,
  // and App#notFound sees the wildcard's HEAD twin and answers 405. Flip to `it` once core
  // answers 404 when a route for the request's own method exists.
  it('answers unknown files under the prefix with a problem+json 404', async () => {
    const app = await documentedApp();
    const response = await app.inject({ method: 'GET', url: '/api/docs/static/nope.js' });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(response.json()).toMatchObject({ code: 'ROUTE_NOT_FOUND' });
    await app.close();
  });

  it('sees mounts made after it was registered: the document is built when the app is ready', async () => {
    const app = createApp({ logger: false, userFromContext: true });
    await app.register(docsPlugin, { openapi });
    app.mount([notes]);
    app.mount([tags], { prefix: '/v2' });
    const document = (await app.inject({ method: 'GET', url: '/api/docs/json' })).json<OpenApiDocument>();
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/api/notes', '/v2/tags', '/v2/health']),
    );
    await app.close();
  });

  it('documents only the given collections', async () => {
    const app = createApp({ logger: false, userFromContext: true }).mount([notes, tags]);
    await app.register(docsPlugin, { routePrefix: '/docs', collections: [tags], openapi });
    const document = (await app.inject({ method: 'GET', url: '/docs/json' })).json<OpenApiDocument>();
    expect(Object.keys(document.paths)).toEqual(['/api/tags', '/api/health', '/api/health/live']);
    expect(document.tags?.map((tag) => tag.name)).toEqual(['tags', 'health']);
    expect((await app.inject({ method: 'GET', url: '/docs' })).statusCode).toBe(200);
    await app.close();
  });

  it('refuses to start when a chosen collection is not mounted', async () => {
    const app = createApp({ logger: false, userFromContext: true }).mount([notes]);
    await app.register(docsPlugin, { collections: [tags], openapi });
    await expect(app.ready()).rejects.toThrow(
      'docsPlugin: collection "tags" is not mounted; mount it with app.mount([...]) before the app starts',
    );
  });

  it('passes servers on to the document, with what plugins added to the routes', async () => {
    const app = notesApp();
    app.document((route) => (route.method === 'POST' ? { problems: ['RATE_LIMITED'] } : undefined));
    await app.register(docsPlugin, {
      openapi: { ...openapi, servers: [{ url: 'http://localhost:3030' }] },
    });
    const document = (await app.inject({ method: 'GET', url: '/api/docs/json' })).json<OpenApiDocument>();
    expect(document.servers).toEqual([{ url: 'http://localhost:3030' }]);
    expect(document.paths['/api/notes']?.post?.responses['429']).toEqual({
      $ref: '#/components/responses/TooManyRequests',
    });
    expect(document.paths['/api/notes']?.get?.responses['429']).toBeUndefined();
    await app.close();
  });

  it('refuses the removed rateLimitedRoutes instead of ignoring it', async () => {
    await expect(
      notesApp().register(docsPlugin, {
        openapi: { ...openapi, rateLimitedRoutes: ['POST /api/notes'] },
      } as never),
    ).rejects.toThrow('openapi.rateLimitedRoutes is gone');
  });

  it('refuses options without info, and a root prefix', async () => {
    await expect(
      notesApp().register(docsPlugin, { openapi: { info: { title: 'x' } } } as never),
    ).rejects.toThrow('docsPlugin: openapi.info.title and openapi.info.version must be strings');
    await expect(notesApp().register(docsPlugin, { routePrefix: '/', openapi })).rejects.toThrow(
      'docsPlugin: routePrefix cannot be the root "/"',
    );
  });

  it('leaves the API itself untouched', async () => {
    const app = await documentedApp();
    const response = await app.inject({ method: 'GET', url: '/api/notes' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ data: [{ id: '1', title: 'One' }] });
    const wrongMethod = await app.inject({ method: 'POST', url: '/api/docs/json' });
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.headers.allow).toContain('GET');
    await app.close();
  });
});
