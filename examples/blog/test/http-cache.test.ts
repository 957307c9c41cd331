/**
 * Entity tags and compression on the blog over real sockets, on both engines: a post's tag
 * changes with every edit and only then, a poll with the tag it holds costs a 304 with no body,
 * and a large page of posts travels compressed when the client accepts it.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { engines, useBlog } from './harness.js';

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
    expect(tag).toMatch(/^"[A-Za-z0-9_-]+"$/);

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
});
