/** A handler that chooses its status among those its procedure declares: `.rest({ status: [...] })`. */
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, routeManifest } from '../client/index.js';
import { ProceedConfigError } from '../core/errors.js';
import { procedure, procedures } from '../core/procedure.js';
import { createResponseValidator } from '../openapi/conformance.js';
import { generateOpenApi } from '../openapi/generate.js';
import { createApp } from './create-app.js';

const saved = new Map<string, string>();
const Bookmark = z.object({ id: z.string(), url: z.string() });

const bookmarks = procedures('bookmarks', {
  // An upsert: 201 when it created the bookmark, 200 when it replaced one.
  saveBookmark: procedure()
    .rest({ method: 'PUT', path: '/bookmarks/:id', status: [200, 201] })
    .input(z.object({ id: z.string().regex(/^\w+$/), url: z.url() }))
    .output(Bookmark)
    .mutation(({ input, response }) => {
      if (!saved.has(input.id)) response.status(201);
      saved.set(input.id, input.url);
      return { id: input.id, url: input.url, secret: 'never sent' };
    }),
  // 204 when there was nothing to remove.
  deleteBookmark: procedure()
    .rest({ status: [200, 204] })
    .input(z.object({ id: z.string() }))
    .output(Bookmark)
    .mutation(({ input, response }) => {
      const url = saved.get(input.id);
      if (url === undefined) return response.status(204) && undefined;
      saved.delete(input.id);
      return { id: input.id, url };
    }),
  listBookmarks: procedure().query(({ response }) => {
    // A procedure with one status has nothing to choose: this fails to compile, and at run time.
    response.status(201 as never);
    return [];
  }),
  getBookmark: procedure()
    .rest({ method: 'GET', path: '/bookmarks/:id', status: [200, 202] })
    .input(z.object({ id: z.string() }))
    .query(({ response }) => {
      response.status(203 as never);
      return {};
    }),
});

describe('a handler that chooses its status', () => {
  const app = createApp({ logger: false });
  app.mount([bookmarks]);
  afterAll(() => app.close());

  it('answers the status it chose, the first declared otherwise, through the view', async () => {
    const created = await app.inject({
      method: 'PUT',
      url: '/api/bookmarks/a',
      payload: { url: 'https://a.example' },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({ id: 'a', url: 'https://a.example' });
    const replaced = await app.inject({
      method: 'PUT',
      url: '/api/bookmarks/a',
      payload: { url: 'https://b.example' },
    });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json()).toEqual({ id: 'a', url: 'https://b.example' });
  });

  it('sends no body and no content type when it chose 204', async () => {
    const removed = await app.inject({ method: 'DELETE', url: '/api/bookmarks/a' });
    expect(removed.statusCode).toBe(200);
    const none = await app.inject({ method: 'DELETE', url: '/api/bookmarks/a' });
    expect(none.statusCode).toBe(204);
    expect(none.body).toBe('');
    expect(none.headers['content-type']).toBeUndefined();
  });

  it('fails the call, as a 500 naming nothing, on a status the procedure does not declare', async () => {
    for (const url of ['/api/bookmarks', '/api/bookmarks/x']) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode).toBe(500);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.json()).toMatchObject({ code: 'INTERNAL' });
    }
  });

  it('documents every declared status, and its answers fit the document', async () => {
    const document = generateOpenApi({ app, info: { title: 'Bookmarks', version: '1.0.0' } });
    const put = document.paths['/api/bookmarks/{id}']?.put;
    expect(Object.keys(put?.responses ?? {}).filter((status) => status.startsWith('2'))).toEqual([
      '200',
      '201',
    ]);
    const del = document.paths['/api/bookmarks/{id}']?.delete;
    expect(del?.responses['204']).toEqual({ description: 'No content' });
    expect(del?.responses['200']).toMatchObject({ content: { 'application/json': expect.any(Object) } });
    const check = createResponseValidator(document);
    saved.clear();
    for (const expected of [201, 200]) {
      const response = await app.inject({
        method: 'PUT',
        url: '/api/bookmarks/c',
        payload: { url: 'https://c.example' },
      });
      expect(response.statusCode).toBe(expected);
      expect(
        check('PUT', '/api/bookmarks/c', expected, response.headers['content-type'], response.body),
      ).toEqual([]);
    }
  });

  it('resolves to { status, data } in the typed client, over a socket', async () => {
    saved.clear();
    const served = createApp({ logger: false });
    served.mount([bookmarks]);
    const url = await served.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
    try {
      const client = createClient<{ bookmarks: typeof bookmarks }>({
        baseUrl: url,
        routes: routeManifest(served),
      });
      const first = await client.bookmarks.saveBookmark({ id: 'd', url: 'https://d.example' });
      expect(first).toEqual({ status: 201, data: { id: 'd', url: 'https://d.example' } });
      expect(await client.bookmarks.saveBookmark({ id: 'd', url: 'https://e.example' })).toEqual({
        status: 200,
        data: { id: 'd', url: 'https://e.example' },
      });
      expect(await client.bookmarks.deleteBookmark({ id: 'd' })).toMatchObject({ status: 200 });
      expect(await client.bookmarks.deleteBookmark({ id: 'd' })).toEqual({ status: 204, data: undefined });
      // The manifest built from the collections says the same as the app's.
      expect(routeManifest([bookmarks]).bookmarks?.saveBookmark?.statuses).toEqual([200, 201]);
      expect(routeManifest([bookmarks]).bookmarks?.listBookmarks?.statuses).toBeUndefined();
    } finally {
      await served.close();
    }
  });
});

describe('declaring statuses', () => {
  it('refuses a status listed twice, or one that is not a success', () => {
    const twice = procedures('bookmarks', {
      updateBookmark: procedure()
        .rest({ status: [200, 200] as never })
        .mutation(() => null),
    });
    expect(() => createApp({ logger: false }).mount([twice])).toThrow(ProceedConfigError);
    const redirect = procedures('bookmarks', {
      updateBookmark: procedure()
        .rest({ status: [200, 302] as never })
        .mutation(() => null),
    });
    expect(() => createApp({ logger: false }).mount([redirect])).toThrow(/302 is not 200, 201, 202 or 204/);
  });

  it('takes a method and a path together, or neither', () => {
    expect(() => procedure().rest({ method: 'GET' } as never)).toThrow(/method and path come together/);
  });
});
