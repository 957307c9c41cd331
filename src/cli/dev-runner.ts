/**
 * The child process of `proceed dev`: loads the app, prints its route table and listens.
 * Arguments: <entry> <port> <host>. A failure is printed and ends the process with 1; the
 * parent waits for the next change.
 */
import { loadApp } from './entry.js';
import { reportFailure } from './errors.js';
import { serve } from './start.js';
import { formatRouteTable, routeRows } from './table.js';
import { isTypeScript, typescriptLoaded } from './typescript.js';

const [entry, port, host] = process.argv.slice(2);
// `proceed dev` starts this process with tsx for a TypeScript entry.
if (entry !== undefined && isTypeScript(entry)) typescriptLoaded();

try {
  if (entry === undefined || port === undefined || host === undefined) {
    throw new Error('usage: dev-runner <entry> <port> <host>');
  }
  const app = await loadApp(entry, { command: 'dev', serve: true, workers: 1, clustered: false });
  process.stdout.write(`\n${formatRouteTable(routeRows(app.routes))}\n`);
  // The table above lists the routes already.
  await serve(app, { port: Number(port), host }, { logRoutes: false });
} catch (error) {
  process.exit(reportFailure(error));
}
