/**
 * A worker process of `proceed start --workers N` (workers.ts starts it through node:cluster):
 * loads the app and listens on the port every worker shares. Arguments: <entry> <port> <host>
 * <workers>; `PROCEED_WORKER` is its number, 1 to N. A failure is printed and ends the process,
 * which the primary reports.
 */
import { loadApp } from './entry.js';
import { reportFailure } from './errors.js';
import { serve } from './start.js';
import { isTypeScript, typescriptLoaded } from './typescript.js';

const [entry, port, host, workers] = process.argv.slice(2);
// The primary starts workers of a TypeScript entry with tsx.
if (entry !== undefined && isTypeScript(entry)) typescriptLoaded();

try {
  if (entry === undefined || port === undefined || host === undefined || workers === undefined) {
    throw new Error('usage: worker <entry> <port> <host> <workers>');
  }
  const app = await loadApp(entry, { command: 'start', serve: true, workers: Number(workers) });
  // One route table for the whole cluster, not one per worker.
  await serve(app, { port: Number(port), host }, { logRoutes: process.env.PROCEED_WORKER === '1' });
  // The primary is gone without stopping us (it was killed): drain and exit as on SIGTERM.
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
} catch (error) {
  process.exit(reportFailure(error));
}
