/**
 * The blog's documentation UI in a real browser: Debian's Chromium drives Swagger UI against the
 * blog on a real socket, and "Try it out" on GET /api/posts must reach the API and show 200.
 * Skipped on a machine without /usr/bin/chromium; under CI=true a missing Chromium fails.
 */
import { mkdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { launchChromium, skipBrowserSuite } from './browser.js';
import { type CursorPage, engines, type PostView, useBlog } from './harness.js';

const [pglite] = engines();
if (pglite === undefined) throw new Error('No PGlite engine');

describe.skipIf(skipBrowserSuite('the blog docs browser test'))('the blog’s docs UI in Chromium', () => {
  const blog = useBlog(pglite);

  it('lists the posts operations and runs "Try it out" on GET /api/posts', { timeout: 60_000 }, async () => {
    const writer = await blog.register();
    const post = await blog.createPost(writer.accessToken, {
      title: 'Seen in the browser',
      status: 'published',
    });

    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const requested: string[] = [];
      const pageErrors: string[] = [];
      page.on('request', (request) => requested.push(request.url()));
      page.on('pageerror', (error) => pageErrors.push(error.message));

      const response = await page.goto(`${blog.origin}/api/docs`);
      expect(response?.status()).toBe(200);

      const list = page.locator('#operations-posts-listPosts');
      await list.waitFor({ timeout: 20_000 });
      for (const id of ['createPost', 'getPost', 'updatePost', 'deletePost', 'publishPost', 'archivePost']) {
        expect(await page.locator(`#operations-posts-${id}`).count(), id).toBe(1);
      }
      for (const id of ['auth-login', 'auth-register', 'users-listUsers', 'users-getUser']) {
        expect(await page.locator(`#operations-${id}`).count(), id).toBe(1);
      }
      expect(await page.locator('.btn.authorize').count()).toBe(1);

      // "Try it out" → "Execute", then read the live answer Swagger UI shows.
      await list.locator('.opblock-summary').first().click();
      await list.locator('button.try-out__btn').click();
      await list.locator('button.execute').click();
      const status = list.locator('.live-responses-table .response .response-col_status').first();
      await status.waitFor({ timeout: 20_000 });
      expect((await status.textContent())?.trim()).toBe('200');
      const body = await list
        .locator('.live-responses-table .response-col_description pre')
        .first()
        .textContent();
      const shown = JSON.parse(body ?? '') as CursorPage<PostView>;
      expect(shown.data).toContainEqual({ id: post.id, title: 'Seen in the browser', excerpt: post.excerpt });

      mkdirSync('test-results', { recursive: true });
      await page.screenshot({ path: 'test-results/blog-docs.png', fullPage: true });

      expect(pageErrors).toEqual([]);
      // Every script, stylesheet and call came from the blog itself: no CDN.
      expect(requested.filter((url) => !url.startsWith(blog.origin) && !url.startsWith('data:'))).toEqual([]);
      expect(requested.some((url) => url.startsWith(`${blog.origin}/api/posts`))).toBe(true);
    } finally {
      await browser.close();
    }
  });
});
