/**
 * A page served from another origin calls the blog with a bearer token in Chromium: allowed
 * when its origin is in `corsOrigins`, blocked by the browser when it is not. It also resumes
 * the live feed as the typed client does after a dropped stream, with `Last-Event-ID`, which
 * the preflight must allow.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, skipBrowserSuite } from './browser.js';
import { type BlogInstance, engines, startBlog, uniqueEmail } from './harness.js';

const [pglite] = engines();
if (pglite === undefined) throw new Error('No PGlite engine');

/** What the page's script reports back. */
interface Outcome {
  status?: number;
  name?: string;
  /** The live feed resumed with `Last-Event-ID`: its status and media type. */
  resumed?: string;
  error?: string;
}

describe.skipIf(skipBrowserSuite('the blog CORS browser test'))(
  'a page on another origin, in Chromium',
  () => {
    let page: Server;
    let pageOrigin: string;
    let blog: BlogInstance;

    beforeAll(async () => {
      page = createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        response.end('<!doctype html><title>Another app</title><p>Another app</p>');
      }).listen(0, '127.0.0.1');
      await once(page, 'listening');
      // The same host under another name is another origin to the browser.
      pageOrigin = `http://localhost:${(page.address() as AddressInfo).port}`;
      blog = await startBlog(pglite, { corsOrigins: [pageOrigin] });
    });
    afterAll(async () => {
      await blog?.close();
      page?.close();
    });

    it('signs in and reads /api/auth/me with its bearer token; an unlisted origin is blocked', {
      timeout: 60_000,
    }, async () => {
      const email = uniqueEmail('cors');
      const browser = await launchChromium();
      try {
        const tab = await browser.newPage();
        await tab.goto(pageOrigin);
        const call = (api: string) =>
          tab.evaluate(
            async ({ api, email }): Promise<Outcome> => {
              try {
                const registered = await fetch(`${api}/api/auth/register`, {
                  method: 'POST',
                  headers: { 'content-type': 'application/json' },
                  body: JSON.stringify({ email, password: 'a-long-password', name: 'Cross Origin' }),
                });
                const { accessToken } = (await registered.json()) as { accessToken: string };
                const me = await fetch(`${api}/api/auth/me`, {
                  headers: { authorization: `Bearer ${accessToken}` },
                });
                const body = (await me.json()) as { name: string };
                const stop = new AbortController();
                const feed = await fetch(`${api}/api/posts/events`, {
                  headers: { authorization: `Bearer ${accessToken}`, 'last-event-id': '1' },
                  signal: stop.signal,
                });
                const resumed = `${feed.status} ${feed.headers.get('content-type')}`;
                stop.abort();
                return { status: me.status, name: body.name, resumed };
              } catch (error) {
                return { error: String(error) };
              }
            },
            { api, email },
          );
        expect(await call(blog.origin)).toEqual({
          status: 200,
          name: 'Cross Origin',
          resumed: '200 text/event-stream; charset=utf-8',
        });

        // The same page against a blog that does not list its origin: the browser refuses to read.
        const closed = await startBlog(pglite);
        try {
          const outcome = await call(closed.origin);
          expect(outcome.error).toMatch(/Failed to fetch/);
        } finally {
          await closed.close();
        }
      } finally {
        await browser.close();
      }
    });
  },
);
