/**
 * Debian's Chromium for the browser tests (CI installs it with apt; no browser is downloaded).
 * Without it a suite is skipped with a message, except under CI=true, where it must fail. The
 * helpers read what Swagger UI shows; the framework's own tests have the same in test/browser.ts.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { inCi } from './ci.js';

const chromiumPath = '/usr/bin/chromium';

/** Whether the browser suite should be skipped here; says why. */
export function skipBrowserSuite(suite: string): boolean {
  if (existsSync(chromiumPath) || inCi()) return false;
  console.warn(`Skipping ${suite}: no Chromium at ${chromiumPath} (apt-get install -y chromium)`);
  return true;
}

/** Headless Chromium with the flags a machine without network access to Google needs. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** What a watched page saw: every URL it requested, script errors, console errors, CSP violations. */
export interface WatchedPage {
  page: Page;
  requested: string[];
  pageErrors: string[];
  consoleErrors: string[];
  cspViolations: string[];
}

/**
 * What a page showing the docs must not have done: a script error, a console error, a CSP
 * violation, or a request anywhere but the blog itself (no CDN).
 */
export function expectQuietPage(watched: Omit<WatchedPage, 'page'>, origin: string): void {
  expect(watched.pageErrors).toEqual([]);
  expect(watched.consoleErrors).toEqual([]);
  expect(watched.cspViolations).toEqual([]);
  expect(
    watched.requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:')),
  ).toEqual([]);
}

/** A new page that records every URL it requests, every error it logs and every CSP violation. */
export async function watchedPage(browser: Browser): Promise<WatchedPage> {
  const page = await browser.newPage();
  const watched: WatchedPage = { page, requested: [], pageErrors: [], consoleErrors: [], cspViolations: [] };
  page.on('request', (request) => watched.requested.push(request.url()));
  page.on('pageerror', (error) => watched.pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') watched.consoleErrors.push(message.text());
  });
  // Chromium also logs a violation as a console error; the event names the directive and the source.
  await page.exposeFunction('reportCspViolation', (violation: string) =>
    watched.cspViolations.push(violation),
  );
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      const report = (window as unknown as { reportCspViolation(violation: string): void })
        .reportCspViolation;
      report(
        `${event.effectiveDirective} refused ${event.blockedURI} (${event.sourceFile}:${event.lineNumber})`,
      );
    });
  });
  return watched;
}

/** A Content-Security-Policy header as directive → sources. */
export function policyDirectives(header: string | undefined): Record<string, string[]> {
  const directives: Record<string, string[]> = {};
  for (const directive of (header ?? '').split(';')) {
    const [name, ...sources] = directive.trim().split(/\s+/);
    if (name !== undefined && name !== '') directives[name] = sources;
  }
  return directives;
}

/** Each operation's padlock in Swagger UI, by the operation's element id: locked, unlocked or none. */
export function padlocks(page: Page): Promise<Record<string, string>> {
  return page.$$eval('.opblock', (blocks) =>
    Object.fromEntries(
      blocks.map((block) => {
        const button = block.querySelector('.opblock-summary .authorization__btn');
        const label = button?.getAttribute('aria-label') ?? 'none';
        return [block.id, label.replace('authorization button ', '')];
      }),
    ),
  );
}

/** Authorizes the bearer scheme with `token` through the Authorize dialog and closes it. */
export async function authorize(page: Page, token: string): Promise<void> {
  await page.locator('.scheme-container .btn.authorize').click();
  const dialog = page.locator('.dialog-ux');
  await dialog.locator('input').first().fill(token);
  await dialog.locator('button.authorize').click();
  await dialog.locator('button.btn-done').click();
  await dialog.waitFor({ state: 'detached' });
}
