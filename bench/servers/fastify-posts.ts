/**
 * Fastify written by hand, as its users write it: JSON schemas for params, query, body and
 * answers (fast-json-stringify drops what a schema does not list), fast-jwt for the bearer token,
 * the shared data access and the same answers as the Proceed contender. Its request log is on
 * (`logger: true`, as Fastify's getting-started writes it) unless BENCH_LOGS=off.
 */
import { fileURLToPath } from 'node:url';
import { createSigner, createVerifier } from 'fast-jwt';
import Fastify from 'fastify';
import { announce } from './announce.js';
import { postsData, secret, userId } from './posts.js';

const app = Fastify({ logger: process.env.BENCH_LOGS !== 'off' });
const verify = createVerifier({ key: secret, algorithms: ['HS256'] });
const sign = createSigner({ key: secret, algorithm: 'HS256', expiresIn: 15 * 60 * 1000 });

const uuid = { type: 'string', format: 'uuid' } as const;
const publicView = {
  type: 'object',
  properties: { id: { type: 'string' }, title: { type: 'string' }, excerpt: { type: 'string' } },
  required: ['id', 'title', 'excerpt'],
} as const;
const authenticatedView = {
  type: 'object',
  properties: {
    ...publicView.properties,
    content: { type: 'string' },
    authorId: { type: 'string' },
    status: { type: 'string' },
  },
  required: ['id', 'title', 'excerpt', 'content', 'authorId', 'status'],
} as const;
const problemSchema = {
  type: 'object',
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string' },
  },
} as const;
const problem = (status: number, code: string, detail: string) => ({
  type: `urn:example:problem:${code.toLowerCase()}`,
  title: code,
  status,
  detail,
  code,
});

app.get(
  '/api/posts/:id',
  {
    schema: {
      params: { type: 'object', properties: { id: uuid }, required: ['id'] },
      response: { 200: publicView, 404: problemSchema },
    },
  },
  async (request, reply) => {
    const post = await postsData.findPost((request.params as { id: string }).id);
    if (post === undefined) return reply.code(404).send(problem(404, 'NOT_FOUND', 'No such post'));
    return post;
  },
);

app.get(
  '/api/posts',
  {
    schema: {
      querystring: {
        type: 'object',
        properties: {
          cursor: uuid,
          limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
        },
        additionalProperties: false,
      },
      response: {
        200: {
          type: 'object',
          properties: {
            data: { type: 'array', items: publicView },
            nextCursor: { type: ['string', 'null'] },
            prevCursor: { type: ['string', 'null'] },
          },
          required: ['data', 'nextCursor', 'prevCursor'],
        },
      },
    },
  },
  async (request) => {
    const { cursor, limit } = request.query as { cursor?: string; limit: number };
    const rows = await postsData.readKeyset({ cursor, towards: 'older', limit: limit + 1 });
    const data = rows.slice(0, limit);
    return {
      data,
      nextCursor: rows.length > limit ? (data.at(-1)?.id ?? null) : null,
      prevCursor: data[0]?.id ?? null,
    };
  },
);

app.post(
  '/api/posts',
  {
    schema: {
      headers: {
        type: 'object',
        properties: { authorization: { type: 'string' } },
        required: ['authorization'],
      },
      body: {
        type: 'object',
        properties: {
          title: { type: 'string', minLength: 1, maxLength: 200 },
          excerpt: { type: 'string', maxLength: 500, default: '' },
          content: { type: 'string', minLength: 1, maxLength: 50_000 },
        },
        required: ['title', 'content'],
      },
      response: { 201: authenticatedView, 401: problemSchema },
    },
  },
  async (request, reply) => {
    const header = request.headers.authorization ?? '';
    let sub: string;
    try {
      sub = (verify(header.slice('Bearer '.length)) as { sub: string }).sub;
    } catch {
      return reply.code(401).send(problem(401, 'INVALID_TOKEN', 'Invalid token'));
    }
    const user = await postsData.findUser(sub);
    if (user === undefined || !user.isActive)
      return reply.code(401).send(problem(401, 'INVALID_TOKEN', 'Invalid token'));
    const body = request.body as { title: string; excerpt: string; content: string };
    const post = await postsData.insertPost({ ...body, authorId: user.id });
    return reply.code(201).header('location', `/api/posts/${post.id}`).send(post);
  },
);

// BENCH_MCP=1: the same two calls as MCP tools, written by hand as a Fastify user would, with no
// SDK and no validation of the arguments: what a tool call costs over its REST route on Fastify
// itself (bench/run.ts, the mcp section).
if (process.env.BENCH_MCP === '1') {
  interface ToolCall {
    id: string | number;
    method: string;
    params?: { name?: string; arguments?: Record<string, string> };
  }
  const result = (id: ToolCall['id'], value: unknown, isError = false) => {
    const text = JSON.stringify(value);
    return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${text}${isError ? ',"isError":true' : ''}}}`;
  };
  app.post('/mcp', async (request, reply) => {
    const { id, method, params } = request.body as ToolCall;
    reply.header('content-type', 'application/json');
    if (method !== 'tools/call')
      return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":{"code":-32601,"message":"No such method"}}`;
    const args = params?.arguments ?? {};
    if (params?.name === 'getPost') {
      const post = await postsData.findPost(String(args.id));
      if (post === undefined) return result(id, problem(404, 'NOT_FOUND', 'No such post'), true);
      return result(id, { id: post.id, title: post.title, excerpt: post.excerpt });
    }
    let sub: string;
    try {
      sub = (verify((request.headers.authorization ?? '').slice('Bearer '.length)) as { sub: string }).sub;
    } catch {
      return reply.code(401).send(problem(401, 'INVALID_TOKEN', 'Invalid token'));
    }
    const user = await postsData.findUser(sub);
    if (user === undefined || !user.isActive)
      return reply.code(401).send(problem(401, 'INVALID_TOKEN', 'Invalid token'));
    const post = await postsData.insertPost({
      title: String(args.title),
      excerpt: args.excerpt ?? '',
      content: String(args.content),
      authorId: user.id,
    });
    const { id: postId, title, excerpt, content, authorId, status } = post;
    return result(id, { id: postId, title, excerpt, content, authorId, status });
  });
}

export { app };
export const accessToken = sign({ sub: userId });

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  announce({ address, token: accessToken });
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
}
