/** `proceed routes`: the route table, without listening. */
import { withApp, writeOutput } from './output.js';
import { formatRouteTable, routeRows } from './table.js';
import { commands, parseCommand } from './usage.js';

/**
 * Runs `proceed routes [entry] [--json]`.
 *
 * @example
 * await routesCommand(['examples/minimal/src/app.ts', '--json']);
 */
export async function routesCommand(args: readonly string[]): Promise<void> {
  const { values, entry } = parseCommand(commands.routes, args);
  const rows = await withApp('routes', entry, (app) => routeRows(app.routes));
  await writeOutput(
    values.json === true ? `${JSON.stringify(rows, null, 2)}\n` : formatRouteTable(rows),
    undefined,
  );
}
