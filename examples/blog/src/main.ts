/**
 * The blog's entry for the CLI: `proceed start dist/main.js` (what `npm start` runs), `proceed
 * dev src/main.ts`. It checks the settings first and loads the app's modules (Fastify, Zod, a
 * database driver) only once they pass, so that a refusal comes at once.
 */
import type { App, EntryContext } from 'proceedjs';
import type { BlogContext } from './context.js';
import { type BlogOptions, readSettings } from './settings.js';
import { startTelemetry, telemetryWanted } from './telemetry.js';

export default async function blog(entry?: EntryContext): Promise<App<BlogContext>> {
  // routes, openapi and manifest only read the app: no database is opened for them.
  const options: BlogOptions = {
    inspect: entry?.serve === false,
    workers: entry?.workers ?? 1,
    clustered: entry?.clustered ?? false,
  };
  readSettings(options);
  // Before the app's modules: the driver's instrumentation must see it loaded.
  const telemetry =
    options.inspect !== true && telemetryWanted(process.env) ? await startTelemetry() : undefined;
  const { createBlogApp } = await import('./app.js');
  return createBlogApp({ ...options, ...(telemetry === undefined ? {} : { telemetry }) });
}
