/** Bare Fastify with JSON-schema routes: the baseline Proceed is measured against. */
import Fastify from 'fastify';
import { item, ready } from './data.js';

const app = Fastify({ logger: false });

const view = {
  type: 'object',
  properties: { id: { type: 'string' }, title: { type: 'string' }, excerpt: { type: 'string' } },
  required: ['id', 'title', 'excerpt'],
} as const;

app.get(
  '/api/items/:id',
  {
    schema: {
      params: { type: 'object', properties: { id: { type: 'string', format: 'uuid' } }, required: ['id'] },
      response: { 200: view },
    },
  },
  async (request) => {
    const { id } = request.params as { id: string };
    return { ...item, id };
  },
);

app.post(
  '/api/items',
  {
    schema: {
      body: {
        type: 'object',
        properties: {
          title: { type: 'string', minLength: 1, maxLength: 200 },
          content: { type: 'string', minLength: 1, maxLength: 50_000 },
          tags: { type: 'array', items: { type: 'string' }, maxItems: 10 },
        },
        required: ['title', 'content'],
      },
      response: { 201: view },
    },
  },
  async (request, reply) => {
    const body = request.body as { title: string; content: string };
    reply.code(201).header('location', `/api/items/${item.id}`);
    return { ...item, title: body.title, content: body.content };
  },
);

ready(await app.listen({ port: 0, host: '127.0.0.1' }));
