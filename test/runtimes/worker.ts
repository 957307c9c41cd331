/**
 * The conformance app as a Cloudflare Worker: `app.fetch` is the Worker's `fetch`, as
 * docs/deployment.md shows. `wrangler dev` (test/runtimes/wrangler.jsonc) bundles it and serves it
 * on workerd, and the suite sends its requests there over a real socket. `GET /refusals` answers
 * what the app refused at start-up because Workers cannot run it.
 */
import { metricsPlugin } from 'proceedjs/metrics';
import { docsPlugin } from 'proceedjs/openapi';
import { buildConformanceApp } from '../fixtures/conformance-app.js';

const app = await buildConformanceApp();
const refusals: string[] = [];
try {
  app.server.get('/raw/hello', async () => 'hello');
} catch (error) {
  refusals.push((error as Error).message);
}
for (const attempt of [
  () => app.listen(),
  () => app.register(docsPlugin, { openapi: { info: { title: 'Notes', version: '1' } } }),
  () => app.register(metricsPlugin, { port: 9464 }),
])
  await attempt().catch((error: Error) => refusals.push(error.message));

export default {
  fetch: (request: Request): Promise<Response> =>
    new URL(request.url).pathname === '/refusals'
      ? Promise.resolve(Response.json(refusals))
      : app.fetch(request),
};
