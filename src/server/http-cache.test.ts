import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { versionedRecords } from '../../test/fixtures/versioned-records.js';
import { procedure, procedures } from '../core/procedure.js';
import { entityTag, matchingTag } from '../http/entity-tags.js';
import type { App, AppOptions } from './app.js';
import { createApp } from './create-app.js';

const apps: App[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

let title = 'first';
const notes = procedures('notes', {
  listNotes: procedure()
    .input(z.object({ count: z.number().int().min(0).max(500).default(1) }))
    .query(({ input }) =>
      Array.from({ length: input.count }, (_, id) => ({ id, title: `A note with a title, number ${id}` })),
    ),
  getNote: procedure().query(() => ({ id: 1, title })),
  createNote: procedure().mutation(() => ({ id: 2 })),
});

function app(options: AppOptions<object> = {}): App {
  const created = createApp({ logger: false, ...options }).mount([notes]);
  apps.push(created);
  return created;
}

describe('entity tags', () => {
  it('tags every 200 to a GET with a strong hash of the exact body, and only those', async () => {
    const served = app();
    title = 'first';
    const first = await served.inject('/api/notes/1');
    expect(first.headers.etag).toBe(entityTag(first.body));
    expect(first.headers.etag).toMatch(/^"[0-9a-f]{16}"$/);
    expect((await served.inject('/api/notes/1')).headers.etag).toBe(first.headers.etag);
    title = 'second';
    expect((await served.inject('/api/notes/1')).headers.etag).not.toBe(first.headers.etag);

    expect((await served.inject({ method: 'HEAD', url: '/api/notes/1' })).headers.etag).toMatch(/^"/);
    expect((await served.inject({ method: 'POST', url: '/api/notes' })).headers.etag).toBeUndefined();
    expect((await served.inject('/api/notes?count=-1')).headers.etag).toBeUndefined();
  });

  it('answers 304 with no body to an If-None-Match that holds the current tag', async () => {
    const served = app();
    title = 'kept';
    const { etag } = (await served.inject('/api/notes/1')).headers;
    for (const held of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await served.inject({
        url: '/api/notes/1',
        headers: { 'if-none-match': held as string },
      });
      expect(again.statusCode, held).toBe(304);
      expect(again.body).toBe('');
      expect(again.headers.etag).toBeDefined();
      expect(again.headers['content-type']).toBeUndefined();
    }
    const changed = await served.inject({ url: '/api/notes/1', headers: { 'if-none-match': '"stale"' } });
    expect(changed.statusCode).toBe(200);
    expect(changed.json()).toEqual({ id: 1, title: 'kept' });
  });

  it('can be turned off', async () => {
    const served = app({ entityTags: false });
    const answer = await served.inject({ url: '/api/notes/1', headers: { 'if-none-match': '*' } });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers.etag).toBeUndefined();
  });

  it('compares weakly and ignores a coding suffix', () => {
    expect(matchingTag('W/"abc"', '"abc"')).toBe('W/"abc"');
    expect(matchingTag('"abc-gzip"', '"abc"')).toBe('"abc-gzip"');
    expect(matchingTag('"abd", "abc-br"', '"abc"')).toBe('"abc-br"');
    expect(matchingTag('"ab"', '"abc"')).toBeUndefined();
    // A tag that itself ends in "-br" (a version may hold '-') still matches itself.
    expect(matchingTag('"abc-br"', '"abc-br"')).toBe('"abc-br"');
    expect(matchingTag('"abc-br-gzip"', '"abc-br"')).toBe('"abc-br-gzip"');
    expect(matchingTag(undefined, '"abc"')).toBeUndefined();
  });
});

describe('compression', () => {
  it('compresses answers above 1 KiB as the client accepts, and tags each coding apart', async () => {
    const served = app();
    const plain = await served.inject('/api/notes?count=100');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.length).toBeGreaterThan(3000);

    const gzip = await served.inject({ url: '/api/notes?count=100', headers: { 'accept-encoding': 'gzip' } });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gzip.headers.vary).toContain('accept-encoding');
    expect(gunzipSync(gzip.rawPayload).toString()).toBe(plain.body);
    expect(gzip.rawPayload.length).toBeLessThan(plain.rawPayload.length / 4);
    expect(gzip.headers.etag).toBe(`${(plain.headers.etag as string).slice(0, -1)}-gzip"`);

    const brotli = await served.inject({
      url: '/api/notes?count=100',
      headers: { 'accept-encoding': 'gzip, br' },
    });
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(brotli.rawPayload).toString()).toBe(plain.body);

    // The client revalidates the gzip copy it holds: 304, naming that copy.
    const again = await served.inject({
      url: '/api/notes?count=100',
      headers: { 'accept-encoding': 'gzip', 'if-none-match': gzip.headers.etag as string },
    });
    expect(again.statusCode).toBe(304);
    expect(again.headers.etag).toBe(gzip.headers.etag);
    expect(again.headers.vary).toBe('accept-encoding');
  });

  it('leaves small answers, clients that do not ask, and apps that turn it off alone', async () => {
    const served = app();
    const small = await served.inject({ url: '/api/notes?count=2', headers: { 'accept-encoding': 'gzip' } });
    expect(small.headers['content-encoding']).toBeUndefined();
    const off = app({ compression: false });
    const large = await off.inject({ url: '/api/notes?count=100', headers: { 'accept-encoding': 'gzip' } });
    expect(large.headers['content-encoding']).toBeUndefined();
    const low = app({ compression: { threshold: 10 } });
    const tiny = await low.inject({ url: '/api/notes?count=2', headers: { 'accept-encoding': 'gzip' } });
    expect(tiny.headers['content-encoding']).toBe('gzip');
    expect(() => createApp({ compression: { threshold: -1 } })).toThrow(/compression.threshold/);
  });

  it('does not inflate compressed request bodies: JSON only, as before', async () => {
    const served = app();
    const answer = await served.inject({
      method: 'POST',
      url: '/api/notes',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0]),
    });
    expect(answer.statusCode).toBeGreaterThanOrEqual(400);
    expect(answer.statusCode).toBeLessThan(500);
    expect(answer.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  });
});

