/**
 * The documentation UI in a real browser: Debian's Chromium (CI installs it with apt) drives
 * Swagger UI against the notes fixture on a real socket, and "Try it out" must reach the API.
 * The page must keep to its Content-Security-Policy, show the API's title, and put padlocks only
 * where a token is required (docs/openapi.md).
 */
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authorize,
  launchChromium,
  padlocks,
  policyDirectives,
  skipBrowserSuite,
  tryItOut,
  watchedPage,
} from '../../test/browser.js';
import { notesApp } from '../../test/fixtures/notes.js';
import { docsPlugin } from './plugin.js';

describe.skipIf(skipBrowserSuite('the docs UI browser test'))('the docs UI in Chromium', () => {
  const app = notesApp();
  let origin = '';

  beforeAll(async () => {
    // What the auth plugin documents: unguarded routes read a token when one is sent. The notes
    // then have all three kinds of route: guarded (deleteNote), optional token, and no token (health).
    app.document({ bearer: 'optional' });
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
      const { page, requested, pageErrors, consoleErrors, cspViolations } = await watchedPage(browser);

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
      expect(consoleErrors).toEqual([]);
      expect(cspViolations).toEqual([]);
      // Every script, stylesheet and call came from this server: no CDN.
      expect(requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'))).toEqual(
        [],
      );
      expect(requested).toContain(`${origin}/api/notes?limit=20`);
    } finally {
      await browser.close();
    }
  });

  it('sends a same-origin policy and shows the API’s title, without the Fastify logo', async () => {
    const browser = await launchChromium();
    try {
      const { page, requested, consoleErrors, cspViolations } = await watchedPage(browser);
      const response = await page.goto(`${origin}/api/docs`);
      await page.locator('#operations-notes-listNotes').waitFor({ timeout: 15_000 });

      const policy = response?.headers()['content-security-policy'];
      const directives = policyDirectives(policy);
      expect(policy).not.toMatch(/https?:/);
      expect(policy).not.toContain('unsafe-');
      expect(directives['upgrade-insecure-requests']).toBeUndefined();
      expect(directives['frame-ancestors']).toEqual(["'none'"]);
      expect(directives['default-src']).toEqual(["'self'"]);
      expect(directives['script-src']).toEqual(["'self'"]);
      expect(directives['style-src']).toEqual(["'self'"]);
      // No host anywhere: only the origin, and data: for Swagger UI's icons in its stylesheet.
      expect(new Set(Object.values(directives).flat())).toEqual(new Set(["'self'", "'none'", 'data:']));
      expect(Object.keys(directives).filter((name) => directives[name]?.includes('data:'))).toEqual([
        'img-src',
      ]);

      const topbar = page.locator('.topbar');
      await expect(topbar.innerText()).resolves.toBe('Notes API');
      expect(await topbar.locator('img, a, input').count()).toBe(0);
      expect(requested.filter((url) => /favicon-\d+x\d+\.png|logo\.svg/.test(url))).toEqual([]);

      // The validator badge would send the document's URL to another host.
      const initializer = await page.request.get(`${origin}/api/docs/static/swagger-initializer.js`);
      expect(await initializer.text()).toContain('validatorUrl: null');

      expect(consoleErrors).toEqual([]);
      expect(cspViolations).toEqual([]);
      expect(requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'))).toEqual(
        [],
      );
    } finally {
      await browser.close();
    }
  });

  it('shows a padlock where a token is required only, and sends the token to optional routes too', async () => {
    const browser = await launchChromium();
    try {
      const { page, consoleErrors, cspViolations } = await watchedPage(browser);
      await page.goto(`${origin}/api/docs`);
      const list = page.locator('#operations-notes-listNotes');
      await list.waitFor({ timeout: 15_000 });

      const none = {
        'operations-notes-listNotes': 'none',
        'operations-notes-createNote': 'none',
        'operations-notes-getNote': 'none',
        'operations-notes-updateNote': 'none',
        'operations-notes-pinNote': 'none',
        'operations-notes-broken': 'none',
        'operations-health-health': 'none',
        'operations-health-healthLive': 'none',
      };
      expect(await padlocks(page)).toEqual({ ...none, 'operations-notes-deleteNote': 'unlocked' });

      await authorize(page, 'a-token');
      expect(await padlocks(page)).toEqual({ ...none, 'operations-notes-deleteNote': 'locked' });

      // listNotes shows no padlock, yet reads a token when one is sent: the UI sends it.
      const sent = page.waitForRequest((request) => request.url().startsWith(`${origin}/api/notes?`));
      expect((await tryItOut(list)).status).toBe('200');
      expect((await sent).headers().authorization).toBe('Bearer a-token');
      // The health route reads no token (`security: []`): none is sent.
      const probe = page.waitForRequest((request) => request.url() === `${origin}/api/health`);
      expect((await tryItOut(page.locator('#operations-health-health'))).status).toBe('200');
      expect((await probe).headers().authorization).toBeUndefined();

      expect(consoleErrors).toEqual([]);
      expect(cspViolations).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
