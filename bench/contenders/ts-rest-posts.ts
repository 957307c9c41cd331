/**
 * ts-rest on Fastify, as its users write it: a Zod contract, `initServer().router`, response
 * validation on (the Zod views drop what they do not list, so nothing above a view leaks),
 * fast-jwt for the bearer token, the shared data access. Fastify's request log is on unless
 * BENCH_LOGS=off. Installed apart from the framework (package.json here): ts-rest is typed for zod
 * 3, its declared peer, which it gets here; it declares fastify 4 as a peer and runs on the
 * fastify 5 Proceed uses.
 */
import { initContract } from '@ts-rest/core';
import { initServer } from '@ts-rest/fastify';
import { createSigner, createVerifier } from 'fast-jwt';
import Fastify from 'fastify';
import { z } from 'zod';
import { announce } from '../servers/announce.js';
import { postsData, secret, userId } from '../servers/posts.js';

const PostPublic = z.object({ id: z.string(), title: z.string(), excerpt: z.string() });
const PostAuthenticated = PostPublic.extend({
  content: z.string(),
  authorId: z.string(),
  status: z.enum(['draft', 'published', 'archived']),
});
const Problem = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number(),
  detail: z.string(),
  code: z.string(),
});
const problem = <S extends number>(status: S, code: string, detail: string) => ({
  status,
  body: { type: `urn:example:problem:${code.toLowerCase()}`, title: code, status, detail, code },
});

const c = initContract();
const contract = c.router({
  getPost: {
    method: 'GET',
    path: '/api/posts/:id',
    pathParams: z.object({ id: z.string().uuid() }),
    responses: { 200: PostPublic, 404: Problem },
  },
  listPosts: {
    method: 'GET',
    path: '/api/posts',
    query: z.object({
      cursor: z.string().uuid().optional(),
      limit: z.coerce.number().int().min(1).max(100).default(20),
    }),
    responses: {
      200: z.object({
        data: z.array(PostPublic),
        nextCursor: z.string().nullable(),
        prevCursor: z.string().nullable(),
      }),
    },
  },
  createPost: {
    method: 'POST',
    path: '/api/posts',
    headers: z.object({ authorization: z.string() }),
    body: z.object({
      title: z.string().min(1).max(200),
      excerpt: z.string().max(500).default(''),
      content: z.string().min(1).max(50_000),
    }),
    responses: { 201: PostAuthenticated, 401: Problem },
  },
});

const verify = createVerifier({ key: secret, algorithms: ['HS256'] });
const sign = createSigner({ key: secret, algorithm: 'HS256', expiresIn: 15 * 60 * 1000 });
const s = initServer();
const router = s.router(contract, {
  getPost: async ({ params }) => {
    const post = await postsData.findPost(params.id);
    return post === undefined ? problem(404, 'NOT_FOUND', 'No such post') : { status: 200, body: post };
  },
  listPosts: async ({ query }) => {
    const { cursor, limit } = query;
    const rows = await postsData.readKeyset({ cursor, towards: 'older', limit: limit + 1 });
    const data = rows.slice(0, limit);
    return {
      status: 200,
      body: {
        data,
        nextCursor: rows.length > limit ? (data.at(-1)?.id ?? null) : null,
        prevCursor: data[0]?.id ?? null,
      },
    };
  },
  createPost: async ({ headers, body, reply }) => {
    let sub: string;
    try {
      sub = (verify(headers.authorization.slice('Bearer '.length)) as { sub: string }).sub;
    } catch {
      return problem(401, 'INVALID_TOKEN', 'Invalid token');
    }
    const user = await postsData.findUser(sub);
    if (user === undefined || !user.isActive) return problem(401, 'INVALID_TOKEN', 'Invalid token');
    const post = await postsData.insertPost({ ...body, authorId: user.id });
    reply.header('location', `/api/posts/${post.id}`);
    return { status: 201, body: post };
  },
});

const app = Fastify({ logger: process.env.BENCH_LOGS !== 'off' });
s.registerRouter(contract, router, app, { responseValidation: true });
const address = await app.listen({ port: 0, host: '127.0.0.1' });
announce({ address, token: sign({ sub: userId }) });
