/**
 * `proceedjs/tanstack-query` in a real browser: a React page with `@tanstack/react-query`
 * (tanstack-query-page/page.tsx), bundled here from the framework's sources with esbuild and
 * served from another origin, shows the blog's feed in Chromium, loads its second cursor page
 * when the end of the list is scrolled into view, and shows a post it publishes once its
 * mutation has invalidated the feed.
 * Skipped on a machine without /usr/bin/chromium; under CI=true a missing Chromium fails.
 */
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, skipBrowserSuite, watchedPage } from './browser.js';
import { Blog, engines, type Session } from './harness.js';
import { blogDirectory } from './support.js';
import type { PageConfig } from './tanstack-query-page/page.js';

const [pglite] = engines();
if (pglite === undefined) throw new Error('No PGlite engine');

const limit = 5;
const seeded = Array.from({ length: 8 }, (_, index) => `Seeded post ${index + 1}`);

/**
 * Inside Proceed's repository, the framework's sources, which every suite there tests (the root
 * vitest.config.ts's aliases); in a copy of the blog, the installed `proceedjs`.
 */
const repository = fileURLToPath(new URL('../../../', import.meta.url));
const inRepository = existsSync(join(repository, 'src/tanstack-query/index.ts'));

/** `proceedjs` and its subpaths as the framework's sources, for esbuild. */
const proceedSources: Plugin = {
  name: 'proceedjs-sources',
  setup(bundler) {
    bundler.onResolve({ filter: /^proceedjs(\/[a-z-]+)?$/ }, ({ path }) => ({
      path: `${repository}src/${path === 'proceedjs' ? '' : `${path.slice('proceedjs/'.length)}/`}index.ts`,
    }));
  },
};

/** The page's script, and the framework modules it was built from. */
async function bundlePage(): Promise<{ script: string; inputs: string[] }> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('./tanstack-query-page/page.tsx', import.meta.url))],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'chrome120',
    jsx: 'automatic',
    // React's development build: its warnings are console errors the test fails on.
    define: { 'process.env.NODE_ENV': '"development"' },
    plugins: inRepository ? [proceedSources] : [],
    absWorkingDir: inRepository ? repository : blogDirectory,
    metafile: true,
    write: false,
    logLevel: 'silent',
  });
  const script = result.outputFiles[0]?.text;
  if (script === undefined) throw new Error('esbuild wrote no bundle');
  return { script, inputs: Object.keys(result.metafile.inputs) };
}

