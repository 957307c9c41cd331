/**
 * Post attachments end to end (docs/blog.md, "Attachments"; CONTRACT §8), on PGlite and
 * PostgreSQL: who may upload, the limits, and the download's ranges, tags and names.
 *
 * Uploads and problem answers go through the harness's checked fetch. The file answers (200, 206,
 * HEAD) are read with a plain `fetch`: `createResponseValidator` matches a response's media type
 * only against the exact types a document lists, and a `download()` of any type is documented as
 * `*\/*`; nor does it know HEAD. Their headers are asserted one by one instead.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { connect as connectSocket } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { attachmentMaxSize } from '../src/procedures/posts.js';
import {
  type Connection,
  engines,
  expectKeys,
  expectProblem,
  type Reply,
  type Session,
  useBlog,
  withTwoInstances,
} from './harness.js';

interface AttachmentView {
  id: string;
  name: string;
  mediaType: string;
  size: number;
}

const attachmentKeys = ['id', 'name', 'mediaType', 'size'];

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Every byte value, then some: what a text column or a UTF-8 round trip would damage. */
const binary = Uint8Array.from({ length: 1000 }, (_, index) => (index * 7 + 3) % 256);

interface NewFile {
  bytes: Uint8Array | string;
  name: string;
  type?: string;
}

/** `POST /api/posts/:id/attachments` with any form, through the checked fetch. */
async function sendForm(
  blog: Pick<Connection, 'origin' | 'fetch'>,
  postId: string,
  form: FormData,
  token?: string,
): Promise<Reply<AttachmentView>> {
  const response = await blog.fetch(`${blog.origin}/api/posts/${postId}/attachments`, {
    method: 'POST',
    body: form,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    body: (text === '' ? undefined : JSON.parse(text)) as AttachmentView,
  };
}

/** A form of one part per file, each named as given (`file` unless said otherwise). */
function formOf(...files: (NewFile & { part?: string })[]): FormData {
  const form = new FormData();
  for (const file of files)
    form.append(
      file.part ?? 'file',
      new Blob([file.bytes as BlobPart], { type: file.type ?? '' }),
      file.name,
    );
  return form;
}

/** `POST /api/posts/:id/attachments` with one file part named `file`. */
const upload = (blog: Pick<Connection, 'origin' | 'fetch'>, postId: string, file: NewFile, token?: string) =>
  sendForm(blog, postId, formOf(file), token);

interface FileReply {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
}

/** A file answer, read whole (see the top of this file for why it is not the checked fetch). */
async function fetchFile(
  origin: string,
  path: string,
  options: { method?: 'GET' | 'HEAD'; token?: string; headers?: Record<string, string> } = {},
): Promise<FileReply> {
  const response = await fetch(`${origin}${path}`, {
    method: options.method ?? 'GET',
    headers: {
      ...options.headers,
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
    },
  });
  return {
    status: response.status,
    headers: response.headers,
    bytes: new Uint8Array(await response.arrayBuffer()),
  };
}

/**
 * Sends a request head (and what follows it) on a socket of its own and returns the answer's
 * text once it has arrived whole, whether or not the body announced was ever sent.
 */
function exchange(origin: string, head: string, body = ''): Promise<string> {
  const { hostname, port } = new URL(origin);
  return new Promise<string>((resolve, reject) => {
    const socket = connectSocket(Number(port), hostname);
    let text = '';
    const done = () => {
      socket.destroy();
      resolve(text);
    };
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`No whole answer within 10 s; got: ${JSON.stringify(text)}`));
    }, 10_000);
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(text.slice(0, end));
      if (length !== null && text.length - end - 4 >= Number(length[1])) {
        clearTimeout(timer);
        done();
      }
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.write(head + body);
  });
}

const attachmentPath = (postId: string, attachmentId: string) =>
  `/api/posts/${postId}/attachments/${attachmentId}`;

