/** GET /api/posts/events end to end (docs/blog.md, "The live feed"), on PGlite and PostgreSQL. */
import { createClient, routeManifest } from 'proceedjs/client';
import { describe, expect, it } from 'vitest';
import { api } from '../src/app.js';
import { engines, startBlog, useBlog, withTwoInstances } from './harness.js';

interface ReadEvent {
  id: string;
  data: { id: string; title: string; excerpt: string };
}

/** Opens the feed; `next()` gives its events one at a time, as they arrive. */
async function openFeed(origin: string, lastEventId?: string) {
  const leave = new AbortController();
  const response = await fetch(`${origin}/api/posts/events`, {
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

    it('resumes after Last-Event-ID with what the client missed, then live events', async () => {
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
      const resumed = await openFeed(blog.origin, seen.id);
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
