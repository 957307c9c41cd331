/**
 * The documentation UI in a real browser: Debian's Chromium (CI installs it with apt) drives
 * Swagger UI against the notes fixture on a real socket, and "Try it out" must reach the API.
 */
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, skipBrowserSuite, tryItOut, watchedPage } from '../../test/browser.js';
import { notesApp } from '../../test/fixtures/notes.js';
import { docsPlugin } from './plugin.js';

describe.skipIf(skipBrowserSuite('the docs UI browser test'))('the docs UI in Chromium', () => {
  const app = notesApp();
  let origin = '';

  beforeAll(async () => {
    await app.register(docsPlugin, {
      routePrefix: '/api/docs',
      openapi: { info: { title: 'Notes API', version: '1.0.0' } },
    });
    origin = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
  });

  afterAll(async () => {
    await app.close();
  });

  it('lists the operations and runs "Try it out" on GET /api/notes against this server', async () => {
    const browser = await launchChromium();
    try {
      const { page, requested, pageErrors } = await watchedPage(browser);

      const response = await page.goto(`${origin}/api/docs`);
      expect(response?.status()).toBe(200);

      const list = page.locator('#operations-notes-listNotes');
      await list.waitFor({ timeout: 15_000 });
      for (const id of ['createNote', 'getNote', 'updateNote', 'deleteNote', 'pinNote']) {
        expect(await page.locator(`#operations-notes-${id}`).count(), id).toBe(1);
      }
      await expect(page.locator('.btn.authorize').count()).resolves.toBe(1);

      const answer = await tryItOut(list);
      expect(answer.status).toBe('200');
      expect(answer.body).toMatchObject({ data: [{ id: '1', title: 'One' }] });

      mkdirSync('test-results', { recursive: true });
      await page.screenshot({ path: 'test-results/docs-ui.png', fullPage: true });

      expect(pageErrors).toEqual([]);
      // Every script, stylesheet and call came from this server: no CDN.
      expect(requested.filter((url) => !url.startsWith(origin) && !url.startsWith('data:'))).toEqual([]);
      expect(requested).toContain(`${origin}/api/notes?limit=20`);
    } finally {
      await browser.close();
    }
  });
});