function html(config: PageConfig): string {
  // `<` escaped: nothing in the JSON can close the script element.
  const json = JSON.stringify(config).replaceAll('<', '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Posts</title>
<link rel="icon" href="data:,">
<style>.post { height: 160px; }</style>
</head>
<body>
<div id="root"></div>
<script type="application/json" id="config">${json}</script>
<script type="module" src="/page.js"></script>
</body>
</html>`;
}

/** The query of every GET /api/posts the page sends, in order. */
function watchFeedRequests(page: Page, origin: string): Record<string, string>[] {
  const queries: Record<string, string>[] = [];
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (request.method() === 'GET' && url.origin === origin && url.pathname === '/api/posts')
      queries.push(Object.fromEntries(url.searchParams));
  });
  return queries;
}

describe.skipIf(skipBrowserSuite('the blog TanStack Query browser test'))(
  'a React page with TanStack Query on the blog, in Chromium',
  () => {
    let server: Server;
    let pageOrigin: string;
    let blog: Blog;
    let writer: Session;
    let served: { script: string; config: PageConfig } | undefined;

    beforeAll(async () => {
      const { script, inputs } = await bundlePage();
      // In the repository the page must run the framework's sources, as every other test does,
      // not a stale dist/.
      if (inRepository) {
        expect(inputs).toContain('src/tanstack-query/index.ts');
        expect(inputs).toContain('src/client/index.ts');
        expect(inputs.filter((input) => input.startsWith('dist/'))).toEqual([]);
      }

      server = createServer((request, response) => {
        if (served === undefined) {
          response.writeHead(503).end();
        } else if (request.url === '/') {
          response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          response.end(html(served.config));
        } else if (request.url === '/page.js') {
          response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
          response.end(served.script);
        } else {
          response.writeHead(404).end();
        }
      }).listen(0, '127.0.0.1');
      await once(server, 'listening');
      // The same host under another name is another origin to the browser.
      pageOrigin = `http://localhost:${(server.address() as AddressInfo).port}`;
      blog = new Blog(pglite, { corsOrigins: [pageOrigin] });
      await blog.start();
      writer = await blog.register({ name: 'Browser Writer' });
      // One at a time: ids grow with creation, and the feed is newest first.
      for (const title of seeded) await blog.createPost(writer.accessToken, { title, status: 'published' });
      served = { script, config: { api: blog.origin, limit, token: writer.accessToken } };
    });
    afterAll(async () => {
      await blog?.stop();
      server?.close();
    });

    it('shows the feed, loads its second page on scrolling, and shows a published post after invalidation', {
      timeout: 30_000,
    }, async () => {
      const client = blog.client(writer.accessToken);
      const first = await client.posts.listPosts({ limit });
      const newest = [...seeded].reverse();
      expect(first.data.map((post) => post.title)).toEqual(newest.slice(0, limit));
      expect(first.nextCursor).toBe(first.data.at(-1)?.id);
      const second = await client.posts.listPosts({ limit, cursor: first.nextCursor ?? '' });
      expect(second.data.map((post) => post.title)).toEqual(newest.slice(limit));
      expect(second.nextCursor).toBeNull();

      const browser = await launchChromium();
      try {
        const { page, requested, pageErrors, consoleErrors } = await watchedPage(browser);
        const feedRequests = watchFeedRequests(page, blog.origin);
        const titles = page.locator('#posts > li');
        const poll = { timeout: 10_000 };

        await page.goto(pageOrigin);
        await expect.poll(() => titles.allTextContents(), poll).toEqual(newest.slice(0, limit));

        // The end of the list is below the fold: nothing but scrolling asks for the next page.
        const viewport = page.viewportSize();
        const end = await page.locator('#end').boundingBox();
        expect(viewport).not.toBeNull();
        expect(end?.y).toBeGreaterThan(viewport?.height ?? 0);
        expect(feedRequests).toEqual([{ limit: String(limit) }]);

        await page.mouse.move(100, 100);
        await page.mouse.wheel(0, 2_000);
        await expect.poll(() => titles.allTextContents(), poll).toEqual(newest);
        expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(0);
        expect(feedRequests).toEqual([
          { limit: String(limit) },
          { limit: String(limit), cursor: first.nextCursor, direction: 'forward' },
        ]);

        const title = 'Published from the React page';
        await page.getByLabel('Title').fill(title);
        await page.getByRole('button', { name: 'Publish' }).click();
        await expect.poll(() => titles.allTextContents(), poll).toEqual([title, ...newest]);
        // onSuccess returns the invalidation: once the button is back, every refetch is done.
        await page.locator('button[type="submit"]:enabled').waitFor({ timeout: 10_000 });

        // Both loaded pages were fetched again, the second after the new first page's last post.
        const refetched = await client.posts.listPosts({ limit });
        expect(refetched.data[0]?.title).toBe(title);
        expect(feedRequests.slice(2)).toEqual([
          { limit: String(limit) },
          { limit: String(limit), cursor: refetched.nextCursor, direction: 'forward' },
        ]);
        expect(refetched.nextCursor).not.toBe(first.nextCursor);

        expect(await page.getByRole('alert').count()).toBe(0);
        expect(pageErrors).toEqual([]);
        expect(consoleErrors).toEqual([]);
        const origins = [`${pageOrigin}/`, `${blog.origin}/`, 'data:'];
        expect(requested.filter((url) => !origins.some((origin) => url.startsWith(origin)))).toEqual([]);
      } finally {
        await browser.close();
      }
    });
  },
);
