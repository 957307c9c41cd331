/**
 * Debian's Chromium for the browser tests (CI installs it with apt; no browser is downloaded).
 * Without it a suite is skipped with a message, except under CI=true, where it must fail.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

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
