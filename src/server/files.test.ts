/** File answers on the Node server and through app.fetch: files on disk, and a slow reader. */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { settled } from '../../test/settled.js';
import { download, fileAt, sendFile } from '../core/files.js';
import { procedure, procedures } from '../core/procedure.js';
import { createApp } from './create-app.js';

const folder = mkdtempSync(join(tmpdir(), 'proceed-files-'));
const onDisk = join(folder, 'report.csv');
const content = Array.from({ length: 1000 }, (_, index) => `${index},row ${index}\n`).join('');
writeFileSync(onDisk, content);
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** How many bytes the endless stream has handed out so far, and the ids of those that have ended. */
let produced = 0;
const endlessEnded = new Set<string>();
const chunk = new Uint8Array(64 * 1024);

const files = procedures('files', {
  getFile: procedure()
    .input(z.object({ id: z.string() }))
    .output(download({ types: ['text/csv'] }))
    .query(() => fileAt(onDisk, { type: 'text/csv', name: 'report.csv' })),
  endlessFile: procedure()
    .rest({ method: 'GET', path: '/files/:id/endless' })
    .input(z.object({ id: z.string() }))
    .output(download())
    .query(({ input }) => {
      async function* forever() {
        try {
          while (true) {
            produced += chunk.byteLength;
            yield chunk;
          }
        } finally {
          endlessEnded.add(input.id);
        }
      }
      return sendFile(forever(), { type: 'application/octet-stream' });
    }),
});

describe('a file on disk', () => {
  const app = createApp({ logger: false }).mount([files]);

  it('is sent whole and in ranges, with its size and date, on Node and through app.fetch', async () => {
    const node = await app.inject({ method: 'GET', url: '/api/files/1', headers: { range: 'bytes=10-29' } });
    expect(node.statusCode).toBe(206);
    expect(node.body).toBe(content.slice(10, 30));
    expect(node.headers['content-range']).toBe(`bytes 10-29/${content.length}`);
    const fetched = await app.fetch(new Request('http://x/api/files/1'));
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-length')).toBe(String(content.length));
    expect(fetched.headers.get('last-modified')).toEqual(expect.any(String));
    expect(await fetched.text()).toBe(content);
    const head = await app.inject({ method: 'HEAD', url: '/api/files/1' });
    expect(head.headers['content-length']).toBe(String(content.length));
    expect(head.body).toBe('');
  });
});

describe('a client that reads slowly', () => {
  const app = createApp({ logger: false }).mount([files]);
  let port: number;
  beforeAll(async () => {
    port = Number(new URL(await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false })).port);
  });
  afterAll(() => app.close());

  it('is sent no faster than it reads on Node: the stream stops while the socket is full', async () => {
    produced = 0;
    const response = await new Promise<import('node:http').IncomingMessage>((resolve) => {
      httpRequest({ port, host: '127.0.0.1', path: '/api/files/1/endless' }, resolve).end();
    });
    response.pause();
    // The server runs ahead until the socket's buffers are full, then stops reading the stream.
    await settled(
      () => produced,
      () => new Promise((resolve) => setTimeout(resolve, 200)),
    );
    expect(produced).toBeLessThan(16 * 1024 * 1024);
    response.destroy();
  });

  it('is pulled no faster than it reads through app.fetch', async () => {
    produced = 0;
    const response = await app.fetch(new Request('http://x/api/files/1/endless'));
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    await settled(
      () => produced,
      () => new Promise((resolve) => setImmediate(resolve)),
    );
    // One chunk read, at most a couple asked for ahead: nothing piles up in memory.
    expect(produced).toBeLessThanOrEqual(3 * chunk.byteLength);
    await reader.cancel();
  });
});

