/**
 * The compiled blog (examples/blog/dist, `npm run build` first) of this checkout, or of the one
 * BLOG_CHECKOUT names (a built `git worktree` of an older commit), on the PostgreSQL database
 * DATABASE_URL names, for `npm run bench:duel`: two blogs, old and new, side by side on one
 * database. The first to start seeds it (one author, 60 published posts); each announces a token
 * of that author and the newest post's id.
 */
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { announce } from './announce.js';

const databaseUrl = process.env.DATABASE_URL;
if (databaseUrl === undefined)
  throw new Error('bench/servers/blog.ts runs on DATABASE_URL (a scratch database)');
const checkout = process.env.BLOG_CHECKOUT ?? fileURLToPath(new URL('../..', import.meta.url));
const appModule = pathToFileURL(join(checkout, 'examples/blog/dist/app.js')).href;
const { createBlogApp } = (await import(appModule)) as typeof import('../../examples/blog/src/app.js');

const app = await createBlogApp({
  databaseUrl,
  // Both blogs of a duel share the secret only if they are told one; each uses its own token.
  jwtSecret: process.env.JWT_SECRET ?? 'a bench secret of at least thirty-two characters',
  logger: { level: process.env.BENCH_LOG_LEVEL ?? 'warn' },
  // Each start of a duel signs in again.
  authRateLimit: 1000,
});
const address = await app.listen({ port: 0, host: '127.0.0.1' });

const json = { 'content-type': 'application/json' };
const account = { email: 'bench@example.com', password: 'a bench password', name: 'Bench' };

async function post(path: string, body: unknown, token?: string): Promise<Response> {
  return fetch(`${address}${path}`, {
    method: 'POST',
    headers: token === undefined ? json : { ...json, authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
}

const credentials = { email: account.email, password: account.password };
let login = await post('/api/auth/login', credentials);
if (login.status === 401) {
  const registered = await post('/api/auth/register', account);
  const { accessToken } = (await registered.json()) as { accessToken: string };
  for (let index = 0; index < 60; index++) {
    await post(
      '/api/posts',
      { title: `Post ${index}`, content: `The body of post ${index}.`, status: 'published' },
      accessToken,
    );
  }
  login = await post('/api/auth/login', credentials);
}
const { accessToken: token } = (await login.json()) as { accessToken: string };
const feed = (await (await fetch(`${address}/api/posts?limit=1`)).json()) as { data: { id: string }[] };
announce({ address, token, postId: feed.data[0]?.id ?? '' });
