/** `proceed manifest`: the route manifest `createClient({ routes })` takes. */
import { routeManifest } from '../client/manifest.js';
import { CliError } from './errors.js';
import { withApp, writeOutput } from './output.js';
import { commands, parseCommand } from './usage.js';

/**
 * Runs `proceed manifest [entry] [--out FILE] [--prefix P]`.
 *
 * @example
 * await manifestCommand(['--out', 'web/src/routes.json']);
 */
export async function manifestCommand(args: readonly string[]): Promise<void> {
  const { values, entry } = parseCommand(commands.manifest, args);
  const manifest = await withApp('manifest', entry, values.out === undefined, (app) => {
    try {
      return routeManifest(app, values.prefix === undefined ? {} : { prefix: values.prefix });
    } catch (error) {
      throw new CliError((error as Error).message);
    }
  });
  await writeOutput(`${JSON.stringify(manifest, null, 2)}\n`, values.out);
}
