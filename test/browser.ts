/**
 * Debian's Chromium for the browser tests (CI installs it with apt; no browser is downloaded).
 * Without it a suite is skipped with a message, except under CI=true, where it must fail.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';

export const chromiumPath = '/usr/bin/chromium';
const available = existsSync(chromiumPath);
const inCi = process.env.CI === 'true';

/** Whether a browser suite should be skipped here; says why once. */
export function skipBrowserSuite(suite: string): boolean {
  if (available || inCi) return false;
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

/** A new page that records every URL it requests and every script error it meets. */
export async function watchedPage(
  browser: Browser,
): Promise<{ page: Page; requested: string[]; pageErrors: string[] }> {
  const page = await browser.newPage();
  const requested: string[] = [];
  const pageErrors: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  page.on('pageerror', (error) => pageErrors.push(error.message));
  return { page, requested, pageErrors };
}
