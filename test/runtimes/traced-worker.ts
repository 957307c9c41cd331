/**
 * The traced app (test/fixtures/traced-app.ts) as a Cloudflare Worker: `wrangler dev`
 * (test/runtimes/traced-wrangler.jsonc) bundles it and serves it on workerd, where the runtimes
 * suite of src/opentelemetry sends its requests over a real socket.
 */
import { tracedFetch } from '../fixtures/traced-app.js';

export default { fetch: (request: Request): Promise<Response> => tracedFetch(request) };