describe.each(['node', 'fastify'] as const)('a client that stops reading, on Node (%s)', (adapter) => {
  const app = createApp({ logger: false, timeouts: { send: 1000 } }).mount([files]);
  if (adapter === 'fastify') void app.server;
  let port: number;
  beforeAll(async () => {
    port = Number(new URL(await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false })).port);
  });
  afterAll(() => app.close());

  /** The endless download `id`, its body paused; `closed` turns true once its connection has closed. */
  const download = async (id: string) => {
    const response = await new Promise<import('node:http').IncomingMessage>((resolve) => {
      httpRequest({ port, host: '127.0.0.1', path: `/api/files/${id}/endless` }, resolve).end();
    });
    response.pause();
    response.on('error', () => undefined);
    const connection = { response, closed: false };
    response.socket.once('close', () => {
      connection.closed = true;
    });
    return connection;
  };

  it('is let go after timeouts.send: its connection closed, its stream ended', async () => {
    const connection = await download(`stalled-${adapter}`);
    await expect.poll(() => endlessEnded.has(`stalled-${adapter}`), { timeout: 5000 }).toBe(true);
    // What the socket held still reaches the client, then the connection's end.
    connection.response.resume();
    await expect.poll(() => connection.closed, { timeout: 5000 }).toBe(true);
  });

  it('is not, while it reads on, with pauses shorter than the timeout', async () => {
    const { response } = await download(`slow-${adapter}`);
    for (let step = 0; step < 8; step++) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      response.resume();
      await new Promise((resolve) => setTimeout(resolve, 50));
      response.pause();
    }
    expect(endlessEnded.has(`slow-${adapter}`)).toBe(false);
    response.destroy();
    await expect.poll(() => endlessEnded.has(`slow-${adapter}`)).toBe(true);
  });
});

describe('bytes that are not sent', () => {
  let cancelled = 0;
  const streams = procedures('streams', {
    getStream: procedure()
      .input(z.object({ id: z.string() }))
      .output(download())
      .query(() =>
        sendFile(
          new ReadableStream<Uint8Array>({
            pull: (controller) => controller.enqueue(new Uint8Array(8)),
            cancel: () => {
              cancelled++;
            },
          }),
          { type: 'application/octet-stream', etag: 'fixed' },
        ),
      ),
    growingFile: procedure()
      .rest({ method: 'GET', path: '/streams/:id/growing' })
      .input(z.object({ id: z.string() }))
      .output(download())
      .query(async () => {
        const answer = await fileAt(onDisk, { type: 'text/csv' });
        appendFileSync(onDisk, 'appended after the answer was made\n');
        return answer;
      }),
  });
  const app = createApp({ logger: false }).mount([streams]);

  it('are let go on HEAD and on 304, on Node and through app.fetch: a stream is cancelled, not left open', async () => {
    cancelled = 0;
    await app.inject({ method: 'HEAD', url: '/api/streams/1' });
    await app.inject({ method: 'GET', url: '/api/streams/1', headers: { 'if-none-match': '"fixed"' } });
    await app.fetch(new Request('http://x/api/streams/1', { method: 'HEAD' }));
    const held = await app.fetch(
      new Request('http://x/api/streams/1', { headers: { 'if-none-match': '"fixed"' } }),
    );
    expect(held.status).toBe(304);
    expect(cancelled).toBe(4);
  });

  it('of a file that grows meanwhile: what the headers announced is sent, no more', async () => {
    const before = content.length;
    const answer = await app.inject({ method: 'GET', url: '/api/streams/1/growing' });
    expect(answer.headers['content-length']).toBe(String(before));
    expect(answer.body).toBe(content);
  });

  it('answers HEAD with a Range as a whole GET would, and ignores a date that is no HTTP date', async () => {
    const head = await app.inject({
      method: 'HEAD',
      url: '/api/streams/1/growing',
      headers: { range: 'bytes=0-1' },
    });
    expect(head.statusCode).toBe(200);
    // Date.parse('9999') is the year 9999, later than any file: a 304 if it were taken for a date.
    const odd = await app.inject({
      method: 'GET',
      url: '/api/streams/1/growing',
      headers: { 'if-modified-since': '9999' },
    });
    expect(odd.statusCode).toBe(200);
  });
});