describe('versioned procedures over HTTP', () => {
  const { record, collection: versioned } = versionedRecords();
  const served = (options: AppOptions<object> = {}) => {
    const created = createApp({ logger: false, ...options }).mount([versioned]);
    apps.push(created);
    return created;
  };

  it('tags a read with its version before the body hash, even with entityTags off', async () => {
    for (const entityTags of [true, false]) {
      const read = await served({ entityTags }).inject('/api/records/a');
      expect(read.headers.etag).toBe(entityTag(read.body, String(record.version)));
      expect(read.headers.etag).toMatch(/^"\d+\.[0-9a-f]{16}"$/);
    }
  });

  it('round-trips a read’s tag into If-Match, answers the write with the new tag, refuses the old one', async () => {
    const app = served();
    const read = await app.inject('/api/records/a');
    const write = await app.inject({
      method: 'PUT',
      url: '/api/records/a',
      headers: { 'if-match': read.headers.etag as string },
      payload: { title: 'changed' },
    });
    expect(write.statusCode).toBe(200);
    expect(write.headers.etag).toBe(entityTag(write.body, String(record.version)));
    const stale = await app.inject({
      method: 'PUT',
      url: '/api/records/a',
      headers: { 'if-match': read.headers.etag as string },
      payload: { title: 'lost update' },
    });
    expect(stale.statusCode).toBe(412);
    expect(stale.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(stale.json()).toMatchObject({ code: 'PRECONDITION_FAILED', status: 412 });
    expect(record.title).toBe('changed');
  });

  it('compares If-Match on a read strongly with the whole tag', async () => {
    const app = served();
    const { etag } = (await app.inject('/api/records/a')).headers;
    const held = await app.inject({ url: '/api/records/a', headers: { 'if-match': etag as string } });
    expect(held.statusCode).toBe(200);
    for (const stale of ['"1.x"', `W/${etag}`]) {
      const refused = await app.inject({ url: '/api/records/a', headers: { 'if-match': stale } });
      expect(refused.statusCode, stale).toBe(412);
    }
    const unversioned = await app.inject({ url: '/api/notes/1' });
    expect(unversioned.statusCode).toBe(404);
  });

  it('answers If-Match on a write that keeps no versions with 412, except *', async () => {
    const app = served();
    const tagged = await app.inject({
      method: 'PUT',
      url: '/api/records/a/log',
      headers: { 'if-match': '"1.x"' },
    });
    expect(tagged.statusCode).toBe(412);
    expect(tagged.json().detail).toMatch(/keeps no versions/);
    const any = await app.inject({ method: 'PUT', url: '/api/records/a/log', headers: { 'if-match': '*' } });
    expect(any.statusCode).toBe(200);
  });
});
