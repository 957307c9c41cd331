/**
 * The blog's anonymous reads, `GET /api/auth/me` and an authenticated create written by hand on Fastify and `pg`, as the
 * fastest way to serve them: JSON schemas, prepared statements, fast-jwt, the same database,
 * the same checks (the token's revocation and its user in one statement, as the blog runs them) and the same answers as the
 * blog (bench/workers.ts compares them byte for byte before timing).
 */
import { randomBytes } from 'node:crypto';
import { createSigner, createVerifier } from 'fast-jwt';
import Fastify from 'fastify';
import pg from 'pg';
import { announce } from './announce.js';

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

const verify = createVerifier({
  key: process.env.JWT_SECRET ?? '',
  algorithms: ['HS256'],
  clockTolerance: 5000,
  requiredClaims: ['sub', 'jti', 'type', 'iat', 'exp'],
});
const invalidToken = {
  type: 'urn:proceed:problem:invalid-token',
  title: 'Invalid token',
  status: 401,
  detail: 'Invalid token',
  code: 'INVALID_TOKEN',
};

interface SignedInUser {
  id: string;
  name: string;
  email: string;
  role: string;
  is_active: boolean;
}

/**
 * The blog's checks for a bearer token: signature and claims, then revocation and an active user
 * in one statement, as the blog runs them.
 */
async function signedIn(authorization: string | undefined): Promise<SignedInUser | undefined> {
  let claims: { sub: string; jti: string; type: string; fam?: string; gen?: number };
  try {
    claims = verify((authorization ?? '').slice('Bearer '.length));
  } catch {
    return undefined;
  }
  if (claims.type !== 'access') return undefined;
  const { rows } = await pool.query<SignedInUser & { revoked: boolean }>({
    name: 'signed-in',
    text: `SELECT r.revoked, u.id, u.name, u.email, u.role, u.is_active
      FROM (SELECT EXISTS (SELECT 1 FROM proceed_revocations
        WHERE expires_at > $6
          AND ((kind = 'token' AND key = $2)
            OR (kind = 'family' AND key = $3)
            OR (kind = 'generation' AND key = $4 AND value > $5)
            OR (kind = 'user' AND key = $4 AND value >= $7))) AS revoked) AS r
      LEFT JOIN users AS u ON u.id = $1`,
    values: [claims.sub, claims.jti, claims.fam ?? claims.jti, claims.sub, claims.gen ?? 0, Date.now(), null],
  });
  const user = rows[0];
  return user === undefined || user.revoked || user.is_active !== true ? undefined : user;
}

app.get(
  '/api/auth/me',
  {
    schema: {
      response: {
        200: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            name: { type: 'string' },
            email: { type: 'string' },
            role: { type: 'string' },
          },
          required: ['id', 'name', 'email', 'role'],
        },
        401: { type: 'object', additionalProperties: true },
      },
    },
  },
  async (request, reply) => {
    const user = await signedIn(request.headers.authorization);
    if (user === undefined) return reply.code(401).type('application/problem+json').send(invalidToken);
    return user;
  },
);

/** A UUIDv7, as the blog makes its ids: the time first, so new rows go to the end of the index. */
function uuidv7(): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(Date.now(), 0, 6);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x70;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

app.post(
  '/api/posts',
  {
    schema: {
      body: {
        type: 'object',
        properties: {
          title: { type: 'string', minLength: 1, maxLength: 200 },
          content: { type: 'string', minLength: 1, maxLength: 50_000 },
          excerpt: { type: 'string', maxLength: 500 },
          status: { type: 'string', enum: ['draft', 'published'] },
        },
        required: ['title', 'content', 'excerpt'],
        additionalProperties: false,
      },
      response: {
        201: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            title: { type: 'string' },
            excerpt: { type: 'string' },
            content: { type: 'string' },
            authorId: { type: 'string' },
            status: { type: 'string' },
          },
          required: ['id', 'title', 'excerpt', 'content', 'authorId', 'status'],
        },
        401: { type: 'object', additionalProperties: true },
      },
    },
  },
  async (request, reply) => {
    const user = await signedIn(request.headers.authorization);
    if (user === undefined) return reply.code(401).type('application/problem+json').send(invalidToken);
    const body = request.body as { title: string; content: string; excerpt: string; status?: string };
    const { rows } = await pool.query({
      name: 'create-post',
      text: `INSERT INTO posts (id, author_id, title, content, excerpt, status) VALUES ($1, $2, $3, $4, $5, $6)
        RETURNING id, title, excerpt, content, author_id AS "authorId", status`,
      values: [uuidv7(), user.id, body.title.trim(), body.content, body.excerpt, body.status ?? 'draft'],
    });
    const post = rows[0] as { id: string };
    return reply.code(201).header('location', `/api/posts/${post.id}`).send(post);
  },
);

// BENCH_SERVER_PORT for `npm run bench:startup`, which times its start; any free port otherwise.
const address = await app.listen({ port: Number(process.env.BENCH_SERVER_PORT ?? 0), host: '127.0.0.1' });
announce({ address, ...(await duelDetails()) });
process.once('SIGTERM', () => void app.close().then(() => pool.end().then(() => process.exit(0))));

/**
 * For `npm run bench:duel` beside bench/servers/blog.ts, which seeds the database first: a token
 * of its author, signed with the same JWT_SECRET, and the newest published post's id. Nothing on
 * a database not seeded that way (the by-hand section passes its own).
 */
async function duelDetails(): Promise<{ token?: string; postId?: string }> {
  const author = await pool.query("SELECT id FROM users WHERE email = 'bench@example.com'");
  const newest = await pool.query("SELECT id FROM posts WHERE status = 'published' ORDER BY id DESC LIMIT 1");
  const userId = (author.rows[0] as { id: string } | undefined)?.id;
  const postId = (newest.rows[0] as { id: string } | undefined)?.id;
  if (userId === undefined || postId === undefined) return {};
  const sign = createSigner({
    key: process.env.JWT_SECRET ?? '',
    algorithm: 'HS256',
    expiresIn: 15 * 60_000,
  });
  const family = uuidv7();
  return { token: sign({ sub: userId, jti: family, type: 'access', fam: family, gen: 0 }), postId };
}
