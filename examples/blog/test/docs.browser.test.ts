/**
 * The blog's documentation UI in a real browser: Debian's Chromium drives Swagger UI against the
 * blog on a real socket, and "Try it out" on GET /api/posts must reach the API and show 200. The
 * page keeps to its same-origin Content-Security-Policy, shows the blog's title, and puts a
 * padlock on the routes that require a token only; after Authorize, the token also reaches the
 * routes where it is optional (an author reads their own draft). An author uploads a file through
 * the picker Swagger UI draws for POST /api/posts/{id}/attachments, and the blog stores its bytes
 * and name.
 * Skipped on a machine without /usr/bin/chromium; under CI=true a missing Chromium fails.
 */
import { mkdirSync } from 'node:fs';
import type { Locator } from 'playwright-core';
import type { OpenApiDocument } from 'proceedjs/openapi';
import { describe, expect, it } from 'vitest';
import {
  authorize,
  expectQuietPage,
  launchChromium,
  padlocks,
  policyDirectives,
  skipBrowserSuite,
  watchedPage,
} from './browser.js';
import { type CursorPage, engines, type PostView, useBlog } from './harness.js';
import { blogRuntime } from './runtimes.js';

const [pglite] = engines();
if (pglite === undefined) throw new Error('No PGlite engine');

/**
 * The padlock each operation should show: one where every security requirement names a scheme
 * (a token is required), none where a requirement is empty (`{}`: a token is optional) or there
 * is no requirement at all.
 */
function expectedPadlocks(document: OpenApiDocument, authorized: boolean): Record<string, string> {
  const expected: Record<string, string> = {};
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item ?? {})) {
      if (typeof operation !== 'object' || operation === null || !('operationId' in operation)) continue;
      const { operationId, tags, security } = operation as {
        operationId: string;
        tags?: string[];
        security?: Record<string, string[]>[];
      };
      const requirements = security ?? [];
      const required =
        requirements.length > 0 && requirements.every((requirement) => Object.keys(requirement).length > 0);
      expected[`operations-${tags?.[0]}-${operationId}`] = required
        ? authorized
          ? 'locked'
          : 'unlocked'
        : 'none';
    }
  }
  return expected;
}

/** "Try it out" → "Execute" on an operation, with path parameters; the status and body shown. */
async function tryItOut(
  operation: Locator,
  parameters: Record<string, string> = {},
): Promise<{ status: string; body: unknown }> {
  await operation.locator('.opblock-summary').first().click();
  await operation.locator('button.try-out__btn').click();
  for (const [name, value] of Object.entries(parameters)) {
    await operation.locator(`tr[data-param-name="${name}"] input`).fill(value);
  }
  await operation.locator('button.execute').click();
  return liveAnswer(operation);
}

