/** GET /api/posts/events end to end (docs/blog.md, "The live feed"), on PGlite and PostgreSQL. */

import { rm } from 'node:fs/promises';
import pg from 'pg';
import { createClient, routeManifest } from 'proceedjs/client';
import { describe, expect, inject, it } from 'vitest';
import { api } from '../src/app.js';
import { attachmentsDirectoryOf, createPostgresDatabase } from './databases.js';
import {
  type BlogInstance,
  type Engine,
  engines,
  startBlog,
  uniqueEmail,
  useBlog,
  withTwoInstances,
} from './harness.js';
import { blogRuntime } from './runtimes.js';

interface ReadEvent {
  id: string;
  data: { id: string; title: string; excerpt: string };
}

/**
 * Opens the feed; `next()` gives its events one at a time, as they arrive. `asPolyfill`: the id
 * goes in the query string too, as EventSource polyfills send it.
 */
async function openFeed(origin: string, lastEventId?: string, asPolyfill = false) {
  const leave = new AbortController();
  const query =
    asPolyfill && lastEventId !== undefined ? `?lastEventId=${encodeURIComponent(lastEventId)}` : '';
  const response = await fetch(`${origin}/api/posts/events${query}`, {
    headers: lastEventId === undefined ? {} : { 'last-event-id': lastEventId },
    signal: leave.signal,
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  const reader = (response.body as ReadableStream<Uint8Array>)
    .pipeThrough(new TextDecoderStream() as ReadableWritablePair<string, Uint8Array>)
    .getReader();
  let buffer = '';
  return {
    async next(): Promise<ReadEvent> {
      while (true) {
        const end = buffer.indexOf('\n\n');
        if (end !== -1) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (frame.startsWith(':')) continue;
          const id = /^id: (.*)$/m.exec(frame)?.[1] ?? '';
          const data = JSON.parse(/^data: (.*)$/m.exec(frame)?.[1] ?? 'null') as ReadEvent['data'];
          return { id, data };
        }
        const { value, done } = await reader.read();
        if (done === true) throw new Error('the feed ended');
        buffer += value;
      }
    },
    close: () => leave.abort(),
  };
}

for (const engine of engines()) {
  describe.skipIf(engine.skip)(`the live feed on ${engine.name}`, () => {
    const blog = useBlog(engine);

    it('sends each post as it becomes published (created so, published, status updated), never a draft', async () => {
      const author = await blog.register({ name: 'Feed author' });
      const feed = await openFeed(blog.origin);
      try {
        const draft = await blog.createPost(author.accessToken, { title: 'Draft first', status: 'draft' });
        const live = await blog.createPost(author.accessToken, {
          title: 'Live at once',
          status: 'published',
        });
        const first = await feed.next();
        expect(first.data).toEqual({ id: live.id, title: 'Live at once', excerpt: expect.any(String) });
        const published = await blog.post(`/api/posts/${draft.id}/publish`, {}, author.accessToken);
        expect(published.status).toBe(200);
        const second = await feed.next();
        expect(second.data.id).toBe(draft.id);
        expect(BigInt(second.id)).toBeGreaterThan(BigInt(first.id));
        // Exactly the public view: no content, author or status.
        expect(Object.keys(second.data).sort()).toEqual(['excerpt', 'id', 'title']);
      } finally {
        feed.close();
      }
    });

    it('resumes after Last-Event-ID with what the client missed, then live events, a polyfill’s ?lastEventId= taken too', async () => {
      const author = await blog.register({ name: 'Resuming author' });
      const feed = await openFeed(blog.origin);
      const seen = await (async () => {
        try {
          await blog.createPost(author.accessToken, { title: 'Seen', status: 'published' });
          return await feed.next();
        } finally {
          feed.close();
        }
      })();
      const missed = await blog.createPost(author.accessToken, { title: 'Missed', status: 'published' });
      const resumed = await openFeed(blog.origin, seen.id, true);
      try {
        expect((await resumed.next()).data.id).toBe(missed.id);
        const later = await blog.createPost(author.accessToken, { title: 'Later', status: 'published' });
        expect((await resumed.next()).data.id).toBe(later.id);
      } finally {
        resumed.close();
      }
    });
  });
}

/** Registers a writer on `blog` and returns how it publishes a post (its id). */
async function writerOn(blog: BlogInstance): Promise<(title: string) => Promise<string>> {
  const registered = await blog.request<{ accessToken: string }>('POST', '/api/auth/register', {
    json: { email: uniqueEmail('feed'), password: 'a-long-password-1', name: 'Feed writer' },
  });
  expect(registered.status).toBe(201);
  return async (title) => {
    const created = await blog.request<{ id: string }>('POST', '/api/posts', {
      json: { title, content: 'x', status: 'published' },
      token: registered.body.accessToken,
    });
    expect(created.status).toBe(201);
    return created.body.id;
  };
}

/**
 * What a client that kept its Last-Event-ID must get from a feed that cannot place it: the next
 * post published, within a second (an id held above the feed's newest once held every live event
 * back).
 */
async function expectLiveAfter(blog: BlogInstance, lastEventId: string): Promise<ReadEvent> {
  const publish = await writerOn(blog);
  const feed = await openFeed(blog.origin, lastEventId);
  try {
    const title = `Live after ${lastEventId.trim()}`;
    const published = Date.now();
    const id = await publish(title);
    const next = await feed.next();
    expect(Date.now() - published).toBeLessThan(1000);
    expect(next.data).toEqual({ id, title, excerpt: 'x' });
    return next;
  } finally {
    feed.close();
  }
}

for (const engine of engines()) {
  describe.skipIf(engine.skip)(`resuming the live feed on ${engine.name}`, () => {
    const blog = useBlog(engine);

    it('sends live events to an id it cannot place: above its newest, padded, negative, not a number', async () => {
      const { instance } = blog;
      for (const id of ['999999999999999999', '100000000', '  5  ', '0', '-1', 'nonsense'])
        await expectLiveAfter(instance, id);
    });
  });
}

/** An engine whose database is `url`, kept when a blog on it closes. */
const on = (name: Engine['name'], url: string): Engine => ({
  name,
  skip: false,
  open: async () => ({ url, drop: async () => undefined }),
});

/**
 * Where an id from before a restart or a restore is placed is the blog's and its database's
 * work, the same on every runtime: on Node only. Each runtime serves the feed in the tests above,
 * the unplaceable ids included, and the resumption across instances below.
 */
const onNodeOnly = blogRuntime() !== undefined;

describe.skipIf(onNodeOnly)('resuming the live feed after a restart of a memory:// blog', () => {
  it('places the old id in another epoch and sends the new posts live', async () => {
    const before = await startBlog(on('PGlite', 'memory://'));
    let seen: ReadEvent;
    try {
      const publish = await writerOn(before);
      const feed = await openFeed(before.origin);
      try {
        await publish('Before the restart');
        seen = await feed.next();
      } finally {
        feed.close();
      }
    } finally {
      await before.close();
    }
    // A new database in memory: its ids start above the old epoch's, which it does not place.
    const after = await startBlog(on('PGlite', 'memory://'));
    try {
      const live = await expectLiveAfter(after, seen.id);
      // The new epoch's ids start above the old one's: the order the contract asks holds across it.
      expect(BigInt(live.id)).toBeGreaterThan(BigInt(seen.id));
    } finally {
      await after.close();
    }
  });
});

const postgresUrl = inject('postgresUrl');
describe.skipIf(postgresUrl === null || onNodeOnly)(
  'resuming the live feed on a restored PostgreSQL database',
  () => {
    it('sends live events to a client whose id the backup never held', async () => {
      const adminUrl = postgresUrl as string;
      const original = await createPostgresDatabase(adminUrl);
      const backupName = `blog_backup_${Date.now().toString(36)}`;
      const backupUrl = new URL(original.url);
      backupUrl.pathname = `/${backupName}`;
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      try {
        const first = await startBlog(on('PostgreSQL', original.url));
        try {
          await (await writerOn(first))('In the backup');
        } finally {
          await first.close();
        }
        // The backup: a copy of the database as it is now (no connection is open to it).
        await admin.query(
          `CREATE DATABASE ${backupName} TEMPLATE ${new URL(original.url).pathname.slice(1)}`,
        );
        const second = await startBlog(on('PostgreSQL', original.url));
        let seen: ReadEvent;
        try {
          const publish = await writerOn(second);
          const feed = await openFeed(second.origin);
          try {
            await publish('After the backup');
            await publish('Also after it');
            await feed.next();
            seen = await feed.next();
          } finally {
            feed.close();
          }
        } finally {
          await second.close();
        }
        // The restore: the blog now runs on the backup, whose newest id is below the client's.
        const restored = await startBlog(on('PostgreSQL', backupUrl.toString()));
        try {
          await expectLiveAfter(restored, seen.id);
        } finally {
          await restored.close();
        }
      } finally {
        await admin.query(`DROP DATABASE IF EXISTS ${backupName} WITH (FORCE)`);
        await rm(attachmentsDirectoryOf(backupUrl.toString()), { recursive: true, force: true });
        await admin.end();
        await original.drop();
      }
    });
  },
);

const postgres = engines().find((engine) => engine.name === 'PostgreSQL');
describe.skipIf(postgres === undefined || postgres.skip)(
  'the live feed across two instances on PostgreSQL',
  () => {
    it('delivers a post published through one instance to the subscribers of the other', async () => {
      await withTwoInstances(postgres as NonNullable<typeof postgres>, async (first, second) => {
        const feed = await openFeed(second.origin);
        try {
          const register = await first.request<{ accessToken: string }>('POST', '/api/auth/register', {
            json: {
              email: `feed.${Date.now()}@example.com`,
              password: 'a-long-password-1',
              name: 'Across',
            },
          });
          const created = await first.request<{ id: string }>('POST', '/api/posts', {
            json: { title: 'Across instances', content: 'Hello', status: 'published' },
            token: register.body.accessToken,
          });
          expect(created.status).toBe(201);
          expect((await feed.next()).data.id).toBe(created.body.id);
        } finally {
          feed.close();
        }
      });
    });

    it('keeps a typed client’s feed whole through a rolling restart: it resumes on the other instance', async () => {
      const engine = postgres as NonNullable<typeof postgres>;
      // The second instance owns the database (its close drops it): the first one leaves first.
      const second = await startBlog(engine);
      const first = await startBlog({
        ...engine,
        open: async () => ({ url: second.databaseUrl, drop: async () => undefined }),
      });
      let firstClosed = false;
      try {
        // The load balancer: the first instance while it serves, the second once it is gone.
        const balanced: typeof fetch = (input, init) => {
          const url = new URL(input instanceof Request ? input.url : String(input));
          url.host = new URL(firstClosed ? second.origin : first.origin).host;
          return fetch(url, init);
        };
        const client = createClient<typeof api>({
          baseUrl: first.origin,
          routes: routeManifest(api),
          fetch: balanced,
        });
        const writer = await second.request<{ accessToken: string }>('POST', '/api/auth/register', {
          json: {
            email: `rolling.${Date.now()}@example.com`,
            password: 'a-long-password-1',
            name: 'Rolling',
          },
        });
        const publish = async (title: string) =>
          (
            await second.request<{ id: string }>('POST', '/api/posts', {
              json: { title, content: 'x', status: 'published' },
              token: writer.body.accessToken,
            })
          ).body.id;
        const stop = new AbortController();
        const events = await client.posts.postEvents({}, { signal: stop.signal });
        const received: string[] = [];
        const expected = [await publish('Before the restart')];
        for await (const post of events) {
          received.push(post.id);
          if (received.length === 1) {
            // The first instance shuts down: its stream ends with a close event, and two posts
            // are published while the client reconnects to the second instance.
            firstClosed = true;
            const closing = first.close();
            expected.push(await publish('During the restart'), await publish('Also during it'));
            await closing;
          }
          if (received.length === 3) expected.push(await publish('After the restart'));
          if (received.length === 4) stop.abort();
        }
        expect(received).toEqual(expected);
      } finally {
        await second.close();
        if (!firstClosed) await first.close();
      }
    });
  },
);
