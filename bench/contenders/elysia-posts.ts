/**
 * Elysia on Bun, as its users write it: `t` schemas for params, query and body (query numbers
 * coerced), response schemas per status (Elysia drops what a schema does not list, so nothing
 * above a view leaks), `@elysiajs/bearer` and `@elysiajs/jwt` for the token, the shared data
 * access. Runs on Bun only (`bun bench/contenders/elysia-posts.ts`).
 */
import { bearer } from '@elysiajs/bearer';
import { jwt } from '@elysiajs/jwt';
import { Elysia, t } from 'elysia';
import { SignJWT } from 'jose';
import { announce } from '../servers/announce.js';
import { postsData, secret, userId } from '../servers/posts.js';

const PostPublic = t.Object({ id: t.String(), title: t.String(), excerpt: t.String() });
const PostAuthenticated = t.Object({
  id: t.String(),
  title: t.String(),
  excerpt: t.String(),
  content: t.String(),
  authorId: t.String(),
  status: t.Union([t.Literal('draft'), t.Literal('published'), t.Literal('archived')]),
});
const Problem = t.Object({
  type: t.String(),
  title: t.String(),
  status: t.Number(),
  detail: t.String(),
  code: t.String(),
});
const problem = (status: number, code: string, detail: string) => ({
  type: `urn:example:problem:${code.toLowerCase()}`,
  title: code,
  status,
  detail,
  code,
});

const app = new Elysia()
  .use(jwt({ name: 'jwt', secret, alg: 'HS256' }))
  .use(bearer())
  .get(
    '/api/posts/:id',
    async ({ params, status }) => {
      const post = await postsData.findPost(params.id);
      if (post === undefined) return status(404, problem(404, 'NOT_FOUND', 'No such post'));
      return post;
    },
    { params: t.Object({ id: t.String({ format: 'uuid' }) }), response: { 200: PostPublic, 404: Problem } },
  )
  .get(
    '/api/posts',
    async ({ query }) => {
      const { cursor, limit } = query;
      const rows = await postsData.readKeyset({ cursor, towards: 'older', limit: limit + 1 });
      const data = rows.slice(0, limit);
      return {
        data,
        nextCursor: rows.length > limit ? (data.at(-1)?.id ?? null) : null,
        prevCursor: data[0]?.id ?? null,
      };
    },
    {
      query: t.Object({
        cursor: t.Optional(t.String({ format: 'uuid' })),
        limit: t.Number({ minimum: 1, maximum: 100, default: 20 }),
      }),
      response: {
        200: t.Object({
          data: t.Array(PostPublic),
          nextCursor: t.Union([t.String(), t.Null()]),
          prevCursor: t.Union([t.String(), t.Null()]),
        }),
      },
    },
  )
  .post(
    '/api/posts',
    async ({ jwt, bearer, body, set, status }) => {
      const payload = bearer === undefined ? false : await jwt.verify(bearer);
      const user = payload === false ? undefined : await postsData.findUser(String(payload.sub));
      if (user === undefined || !user.isActive)
        return status(401, problem(401, 'INVALID_TOKEN', 'Invalid token'));
      const post = await postsData.insertPost({ ...body, authorId: user.id });
      set.headers.location = `/api/posts/${post.id}`;
      set.status = 201;
      return post;
    },
    {
      body: t.Object({
        title: t.String({ minLength: 1, maxLength: 200 }),
        excerpt: t.String({ maxLength: 500, default: '' }),
        content: t.String({ minLength: 1, maxLength: 50_000 }),
      }),
      response: { 201: PostAuthenticated, 401: Problem },
    },
  );

const token = await new SignJWT({ sub: userId })
  .setProtectedHeader({ alg: 'HS256' })
  .setExpirationTime('15m')
  .sign(new TextEncoder().encode(secret));
app.listen({ port: 0, hostname: '127.0.0.1' }, (server) => {
  announce({ address: `http://127.0.0.1:${server.port}`, token });
});
process.once('SIGTERM', () => void app.stop().then(() => process.exit(0)));