/** The status and JSON body Swagger UI shows under an operation once "Execute" has answered. */
async function liveAnswer(operation: Locator): Promise<{ status: string; body: unknown }> {
  const status = operation.locator('.live-responses-table .response .response-col_status').first();
  await status.waitFor({ timeout: 20_000 });
  const body = await operation
    .locator('.live-responses-table .response-col_description pre')
    .first()
    .textContent();
  return { status: (await status.textContent())?.trim() ?? '', body: JSON.parse(body ?? '') };
}

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
      const { page, requested, pageErrors, consoleErrors, cspViolations } = await watchedPage(browser);

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

      const answer = await tryItOut(list);
      expect(answer.status).toBe('200');
      const shown = answer.body as CursorPage<PostView>;
      expect(shown.data).toContainEqual({ id: post.id, title: 'Seen in the browser', excerpt: post.excerpt });

      mkdirSync('test-results', { recursive: true });
      await page.screenshot({ path: 'test-results/blog-docs.png', fullPage: true });

      // No error, no CSP violation, and every script, stylesheet and call from the blog itself.
      expectQuietPage({ requested, pageErrors, consoleErrors, cspViolations }, blog.origin);
      expect(requested.some((url) => url.startsWith(`${blog.origin}/api/posts`))).toBe(true);
    } finally {
      await browser.close();
    }
  });

  it('sends a same-origin policy and shows the blog’s title, without the Fastify logo', {
    timeout: 60_000,
  }, async () => {
    const browser = await launchChromium();
    try {
      const { page, requested, pageErrors, consoleErrors, cspViolations } = await watchedPage(browser);
      const response = await page.goto(`${blog.origin}/api/docs`);
      await page.locator('#operations-posts-listPosts').waitFor({ timeout: 20_000 });

      const policy = response?.headers()['content-security-policy'];
      const directives = policyDirectives(policy);
      expect(policy).not.toMatch(/https?:/);
      expect(policy).not.toContain('unsafe-');
      expect(directives['upgrade-insecure-requests']).toBeUndefined();
      expect(directives['frame-ancestors']).toEqual(["'none'"]);
      expect(directives['script-src']).toEqual(["'self'"]);
      expect(directives['style-src']).toEqual(["'self'"]);
      // No host anywhere: only the origin, and data: for Swagger UI's icons in its stylesheet.
      expect(new Set(Object.values(directives).flat())).toEqual(new Set(["'self'", "'none'", 'data:']));

      const topbar = page.locator('.topbar');
      await expect(topbar.innerText()).resolves.toBe('Proceed blog API');
      expect(await topbar.locator('img, a, input').count()).toBe(0);
      expect(requested.filter((url) => /favicon-\d+x\d+\.png|logo\.svg/.test(url))).toEqual([]);

      // No error, no CSP violation, and every script, stylesheet and call from the blog itself.
      expectQuietPage({ requested, pageErrors, consoleErrors, cspViolations }, blog.origin);
    } finally {
      await browser.close();
    }
  });

  // What Swagger UI draws from the document and keeps in the page: on Node only, since every
  // runtime serves the same document (openapi.test.ts); the calls through the runtime are the
  // other tests'.
  it.skipIf(blogRuntime() !== undefined)(
    'puts a padlock on the routes that require a token; Authorize also serves optional ones',
    {
      timeout: 60_000,
    },
    async () => {
      const writer = await blog.register();
      const draft = await blog.createPost(writer.accessToken, {
        title: 'Only its author sees it',
        status: 'draft',
      });
      const document = blog.instance.document;

      const browser = await launchChromium();
      try {
        const { page, requested, pageErrors, consoleErrors, cspViolations } = await watchedPage(browser);
        await page.goto(`${blog.origin}/api/docs`);
        const getPost = page.locator('#operations-posts-getPost');
        await getPost.waitFor({ timeout: 20_000 });

        const before = await padlocks(page);
        expect(before).toEqual(expectedPadlocks(document, false));
        // The three kinds of route: required, optional (bearer or nothing) and none (health).
        expect(before).toMatchObject({
          'operations-posts-createPost': 'unlocked',
          'operations-posts-getPost': 'none',
          'operations-health-health': 'none',
        });
        expect(document.paths['/api/posts/{id}']?.get?.security).toEqual([{ bearerAuth: [] }, {}]);

        await authorize(page, writer.accessToken);
        const after = await padlocks(page);
        expect(after).toEqual(expectedPadlocks(document, true));
        expect(after).toMatchObject({
          'operations-posts-createPost': 'locked',
          'operations-posts-getPost': 'none',
          'operations-health-health': 'none',
        });

        // No padlock on GET /api/posts/{id}, yet the token goes with it: the draft is its author's.
        const sent = page.waitForRequest(
          (request) => request.url() === `${blog.origin}/api/posts/${draft.id}`,
        );
        const answer = await tryItOut(getPost, { id: draft.id });
        expect((await sent).headers().authorization).toBe(`Bearer ${writer.accessToken}`);
        expect(answer.status).toBe('200');
        expect(answer.body).toMatchObject({ id: draft.id, title: 'Only its author sees it' });

        // No error, no CSP violation, and every script, stylesheet and call from the blog itself.
        expectQuietPage({ requested, pageErrors, consoleErrors, cspViolations }, blog.origin);
      } finally {
        await browser.close();
      }
    },
  );

  it('uploads a file with a non-ASCII name through the picker on POST /api/posts/{id}/attachments', {
    timeout: 60_000,
  }, async () => {
    const writer = await blog.register();
    const post = await blog.createPost(writer.accessToken, { title: 'With a file', status: 'published' });
    const name = 'Grüße – résumé.txt';
    // Every byte value, so that a text round trip of the upload would show.
    const bytes = Buffer.from([
      ...Buffer.from('Grüße, résumé – ', 'utf8'),
      ...Array.from({ length: 256 }, (_, index) => index),
    ]);

    // What makes Swagger UI draw a file picker: a multipart body whose `file` is a binary string.
    const upload = blog.instance.document.paths['/api/posts/{id}/attachments']?.post;
    expect(upload?.requestBody).toMatchObject({
      content: {
        'multipart/form-data': {
          schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' } } },
        },
      },
    });

    const browser = await launchChromium();
    try {
      const { page, requested, pageErrors, consoleErrors, cspViolations } = await watchedPage(browser);
      await page.goto(`${blog.origin}/api/docs`);
      const operation = page.locator('#operations-posts-createAttachment');
      await operation.waitFor({ timeout: 20_000 });
      await authorize(page, writer.accessToken);

      await operation.locator('.opblock-summary').first().click();
      await operation.locator('button.try-out__btn').click();
      await operation.locator('tr[data-param-name="id"] input').fill(post.id);
      const picker = operation.locator('tr[data-property-name="file"] input[type="file"]');
      await expect(picker.count()).resolves.toBe(1);
      await picker.setInputFiles({ name, mimeType: 'text/plain', buffer: bytes });

      const sent = page.waitForRequest(
        (request) =>
          request.method() === 'POST' && request.url() === `${blog.origin}/api/posts/${post.id}/attachments`,
      );
      await operation.locator('button.execute').click();
      const request = await sent;
      expect(request.headers().authorization).toBe(`Bearer ${writer.accessToken}`);
      expect(request.headers()['content-type']).toMatch(/^multipart\/form-data; boundary=/);

      const answer = await liveAnswer(operation);
      expect(answer.status).toBe('201');
      const stored = answer.body as { id: string; name: string; mediaType: string; size: number };
      expect(stored).toEqual({
        id: expect.any(String),
        name,
        mediaType: 'text/plain',
        size: bytes.byteLength,
      });
      const downloadPath = `/api/posts/${post.id}/attachments/${stored.id}`;
      expect((await request.response())?.headers().location).toBe(downloadPath);

      // The download, outside the browser: the very bytes, and the name as filename* (RFC 8187).
      const download = await fetch(`${blog.origin}${downloadPath}`);
      expect(download.status).toBe(200);
      expect(Buffer.from(await download.arrayBuffer())).toEqual(bytes);
      const disposition = download.headers.get('content-disposition') ?? '';
      expect(disposition).toMatch(/^attachment; /);
      const extended = /filename\*=UTF-8''([^;\s]+)/.exec(disposition)?.[1];
      expect(decodeURIComponent(extended ?? '')).toBe(name);

      // No error, no CSP violation, and every script, stylesheet and call from the blog itself.
      expectQuietPage({ requested, pageErrors, consoleErrors, cspViolations }, blog.origin);
    } finally {
      await browser.close();
    }
  });
});
