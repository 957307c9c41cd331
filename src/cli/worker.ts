/**
 * A worker process of `proceed start --workers N` (workers.ts starts it through node:cluster):
 * loads the app and listens on the port every worker shares. Arguments: <entry> <port> <host>
 * <workers>; `PROCEED_WORKER` is its number, 1 to N, and `PROCEED_WORKERS` is N. A failure is printed and ends the process,
 * which the primary reports.
 */
import cluster from 'node:cluster';
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
  const app = await loadApp(entry, {
    command: 'start',
    serve: true,
    workers: Number(workers),
    clustered: true,
  });
  // One route table for the whole cluster, not one per worker.
  await serve(app, { port: Number(port), host }, { logRoutes: process.env.PROCEED_WORKER === '1' });
  // The primary is gone without stopping us (killed outright). Node would end this worker at
  // once, cutting the requests in flight; a disconnect marked as expected lets it drain as on
  // SIGTERM instead. (The listening socket was the primary's: no new connection comes.)
  const worker = cluster.worker;
  worker?.once('disconnect', () => {
    worker.exitedAfterDisconnect = true;
    process.kill(process.pid, 'SIGTERM');
  });
} catch (error) {
  process.exit(reportFailure(error));
}
