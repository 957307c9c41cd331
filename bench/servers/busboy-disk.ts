/**
 * The blog's attachment upload written by hand, as the plainest fast way to take one: `node:http`,
 * a bearer token checked with fast-jwt, the post's author read from the database, the form parsed
 * with busboy and the file streamed to disk as it arrives (hashed on the way, no spool), then its
 * row inserted. On DATABASE_URL: a PostgreSQL server (`pg`) or `memory://` (PGlite in this
 * process), with tables of its own. ATTACHMENTS_DIR is where the files go. For `npm run bench`
 * (BENCH_ONLY=uploads), beside the blog (docs/performance.md, "Uploads under load").
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import { createSigner, createVerifier } from 'fast-jwt';
import { announce } from './announce.js';

const databaseUrl = process.env.DATABASE_URL ?? 'memory://';
const directory = process.env.ATTACHMENTS_DIR;
if (directory === undefined) throw new Error('bench/servers/busboy-disk.ts writes to ATTACHMENTS_DIR');
const maxFileSize = 10 * 1024 * 1024;

type Query = (sql: string, params?: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

async function openDatabase(): Promise<Query> {
  if (/^postgres(?:ql)?:/.test(databaseUrl)) {
    const pg = (await import('pg')).default;
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
    return (sql, params) => pool.query(sql, params);
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const lite = await PGlite.create();
  return (sql, params) => lite.query(sql, params) as Promise<{ rows: Record<string, unknown>[] }>;
}

const query = await openDatabase();
await query(`CREATE TABLE IF NOT EXISTS hand_posts (id uuid PRIMARY KEY, author_id uuid NOT NULL)`);
await query(`CREATE TABLE IF NOT EXISTS hand_attachments (
  id uuid PRIMARY KEY, post_id uuid NOT NULL REFERENCES hand_posts (id) ON DELETE CASCADE,
  name text NOT NULL, media_type text NOT NULL, size integer NOT NULL, sha256 text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now())`);
const author = randomUUID();
const postId = randomUUID();
await query('INSERT INTO hand_posts (id, author_id) VALUES ($1, $2)', [postId, author]);

const secret = randomBytes(32).toString('hex');
const verify = createVerifier({ key: secret, algorithms: ['HS256'] });
const token = createSigner({ key: secret, algorithm: 'HS256', expiresIn: 3_600_000 })({ sub: author });

function answer(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': status < 400 ? 'application/json' : 'application/problem+json',
    'content-length': Buffer.byteLength(text),
    ...(status >= 400 ? { connection: 'close' } : {}),
  });
  response.end(text);
}

const attachmentPath = /^\/api\/posts\/([0-9a-f-]{36})\/attachments$/;

const server = createServer(async (request, response) => {
  try {
    if (request.method === 'GET' && request.url === '/api/health') {
      await query('SELECT 1');
      return answer(response, 200, { status: 'ok' });
    }
    const matched = request.method === 'POST' ? attachmentPath.exec(request.url ?? '') : null;
    if (matched === null) return answer(response, 404, { status: 404 });
    const target = matched[1] as string;
    let subject: string;
    try {
      subject = (verify((request.headers.authorization ?? '').replace(/^Bearer /, '')) as { sub: string })
        .sub;
    } catch {
      return answer(response, 401, { status: 401 });
    }
    const { rows } = await query('SELECT author_id FROM hand_posts WHERE id = $1', [target]);
    if (rows[0] === undefined) return answer(response, 404, { status: 404 });
    if (rows[0].author_id !== subject) return answer(response, 403, { status: 403 });
    const id = randomUUID();
    const path = join(directory, target, id);
    await mkdir(join(directory, target), { recursive: true });
    const form = busboy({ headers: request.headers, limits: { files: 1, fileSize: maxFileSize } });
    const stored = new Promise<{ name: string; type: string; size: number; sha256: string }>(
      (resolve, reject) => {
        let seen = false;
        form.on('file', (field, file, info) => {
          if (field !== 'file' || seen) {
            file.resume();
            return;
          }
          seen = true;
          const hash = createHash('sha256');
          let size = 0;
          pipeline(
            file,
            new Transform({
              transform(chunk: Buffer, _encoding, done) {
                hash.update(chunk);
                size += chunk.byteLength;
                done(null, chunk);
              },
            }),
            createWriteStream(`${path}.partial`, { flags: 'wx' }),
          ).then(() => {
            if ((file as { truncated?: boolean }).truncated) reject(new Error('too large'));
            else
              resolve({
                name: info.filename ?? 'upload',
                type: info.mimeType,
                size,
                sha256: hash.digest('hex'),
              });
          }, reject);
        });
        form.once('error', reject);
        form.once('close', () => {
          if (!seen) reject(new Error('no file'));
        });
      },
    );
    request.pipe(form);
    let file: Awaited<typeof stored>;
    try {
      file = await stored;
    } catch {
      await rm(`${path}.partial`, { force: true });
      return answer(response, 400, { status: 400 });
    }
    await rename(`${path}.partial`, path);
    await query(
      'INSERT INTO hand_attachments (id, post_id, name, media_type, size, sha256) VALUES ($1, $2, $3, $4, $5, $6)',
      [id, target, file.name, file.type, file.size, file.sha256],
    );
    response.setHeader('location', `/api/posts/${target}/attachments/${id}`);
    answer(response, 201, { id, name: file.name, mediaType: file.type, size: file.size });
  } catch (error) {
    console.error(error);
    if (!response.headersSent) answer(response, 500, { status: 500 });
  }
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as { port: number };
announce({ address: `http://127.0.0.1:${port}`, token, postId });