for (const engine of engines()) {
  describe.skipIf(engine.skip)(`attachments on ${engine.name}`, () => {
    const blog = useBlog(engine);
    let author: Session;
    let other: Session;
    let admin: string;
    let published: string;

    const storedFor = async (postId: string) =>
      (
        await blog.query<{ count: number }>(
          'SELECT count(*)::int AS count FROM attachments WHERE post_id = $1',
          [postId],
        )
      )[0]?.count;

    beforeAll(async () => {
      [author, other] = await Promise.all([
        blog.register({ name: 'Author' }),
        blog.register({ name: 'Other' }),
      ]);
      admin = await blog.adminToken();
      published = (await blog.createPost(author.accessToken, { status: 'published' })).id;
    });

    describe('POST /api/posts/:id/attachments', () => {
      it('stores the author’s file: 201 with its id, name, media type and size', async () => {
        const reply = await upload(
          blog.instance,
          published,
          { bytes: 'Hello, attachment.', name: 'notes.md', type: 'text/markdown' },
          author.accessToken,
        );
        expect(reply.status, reply.text).toBe(201);
        expectKeys(reply.body, attachmentKeys);
        expect(reply.body).toEqual({
          id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
          name: 'notes.md',
          mediaType: 'text/markdown',
          size: 18,
        });
        const file = await fetchFile(blog.origin, attachmentPath(published, reply.body.id));
        expect(new TextDecoder().decode(file.bytes)).toBe('Hello, attachment.');
      });

      it('answers Location: the download URL of the new attachment', async () => {
        const reply = await upload(
          blog.instance,
          published,
          { bytes: 'x', name: 'x.txt' },
          author.accessToken,
        );
        expect(reply.status, reply.text).toBe(201);
        expect(reply.headers.get('location')).toBe(attachmentPath(published, reply.body.id));
      });

      it('takes a file from an admin on anyone’s post', async () => {
        // A Blob without a type travels as application/octet-stream.
        const reply = await upload(blog.instance, published, { bytes: binary, name: 'data' }, admin);
        expect(reply.status, reply.text).toBe(201);
        expect(reply.body).toMatchObject({ name: 'data', mediaType: 'application/octet-stream', size: 1000 });
      });

      // Bun's File constructor turns text/plain into text/plain;charset=utf-8; the upload keeps
      // the type the part was sent with on every runtime.
      it('keeps a text file’s media type as the part sent it', async () => {
        const reply = await upload(
          blog.instance,
          published,
          { bytes: 'plain', name: 'plain.txt', type: 'text/plain' },
          author.accessToken,
        );
        expect(reply.status, reply.text).toBe(201);
        expect(reply.body.mediaType).toBe('text/plain');
        const file = await fetchFile(blog.origin, attachmentPath(published, reply.body.id));
        expect(file.headers.get('content-type')).toBe('text/plain');
      });

      it('keeps the name the client sent without its directories, up to 255 characters', async () => {
        const named = async (name: string) =>
          (await upload(blog.instance, published, { bytes: 'x', name }, author.accessToken)).body.name;
        expect(await named('reports/2026/q1 – résumé.txt')).toBe('q1 – résumé.txt');
        expect(await named('C:\\Users\\ada\\notes.txt')).toBe('notes.txt');
        expect(await named('nothing/')).toBe('upload');
        expect(await named(`${'é'.repeat(251)}.txt`)).toBe(`${'é'.repeat(251)}.txt`);
      });

      it('keeps names without format characters, and refuses a media type outside RFC 6838', async () => {
        const overridden = await upload(
          blog.instance,
          published,
          { bytes: 'MZ', name: 'evil\u202Etxt.exe', type: 'text/plain' },
          author.accessToken,
        );
        expect(overridden.status, overridden.text).toBe(201);
        expect(overridden.body.name).toBe('eviltxt.exe');
        const download = await fetchFile(blog.origin, attachmentPath(published, overridden.body.id));
        expect(download.headers.get('content-disposition')).toBe('attachment; filename="eviltxt.exe"');
        const post = (await blog.createPost(author.accessToken, { status: 'published' })).id;
        const long = expectProblem(
          await upload(
            blog.instance,
            post,
            { bytes: 'x', name: 'x.bin', type: `application/${'x'.repeat(10_000)}` },
            author.accessToken,
          ),
          400,
          'VALIDATION_FAILED',
        );
        expect(long.errors).toEqual([{ path: 'file', message: expect.stringContaining('RFC 6838') }]);
        expect(await storedFor(post)).toBe(0);
      });

      it('keeps the bytes out of the database: the row says what the file is, the file is on disk', async () => {
        const reply = await upload(
          blog.instance,
          published,
          { bytes: binary, name: 'on-disk.bin' },
          author.accessToken,
        );
        expect(reply.status, reply.text).toBe(201);
        const [row] = await blog.query<{ inRow: boolean; sha256: string }>(
          'SELECT bytes IS NOT NULL AS "inRow", sha256 FROM attachments WHERE id = $1',
          [reply.body.id],
        );
        expect(row).toEqual({ inRow: false, sha256: sha256(binary) });
        const directory = blog.instance.settings.attachmentsDirectory;
        // In this process on an embedded database, the directory is a temporary one of the app's.
        if (directory !== undefined)
          expect(sha256(await readFile(join(directory, published, reply.body.id)))).toBe(sha256(binary));
      });

      it('refuses anyone else as an update of the post is refused, and stores nothing', async () => {
        const post = (await blog.createPost(author.accessToken, { status: 'published' })).id;
        const draft = (await blog.createPost(author.accessToken)).id;
        const file = { bytes: 'not yours', name: 'x.txt' };
        expectProblem(
          await upload(blog.instance, post, file, other.accessToken),
          403,
          'FORBIDDEN',
          'Guard "author or admin" denied access',
        );
        expectProblem(await upload(blog.instance, post, file), 401, 'UNAUTHENTICATED');
        // A draft someone else may not see is not revealed: 404, as for PUT /api/posts/:id.
        expectProblem(await upload(blog.instance, draft, file, other.accessToken), 404, 'NOT_FOUND');
        expectProblem(await upload(blog.instance, crypto.randomUUID(), file, admin), 404, 'NOT_FOUND');
        const malformed = expectProblem(
          await upload(blog.instance, 'not-a-uuid', file, author.accessToken),
          400,
          'VALIDATION_FAILED',
        );
        expect(malformed.errors?.map((error) => error.path)).toEqual(['id']);
        expect(await storedFor(post)).toBe(0);
        expect(await storedFor(draft)).toBe(0);
      });

      it('reads nothing for another user: the 403 comes while the announced body is still unsent', async () => {
        const head = [
          `POST /api/posts/${published}/attachments HTTP/1.1`,
          'host: blog.test',
          `authorization: Bearer ${other.accessToken}`,
          'content-type: multipart/form-data; boundary=b',
          'content-length: 500000',
          '',
          '',
        ].join('\r\n');
        const answer = await exchange(blog.origin, head, '--b\r\n');
        expect(answer).toMatch(/^HTTP\/1\.1 403/);
        expect(answer).toContain('"code":"FORBIDDEN"');
      });

      it('takes one file part named file, and refuses any other body, storing nothing', async () => {
        const post = (await blog.createPost(author.accessToken, { status: 'published' })).id;
        const token = author.accessToken;
        const json = await blog.request('POST', `/api/posts/${post}/attachments`, {
          json: { file: 'hello' },
          token,
        });
        expectProblem(json, 415, 'UNSUPPORTED_MEDIA_TYPE');
        // A text part the input does not name is refused, as a JSON body's key is.
        const fieldsOnly = new FormData();
        fieldsOnly.append('title', 'no file here');
        const stray = expectProblem(
          await sendForm(blog.instance, post, fieldsOnly, token),
          400,
          'VALIDATION_FAILED',
        );
        expect(stray.errors?.map((error) => error.path)).toEqual(['title']);
        const missing = expectProblem(
          await sendForm(blog.instance, post, new FormData(), token),
          400,
          'VALIDATION_FAILED',
        );
        expect(missing.errors?.map((error) => error.path)).toEqual(['file']);
        const misnamed = expectProblem(
          await sendForm(
            blog.instance,
            post,
            formOf({ part: 'attachment', bytes: 'x', name: 'x.txt' }),
            token,
          ),
          400,
          'VALIDATION_FAILED',
        );
        expect(misnamed.errors?.map((error) => error.path)).toEqual(['attachment']);
        expectProblem(
          await sendForm(
            blog.instance,
            post,
            formOf({ bytes: 'one', name: 'one.txt' }, { bytes: 'two', name: 'two.txt' }),
            token,
          ),
          413,
          'PAYLOAD_TOO_LARGE',
        );
        const longName = expectProblem(
          await upload(blog.instance, post, { bytes: 'x', name: `${'n'.repeat(252)}.txt` }, token),
          400,
          'VALIDATION_FAILED',
          'file: The file name is longer than 255 characters',
        );
        expect(longName.errors?.map((error) => error.path)).toEqual(['file']);
        expect(await storedFor(post)).toBe(0);
      });

      it('takes a file of exactly 10 MiB, and refuses one byte more with 413, storing nothing', async () => {
        const post = (await blog.createPost(author.accessToken, { status: 'published' })).id;
        const largest = new Uint8Array(attachmentMaxSize).fill(42);
        const taken = await upload(
          blog.instance,
          post,
          { bytes: largest, name: 'large.bin' },
          author.accessToken,
        );
        expect(taken.status, taken.text).toBe(201);
        expect(taken.body.size).toBe(10 * 1024 * 1024);
        const tooLarge = await upload(
          blog.instance,
          post,
          { bytes: new Uint8Array(attachmentMaxSize + 1), name: 'too-large.bin' },
          author.accessToken,
        );
        expectProblem(tooLarge, 413, 'PAYLOAD_TOO_LARGE');
        expect(await storedFor(post)).toBe(1);
      });

      it('answers 413 to a declared Content-Length over the limit before anything runs, storing nothing', async () => {
        const post = (await blog.createPost(author.accessToken, { status: 'published' })).id;
        const head = [
          `POST /api/posts/${post}/attachments HTTP/1.1`,
          'host: blog.test',
          `authorization: Bearer ${author.accessToken}`,
          'content-type: multipart/form-data; boundary=b',
          `content-length: ${20 * 1024 * 1024}`,
          '',
          '',
        ].join('\r\n');
        const answer = await exchange(
          blog.origin,
          head,
          '--b\r\ncontent-disposition: form-data; name="file"; filename="big.bin"\r\n\r\n',
        );
        expect(answer).toMatch(/^HTTP\/1\.1 413/);
        expect(answer).toContain('"code":"PAYLOAD_TOO_LARGE"');
        expect(await storedFor(post)).toBe(0);
      });
    });

    describe('GET /api/posts/:id/attachments/:attachmentId', () => {
      let file: AttachmentView;
      const name = 'Grüße – résumé.pdf';
      const path = () => attachmentPath(published, file.id);

      beforeAll(async () => {
        const reply = await upload(
          blog.instance,
          published,
          { bytes: binary, name, type: 'application/pdf' },
          author.accessToken,
        );
        expect(reply.status, reply.text).toBe(201);
        file = reply.body;
        expect(file).toMatchObject({ name, mediaType: 'application/pdf', size: binary.byteLength });
      });

      it('sends the stored bytes to anyone who may see the post, with their type, length, name and tag', async () => {
        const reply = await fetchFile(blog.origin, path());
        expect(reply.status).toBe(200);
        expect(reply.bytes).toEqual(binary);
        expect(reply.headers.get('content-type')).toBe('application/pdf');
        expect(reply.headers.get('content-length')).toBe(String(binary.byteLength));
        expect(reply.headers.get('etag')).toBe(`"${sha256(binary)}"`);
        expect(reply.headers.get('accept-ranges')).toBe('bytes');
        expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
        expect(reply.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
        expect(reply.headers.get('content-encoding')).toBeNull();
      });

      it('serves a file stored in the database before the bytes moved to disk (migration 0006)', async () => {
        const id = crypto.randomUUID();
        await blog.query(
          `INSERT INTO attachments (id, post_id, name, media_type, size, sha256, bytes)
             VALUES ($1, $2, 'old.bin', 'application/octet-stream', $3, $4, $5)`,
          [id, published, binary.byteLength, sha256(binary), Buffer.from(binary)],
        );
        const reply = await fetchFile(blog.origin, attachmentPath(published, id));
        expect(reply.status).toBe(200);
        expect(reply.bytes).toEqual(binary);
        expect(reply.headers.get('etag')).toBe(`"${sha256(binary)}"`);
        const range = await fetchFile(blog.origin, attachmentPath(published, id), {
          headers: { range: 'bytes=0-9' },
        });
        expect(range.bytes).toEqual(binary.slice(0, 10));
      });

      it('removes the bytes with their post', async () => {
        const post = (await blog.createPost(author.accessToken, { status: 'published' })).id;
        const reply = await upload(
          blog.instance,
          post,
          { bytes: binary, name: 'gone.bin' },
          author.accessToken,
        );
        expect(reply.status, reply.text).toBe(201);
        const directory = blog.instance.settings.attachmentsDirectory;
        const folder = directory === undefined ? undefined : join(directory, post);
        if (folder !== undefined) expect(existsSync(join(folder, reply.body.id))).toBe(true);
        const deleted = await blog.request('DELETE', `/api/posts/${post}`, { token: author.accessToken });
        expect(deleted.status).toBe(200);
        expect(await storedFor(post)).toBe(0);
        // Removed after the answer, in the background: asked until it is, or the test's timeout.
        while (folder !== undefined && existsSync(folder))
          await new Promise((resolve) => setTimeout(resolve, 50));
      });

      it('removes the bytes of a deleted user’s posts, and no other post’s', async () => {
        const leaving = await blog.register({ name: 'Leaving' });
        const post = (await blog.createPost(leaving.accessToken, { status: 'published' })).id;
        const theirs = await upload(
          blog.instance,
          post,
          { bytes: binary, name: 'theirs.bin' },
          leaving.accessToken,
        );
        const kept = await upload(
          blog.instance,
          published,
          { bytes: binary, name: 'kept.bin' },
          author.accessToken,
        );
        expect([theirs.status, kept.status]).toEqual([201, 201]);
        const deleted = await blog.request('DELETE', `/api/users/${leaving.user.id}`, { token: admin });
        expect(deleted.status).toBe(200);
        expect(await storedFor(post)).toBe(0);
        const directory = blog.instance.settings.attachmentsDirectory;
        if (directory !== undefined) {
          while (existsSync(join(directory, post))) await new Promise((resolve) => setTimeout(resolve, 50));
          expect(existsSync(join(directory, published, kept.body.id))).toBe(true);
        }
        expect((await fetchFile(blog.origin, attachmentPath(published, kept.body.id))).bytes).toEqual(binary);
      });

      it('names a non-ASCII file in Content-Disposition with filename* (RFC 6266/8187) and an ASCII fallback', async () => {
        const disposition = (await fetchFile(blog.origin, path())).headers.get('content-disposition') ?? '';
        expect(disposition).toMatch(/^attachment; /);
        const extended = /filename\*=UTF-8''([^;\s]+)/.exec(disposition)?.[1];
        expect(extended).toBeDefined();
        expect(decodeURIComponent(extended ?? '')).toBe(name);
        const fallback = /filename="([^"]*)"/.exec(disposition)?.[1];
        expect(fallback).toMatch(/^[\x20-\x7e]+\.pdf$/);
      });

      it('sends one range with 206 and Content-Range', async () => {
        const middle = await fetchFile(blog.origin, path(), { headers: { range: 'bytes=100-199' } });
        expect(middle.status).toBe(206);
        expect(middle.headers.get('content-range')).toBe(`bytes 100-199/${binary.byteLength}`);
        expect(middle.headers.get('content-length')).toBe('100');
        expect(middle.bytes).toEqual(binary.slice(100, 200));
        const last = await fetchFile(blog.origin, path(), { headers: { range: 'bytes=-10' } });
        expect(last.status).toBe(206);
        expect(last.headers.get('content-range')).toBe(`bytes 990-999/${binary.byteLength}`);
        expect(last.bytes).toEqual(binary.slice(990));
      });

      it('answers a range past the end with 416 and Content-Range: bytes */size', async () => {
        const reply = await blog.request('GET', path(), {
          headers: { range: `bytes=${binary.byteLength}-` },
        });
        expectProblem(reply, 416, 'RANGE_NOT_SATISFIABLE');
        expect(reply.headers.get('content-range')).toBe(`bytes */${binary.byteLength}`);
      });

      it('answers HEAD with the same headers and no body', async () => {
        const [get, head] = await Promise.all([
          fetchFile(blog.origin, path()),
          fetchFile(blog.origin, path(), { method: 'HEAD' }),
        ]);
        expect(head.status).toBe(200);
        expect(head.bytes.byteLength).toBe(0);
        for (const header of [
          'content-type',
          'content-length',
          'content-disposition',
          'etag',
          'accept-ranges',
          'last-modified',
        ]) {
          expect(head.headers.get(header), header).toBe(get.headers.get(header));
        }
        expect(head.headers.get('content-length')).toBe(String(binary.byteLength));
      });

      it('answers 304 without a body to If-None-Match with the current tag', async () => {
        const tag = `"${sha256(binary)}"`;
        const reply = await blog.request('GET', path(), { headers: { 'if-none-match': tag } });
        expect(reply.status).toBe(304);
        expect(reply.text).toBe('');
        expect(reply.headers.get('etag')).toBe(tag);
        const stale = await fetchFile(blog.origin, path(), {
          headers: { 'if-none-match': `"${'0'.repeat(64)}"` },
        });
        expect(stale.status).toBe(200);
      });

      it('hides a draft’s attachments from all but its author and admins, as the draft itself', async () => {
        const draft = (await blog.createPost(author.accessToken)).id;
        // The typed client builds the form from a File.
        const stored = await blog.client(author.accessToken).posts.createAttachment({
          id: draft,
          file: new File(['draft notes'], 'draft.md', { type: 'text/markdown' }),
        });
        expect(stored).toMatchObject({ name: 'draft.md', mediaType: 'text/markdown', size: 11 });
        const draftPath = attachmentPath(draft, stored.id);
        expectProblem(await blog.get(draftPath, other.accessToken), 404, 'NOT_FOUND', 'No post with this id');
        expectProblem(await blog.get(draftPath), 404, 'NOT_FOUND', 'No post with this id');
        expect((await fetchFile(blog.origin, draftPath, { token: author.accessToken })).status).toBe(200);
        expect((await fetchFile(blog.origin, draftPath, { token: admin })).status).toBe(200);
        await blog.client(author.accessToken).posts.publishPost({ id: draft });
        const now = await fetchFile(blog.origin, draftPath);
        expect(now.status).toBe(200);
        expect(new TextDecoder().decode(now.bytes)).toBe('draft notes');
      });

      it('finds an attachment only under its own post', async () => {
        const elsewhere = (await blog.createPost(author.accessToken, { status: 'published' })).id;
        expectProblem(
          await blog.get(attachmentPath(elsewhere, file.id)),
          404,
          'NOT_FOUND',
          'No attachment with this id',
        );
        expectProblem(
          await blog.get(attachmentPath(published, crypto.randomUUID())),
          404,
          'NOT_FOUND',
          'No attachment with this id',
        );
        const malformed = expectProblem(
          await blog.get(attachmentPath(published, 'nope')),
          400,
          'VALIDATION_FAILED',
        );
        expect(malformed.errors?.map((error) => error.path)).toEqual(['attachmentId']);
      });

      it('removes a post’s attachments with the post', async () => {
        const post = (await blog.createPost(author.accessToken, { status: 'published' })).id;
        const posts = blog.client(author.accessToken).posts;
        const stored = await posts.createAttachment({
          id: post,
          file: new File(['short-lived'], 'gone.txt'),
        });
        expect(await storedFor(post)).toBe(1);
        expect(await posts.deletePost({ id: post })).toEqual({ success: true });
        expectProblem(await blog.get(attachmentPath(post, stored.id), admin), 404, 'NOT_FOUND');
        expect(await storedFor(post)).toBe(0);
      });
    });
  });
}

const postgres = engines().find((engine) => engine.name === 'PostgreSQL');

describe.skipIf(postgres === undefined || postgres.skip)(
  'attachments across two instances on PostgreSQL',
  () => {
    it('serves a file uploaded through one instance from the other', async () => {
      await withTwoInstances(postgres as NonNullable<typeof postgres>, async (first, second) => {
        const register = await first.request<{ accessToken: string }>('POST', '/api/auth/register', {
          json: { email: `files.${Date.now()}@example.com`, password: 'a-long-password-1', name: 'Across' },
        });
        const token = register.body.accessToken;
        const post = await first.request<{ id: string }>('POST', '/api/posts', {
          json: { title: 'Across instances', content: 'Hello', status: 'published' },
          token,
        });
        const stored = await upload(first, post.body.id, { bytes: binary, name: 'shared.bin' }, token);
        expect(stored.status, stored.text).toBe(201);
        const served = await fetchFile(second.origin, attachmentPath(post.body.id, stored.body.id));
        expect(served.status).toBe(200);
        expect(served.bytes).toEqual(binary);
      });
    });
  },
);
