// src/worker.ts: the app as a Cloudflare Worker. `npm run dev` serves it on workerd, `npm run
// deploy` publishes it; every request goes to app.fetch.
import app from './app.js';

export default { fetch: app.fetch };
