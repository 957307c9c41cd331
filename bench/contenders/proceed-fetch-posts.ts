/**
 * The Proceed app of bench/servers/proceed-posts.ts served through `app.fetch` on Node, with the
 * Node-to-Fetch bridge Hono uses (`@hono/node-server`): what a user who picks the Fetch handler
 * on Node gets, side by side with Hono on the same bridge.
 */
import { serve } from '@hono/node-server';
import { announce } from '../servers/announce.js';
import { accessToken, app } from '../servers/proceed-posts.js';

await app.fetch(new Request('http://127.0.0.1/api/health'));
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
  announce({ address: `http://127.0.0.1:${info.port}`, token: accessToken });
});
process.once('SIGTERM', () => server.close(() => void app.close().then(() => process.exit(0))));
