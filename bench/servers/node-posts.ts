/**
 * The floor of the "outside" bench (bench/run.ts): the same three endpoints on plain `node:http`
 * with no framework at all, doing the work every contender does and no more: the route matched by
 * hand, the id and query checked by hand, the bearer token verified with fast-jwt (as Fastify by
 * hand and ts-rest do), the views picked field by field and written with `JSON.stringify`, the
 * same answers byte for byte. No request log. Every other contender is reported against it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { createSigner, createVerifier } from 'fast-jwt';
import { announce } from './announce.js';
import { type PostRow, postsData, secret, userId } from './posts.js';

const verify = createVerifier({ key: secret, algorithms: ['HS256'] });
const sign = createSigner({ key: secret, algorithm: 'HS256', expiresIn: 15 * 60 * 1000 });
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const maxBody = 1024 * 1024;

const publicView = ({ id, title, excerpt }: PostRow) => ({ id, title, excerpt });

function send(
  response: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
) {
  const body = JSON.stringify(value);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  response.end(body);
}

function problem(response: ServerResponse, status: number, code: string, detail: string) {
  const body = JSON.stringify({
    type: `urn:example:problem:${code.toLowerCase()}`,
    title: code,
    status,
    detail,
    code,
  });
  response.writeHead(status, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
}

async function getPost(response: ServerResponse, id: string) {
  if (!uuid.test(id)) return problem(response, 400, 'VALIDATION_ERROR', 'id must be a UUID');
  const post = await postsData.findPost(id);
  if (post === undefined) return problem(response, 404, 'NOT_FOUND', 'No such post');
  send(response, 200, publicView(post));
}

async function listPosts(response: ServerResponse, query: URLSearchParams) {
  let limit = 20;
  let cursor: string | undefined;
  for (const [name, value] of query) {
    if (name === 'limit' && /^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= 100)
      limit = Number(value);
    else if (name === 'cursor' && uuid.test(value)) cursor = value;
    else return problem(response, 400, 'VALIDATION_ERROR', `Bad query parameter ${name}`);
  }
  const rows = await postsData.readKeyset({ cursor, towards: 'older', limit: limit + 1 });
  const data = rows.slice(0, limit).map(publicView);
  send(response, 200, {
    data,
    nextCursor: rows.length > limit ? (data.at(-1)?.id ?? null) : null,
    prevCursor: data[0]?.id ?? null,
  });
}

function readBody(request: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBody) {
        resolve(undefined);
        request.destroy();
      } else chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

const isString = (value: unknown, min: number, max: number): value is string =>
  typeof value === 'string' && value.length >= min && value.length <= max;

async function createPost(request: IncomingMessage, response: ServerResponse) {
  let sub: string;
  try {
    sub = (verify((request.headers.authorization ?? '').slice('Bearer '.length)) as { sub: string }).sub;
  } catch {
    return problem(response, 401, 'INVALID_TOKEN', 'Invalid token');
  }
  const user = await postsData.findUser(sub);
  if (user === undefined || !user.isActive) return problem(response, 401, 'INVALID_TOKEN', 'Invalid token');
  const text = await readBody(request);
  if (text === undefined) return problem(response, 413, 'PAYLOAD_TOO_LARGE', 'The body is too large');
  let body: { title?: unknown; excerpt?: unknown; content?: unknown };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return problem(response, 400, 'INVALID_JSON', 'The body is not JSON');
  }
  const excerpt = body.excerpt ?? '';
  if (
    typeof body !== 'object' ||
    body === null ||
    !isString(body.title, 1, 200) ||
    !isString(excerpt, 0, 500) ||
    !isString(body.content, 1, 50_000)
  )
    return problem(response, 400, 'VALIDATION_ERROR', 'title, excerpt and content');
  const post = await postsData.insertPost({
    title: body.title,
    excerpt,
    content: body.content,
    authorId: user.id,
  });
  const { id, title, content, authorId, status } = post;
  send(
    response,
    201,
    { id, title, excerpt: post.excerpt, content, authorId, status },
    { location: `/api/posts/${id}` },
  );
}

const server = createServer((request, response) => {
  const url = request.url ?? '/';
  const question = url.indexOf('?');
  const path = question === -1 ? url : url.slice(0, question);
  const fail = (error: unknown) => {
    if (!response.headersSent) problem(response, 500, 'INTERNAL', 'Internal error');
    else response.destroy(error as Error);
  };
  if (path === '/api/posts') {
    if (request.method === 'GET')
      return void listPosts(
        response,
        new URLSearchParams(question === -1 ? '' : url.slice(question + 1)),
      ).catch(fail);
    if (request.method === 'POST') return void createPost(request, response).catch(fail);
  } else if (path.startsWith('/api/posts/') && request.method === 'GET') {
    // An id is a UUID, which holds nothing percent-encoded: the raw segment is checked as it is.
    return void getPost(response, path.slice('/api/posts/'.length)).catch(fail);
  }
  problem(response, 404, 'NOT_FOUND', 'No such route');
});

export const accessToken = sign({ sub: userId });

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('not a TCP address');
    announce({ address: `http://127.0.0.1:${address.port}`, token: accessToken });
  });
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}
