/**
 * Entity tags and compression on the blog over real sockets, on both engines: a post's tag
 * changes with every edit and only then, a poll with the tag it holds costs a 304 with no body,
 * a large page of posts travels compressed when the client accepts it, and a write with
 * `If-Match` applies only to the version it names.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { engines, expectProblem, useBlog } from './harness.js';

/** A raw request: Node's fetch would ask for and undo the compression itself. */
async function raw(url: string, headers: Record<string, string> = {}) {
  const { request } = await import('node:http');
  return new Promise<{
    status: number;
    headers: Record<string, string | string[] | undefined>;
    body: Buffer;
  }>((resolve, reject) => {
    request(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
      );
    })
      .on('error', reject)
      .end();
  });
}

describe.each(engines())('entity tags and compression on $name', (engine) => {
  if (engine.skip) {
    it.skip('needs PostgreSQL', () => undefined);
    return;
  }
  const blog = useBlog(engine);

  it('tags a post, answers 304 while it is unchanged, and a new tag after an edit', async () => {
    const writer = await blog.register();
    const post = await blog.createPost(writer.accessToken, { title: 'Tagged', status: 'published' });
    const url = `${blog.origin}/api/posts/${post.id}`;
    const first = await raw(url);
    const tag = first.headers.etag as string;
    expect(first.status).toBe(200);
    // The post's version, then a hash of the body (docs/http-caching.md).
    expect(tag).toMatch(/^"1\.[A-Za-z0-9_-]+"$/);

    const unchanged = await raw(url, { 'if-none-match': tag });
    expect(unchanged.status).toBe(304);
    expect(unchanged.body.length).toBe(0);

    await blog.client(writer.accessToken).posts.updatePost({ id: post.id, data: { title: 'Tagged again' } });
    const edited = await raw(url, { 'if-none-match': tag });
    expect(edited.status).toBe(200);
    expect(edited.headers.etag).not.toBe(tag);
    expect(JSON.parse(edited.body.toString())).toMatchObject({ title: 'Tagged again' });
  });

  it('sends a page of 100 posts compressed to a client that accepts it, identical once inflated', async () => {
    const writer = await blog.register();
    const client = blog.client(writer.accessToken);
    await Promise.all(
      Array.from({ length: 100 }, (_, index) =>
        client.posts.createPost({
          title: `Post ${index}`,
          content: 'Words '.repeat(40),
          status: 'published',
        }),
      ),
    );
    const url = `${blog.origin}/api/posts?limit=100`;
    const plain = await raw(url);
    expect(plain.headers['content-encoding']).toBeUndefined();
    const gzip = await raw(url, { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.body).equals(plain.body)).toBe(true);
    const brotli = await raw(url, { 'accept-encoding': 'br' });
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(brotli.body).equals(plain.body)).toBe(true);
    expect(brotli.body.length).toBeLessThan(plain.body.length / 3);
    expect(gzip.headers.etag).toBe(`${(plain.headers.etag as string).slice(0, -1)}-gzip"`);
  });

  it('applies a post edit sent with the tag of the version read, and refuses the stale tag with 412', async () => {
    const writer = await blog.register();
    const post = await blog.createPost(writer.accessToken, { title: 'Edited twice', status: 'published' });
    const read = await blog.request('GET', `/api/posts/${post.id}`);
    const tag = read.headers.get('etag') as string;

    const first = await blog.request('PUT', `/api/posts/${post.id}`, {
      token: writer.accessToken,
      headers: { 'if-match': tag },
      json: { title: 'First editor' },
    });
    expect(first.status, first.text).toBe(200);
    const newTag = first.headers.get('etag') as string;
    expect(newTag).toMatch(/^"2\.[A-Za-z0-9_-]+"$/);

    const second = await blog.request('PUT', `/api/posts/${post.id}`, {
      token: writer.accessToken,
      headers: { 'if-match': tag },
      json: { title: 'Second editor, lost update' },
    });
    expectProblem(second, 412, 'PRECONDITION_FAILED');
    for (const stale of [
      ['POST', `/api/posts/${post.id}/archive`],
      ['DELETE', `/api/posts/${post.id}`],
    ] as const) {
      const refused = await blog.request(stale[0], stale[1], {
        token: writer.accessToken,
        headers: { 'if-match': tag },
      });
      expectProblem(refused, 412, 'PRECONDITION_FAILED');
    }
    const now = await blog.request<{ title: string; status: string }>('GET', `/api/posts/${post.id}`);
    expect(now.body).toMatchObject({ title: 'First editor' });
    expect(now.headers.get('etag')?.startsWith('"2.')).toBe(true);

    // The tag of the new version, from a read (public view) or from the write (author's view).
    const archived = await blog.request('POST', `/api/posts/${post.id}/archive`, {
      token: writer.accessToken,
      headers: { 'if-match': now.headers.get('etag') as string },
    });
    expect(archived.status, archived.text).toBe(200);
    const deleted = await blog.request('DELETE', `/api/posts/${post.id}`, {
      token: writer.accessToken,
      headers: { 'if-match': archived.headers.get('etag') as string },
    });
    expect(deleted.status, deleted.text).toBe(200);
  });

  it('lets one of two editors holding the same tag through, on any number of tries', async () => {
    const writer = await blog.register();
    const post = await blog.createPost(writer.accessToken, { title: 'Contended' });
    const tag = (
      await blog.request('GET', `/api/posts/${post.id}`, { token: writer.accessToken })
    ).headers.get('etag') as string;
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        blog.request('PUT', `/api/posts/${post.id}`, {
          token: writer.accessToken,
          headers: { 'if-match': tag },
          json: { title: `Editor ${index}` },
        }),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 412, 412, 412, 412, 412, 412, 412]);
    const stored = await blog.request<{ version?: number }>('GET', `/api/posts/${post.id}`, {
      token: writer.accessToken,
    });
    expect(stored.headers.get('etag')?.startsWith('"2.')).toBe(true);
  });

  it('versions users too: a stale tag on a profile edit or a delete is 412 and changes nothing', async () => {
    const user = await blog.register();
    const read = await blog.request('GET', `/api/users/${user.user.id}`);
    const tag = read.headers.get('etag') as string;
    const renamed = await blog.request('PUT', `/api/users/${user.user.id}`, {
      token: user.accessToken,
      headers: { 'if-match': tag },
      json: { name: 'Renamed once' },
    });
    expect(renamed.status, renamed.text).toBe(200);
    const stale = await blog.request('PUT', `/api/users/${user.user.id}`, {
      token: user.accessToken,
      headers: { 'if-match': tag },
      json: { name: 'Renamed twice' },
    });
    expectProblem(stale, 412, 'PRECONDITION_FAILED');
    const refused = await blog.request('DELETE', `/api/users/${user.user.id}`, {
      token: await blog.adminToken(),
      headers: { 'if-match': tag },
    });
    expectProblem(refused, 412, 'PRECONDITION_FAILED');
    const now = await blog.request<{ name: string }>('GET', `/api/users/${user.user.id}`);
    expect(now.body.name).toBe('Renamed once');
  });

  it('refuses If-Match with a tag on a write that keeps no versions, and answers it before any change', async () => {
    const writer = await blog.register();
    const refused = await blog.request('POST', '/api/posts', {
      token: writer.accessToken,
      headers: { 'if-match': '"1.x"' },
      json: { title: 'Never written', content: 'x' },
    });
    expectProblem(refused, 412, 'PRECONDITION_FAILED', /keeps no versions/);
    const mine = await blog.request<{ data: unknown[] }>('GET', `/api/posts?authorId=${writer.user.id}`, {
      token: writer.accessToken,
    });
    expect(mine.body.data).toEqual([]);
  });
});
