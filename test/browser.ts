/**
 * Debian's Chromium for the browser tests (CI installs it with apt; no browser is downloaded).
 * Without it a suite is skipped with a message, except under CI=true, where it must fail.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { inCi } from './ci.js';

export const chromiumPath = '/usr/bin/chromium';
const available = existsSync(chromiumPath);

/** Whether a browser suite should be skipped here; says why once. */
export function skipBrowserSuite(suite: string): boolean {
  if (available || inCi()) return false;
  console.warn(`Skipping ${suite}: no Chromium at ${chromiumPath} (apt-get install -y chromium)`);
  return true;
}

/** Launches headless Chromium with the flags this workplace's closed network needs. */
export function launchChromium(): Promise<Browser> {
  if (!available)
    throw new Error(`The browser tests need Chromium at ${chromiumPath}: apt-get install -y chromium`);
  return chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** Expands a Swagger UI operation, runs "Try it out" → "Execute", and reads the live answer. */
export async function tryItOut(
  operation: Locator,
  timeout = 20_000,
): Promise<{ status: string; body: unknown }> {
  await operation.locator('.opblock-summary').first().click();
  await operation.locator('button.try-out__btn').click();
  await operation.locator('button.execute').click();
  const status = operation.locator('.live-responses-table .response .response-col_status').first();
  await status.waitFor({ timeout });
  const body = await operation
    .locator('.live-responses-table .response-col_description pre')
    .first()
    .textContent();
  return { status: (await status.textContent())?.trim() ?? '', body: JSON.parse(body ?? '') };
}

/** What a watched page saw: every URL it requested, script errors, console errors, CSP violations. */
export interface WatchedPage {
  page: Page;
  requested: string[];
  pageErrors: string[];
  consoleErrors: string[];
  cspViolations: string[];
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
