/** `proceed manifest`: the route manifest `createClient({ routes })` takes. */
import { type RouteManifest, routeManifest } from '../client/manifest.js';
import { CliError } from './errors.js';
import { withApp, writeOutput } from './output.js';
import { commands, parseCommand } from './usage.js';

/**
 * Runs `proceed manifest [entry] [--out FILE] [--prefix P]`: JSON, or a TypeScript module when FILE
 * ends in `.ts`.
 *
 * @example
 * await manifestCommand(['--out', 'web/src/routes.json']);
 */
export async function manifestCommand(args: readonly string[]): Promise<void> {
  const { values, entry } = parseCommand(commands.manifest, args);
  const manifest = await withApp('manifest', entry, (app) => {
    try {
      return routeManifest(app, values.prefix === undefined ? {} : { prefix: values.prefix });
    } catch (error) {
      throw new CliError((error as Error).message);
    }
  });
  const routes = Object.values(manifest).reduce(
    (count, collection) => count + Object.keys(collection).length,
    0,
  );
  const text =
    values.out !== undefined && /\.[cm]?ts$/i.test(values.out)
      ? manifestModule(manifest)
      : `${JSON.stringify(manifest, null, 2)}\n`;
  await writeOutput(text, values.out, `${routes} route${routes === 1 ? '' : 's'}`);
}

/**
 * The manifest as a TypeScript module: `as const satisfies RouteManifest` keeps each method and
 * input mode a literal, which a JSON import widens to `string` (docs/client.md).
 *
 * @example
 * writeFileSync('web/src/routes.ts', manifestModule(routeManifest(app)));
 */
export function manifestModule(manifest: RouteManifest): string {
  return [
    '// Written by `proceed manifest`: where each procedure lives, for createClient({ routes }).',
    '// Generate it again after changing a route; do not edit it.',
    "import type { RouteManifest } from 'proceedjs/client';",
    '',
    `export default ${JSON.stringify(manifest, null, 2)} as const satisfies RouteManifest;`,
    '',
  ].join('\n');
}
