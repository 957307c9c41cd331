/**
 * The blog's two anonymous reads written by hand on Fastify and `pg`, as the fastest way to serve
 * them: JSON schemas, one prepared statement per route, the same database and the same answers
 * as the blog (bench/workers.ts compares them byte for byte before timing).
 */
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = Fastify({ logger: false });

const uuid = { type: 'string', format: 'uuid' } as const;
const publicView = {
  type: 'object',
  properties: { id: { type: 'string' }, title: { type: 'string' }, excerpt: { type: 'string' } },
  required: ['id', 'title', 'excerpt'],
} as const;
const notFound = {
  type: 'urn:proceed:problem:not-found',
  title: 'Not found',
  status: 404,
  detail: 'No such post',
  code: 'NOT_FOUND',
};

interface Row {
  id: string;
  title: string;
  excerpt: string;
}

app.get(
  '/api/posts',
  {
    schema: {
      querystring: {
        type: 'object',
        properties: { cursor: uuid, limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
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
    const { rows } =
      cursor === undefined
        ? await pool.query<Row>({
            name: 'feed',
            text: "SELECT id, title, excerpt FROM posts WHERE status = 'published' ORDER BY id DESC LIMIT $1",
            values: [limit + 1],
          })
        : await pool.query<Row>({
            name: 'feed-after',
            text: "SELECT id, title, excerpt FROM posts WHERE status = 'published' AND id < $1 ORDER BY id DESC LIMIT $2",
            values: [cursor, limit + 1],
          });
    const data = rows.slice(0, limit);
    return {
      data,
      nextCursor: rows.length > limit ? (data.at(-1)?.id ?? null) : null,
      prevCursor: data[0]?.id ?? null,
    };
  },
);

app.get(
  '/api/posts/:id',
  {
    schema: {
      params: { type: 'object', properties: { id: uuid }, required: ['id'] },
      response: { 200: publicView, 404: { type: 'object', additionalProperties: true } },
    },
  },
  async (request, reply) => {
    const { rows } = await pool.query<Row>({
      name: 'post',
      text: "SELECT id, title, excerpt FROM posts WHERE id = $1 AND status = 'published'",
      values: [(request.params as { id: string }).id],
    });
    const post = rows[0];
    if (post === undefined) return reply.code(404).type('application/problem+json').send(notFound);
    return post;
  },
);

const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ address })}\n`);
process.once('SIGTERM', () => void app.close().then(() => pool.end().then(() => process.exit(0))));
