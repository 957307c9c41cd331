/**
 * Hono on Node (`@hono/node-server`), or on Bun (`Bun.serve`) when Bun runs it, as its users write it: `zValidator` for params, query and
 * body, `hono/jwt` for the bearer token, the Zod views applied to every answer (`.parse` drops
 * what a view does not list, so nothing above a view leaks), the shared data access. Hono's
 * request log (`hono/logger`) is on unless BENCH_LOGS=off.
 */
import { serve } from '@hono/node-server';
import { zValidator } from '@hono/zod-validator';
import { Hono } from 'hono';
import { jwt, sign } from 'hono/jwt';
import { logger } from 'hono/logger';
import { z } from 'zod';
import { announce } from '../servers/announce.js';
import { postsData, secret, userId } from '../servers/posts.js';

const PostPublic = z.object({ id: z.string(), title: z.string(), excerpt: z.string() });
const PostAuthenticated = PostPublic.extend({
  content: z.string(),
  authorId: z.string(),
  status: z.enum(['draft', 'published', 'archived']),
});
const problem = (status: number, code: string, detail: string) => ({
  type: `urn:example:problem:${code.toLowerCase()}`,
  title: code,
  status,
  detail,
  code,
});

const app = new Hono();
if (process.env.BENCH_LOGS !== 'off') app.use(logger());

app.get('/api/posts/:id', zValidator('param', z.object({ id: z.string().uuid() })), async (c) => {
  const post = await postsData.findPost(c.req.valid('param').id);
  if (post === undefined) return c.json(problem(404, 'NOT_FOUND', 'No such post'), 404);
  return c.json(PostPublic.parse(post));
});

app.get(
  '/api/posts',
  zValidator(
    'query',
    z.object({
      cursor: z.string().uuid().optional(),
      limit: z.coerce.number().int().min(1).max(100).default(20),
    }),
  ),
  async (c) => {
    const { cursor, limit } = c.req.valid('query');
    const rows = await postsData.readKeyset({ cursor, towards: 'older', limit: limit + 1 });
    const data = rows.slice(0, limit);
    return c.json({
      data: data.map((row) => PostPublic.parse(row)),
      nextCursor: rows.length > limit ? (data.at(-1)?.id ?? null) : null,
      prevCursor: data[0]?.id ?? null,
    });
  },
);

app.post(
  '/api/posts',
  jwt({ secret, alg: 'HS256' }),
  zValidator(
    'json',
    z.object({
      title: z.string().min(1).max(200),
      excerpt: z.string().max(500).default(''),
      content: z.string().min(1).max(50_000),
    }),
  ),
  async (c) => {
    const user = await postsData.findUser((c.get('jwtPayload') as { sub: string }).sub);
    if (user === undefined || !user.isActive)
      return c.json(problem(401, 'INVALID_TOKEN', 'Invalid token'), 401);
    const post = await postsData.insertPost({ ...c.req.valid('json'), authorId: user.id });
    c.header('location', `/api/posts/${post.id}`);
    return c.json(PostAuthenticated.parse(post), 201);
  },
);

const token = await sign({ sub: userId, exp: Math.floor(Date.now() / 1000) + 15 * 60 }, secret, 'HS256');
const { Bun } = globalThis as {
  Bun?: { serve(options: { port: number; hostname: string; fetch: typeof app.fetch }): { port: number } };
};
if (Bun !== undefined) {
  // On Bun, as Hono's docs show: the app's fetch handed to Bun.serve.
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: app.fetch });
  announce({ address: `http://127.0.0.1:${server.port}`, token });
  process.once('SIGTERM', () => process.exit(0));
} else {
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
    announce({ address: `http://127.0.0.1:${info.port}`, token });
  });
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}
