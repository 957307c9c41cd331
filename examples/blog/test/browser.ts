/**
 * Debian's Chromium for the docs UI test (CI installs it with apt; no browser is downloaded).
 * Without it the suite is skipped with a message, except under CI=true, where it must fail.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

const chromiumPath = '/usr/bin/chromium';

/** Whether the browser suite should be skipped here; says why. */
export function skipBrowserSuite(suite: string): boolean {
  if (existsSync(chromiumPath) || process.env.CI === 'true') return false;
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
