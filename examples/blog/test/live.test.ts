/**
 * GET /api/posts/live end to end (docs/blog.md, "The live socket"): a WebSocket that follows
 * authors, on PGlite and PostgreSQL, and across two instances on PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { engines, uniqueEmail, useBlog, withTwoInstances } from './harness.js';

/** An open live socket: its messages in order, and its close. */
async function openLive(origin: string, token?: string) {
  const query = token === undefined ? '' : `?access_token=${encodeURIComponent(token)}`;
  const ws = new WebSocket(`${origin.replace(/^http/, 'ws')}/api/posts/live${query}`);
  const received: unknown[] = [];
  let wake: (() => void) | undefined;
  ws.on('message', (data) => {
    received.push(JSON.parse(String(data)));
    wake?.();
  });
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return {
    ws,
    closed,
    send: (message: unknown) => ws.send(typeof message === 'string' ? message : JSON.stringify(message)),
    async next(): Promise<unknown> {
      const deadline = Date.now() + 5000;
      while (received.length === 0) {
        if (Date.now() > deadline) throw new Error('no message within 5 s');
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 100);
        });
      }
      return received.shift();
    },
    /** Nothing arrives within `ms`. */
    async quiet(ms: number): Promise<void> {
      await new Promise((resolve) => setTimeout(resolve, ms));
      expect(received).toEqual([]);
    },
  };
}

/** Subscribes and waits until the server has taken it (an invalid message after it is answered). */
async function follow(live: Awaited<ReturnType<typeof openLive>>, authorId: string): Promise<void> {
  live.send({ type: 'subscribe', authorId });
  live.send({ type: 'ping' });
  expect(await live.next()).toMatchObject({ type: 'error', problem: { code: 'VALIDATION_FAILED' } });
}

const publish = (blog: ReturnType<typeof useBlog>, token: string, title: string) =>
  blog.createPost(token, { title, status: 'published' });

for (const engine of engines()) {
  describe.skipIf(engine.skip)(`the live socket on ${engine.name}`, () => {
    const blog = useBlog(engine);

    it("sends the public view of each post a followed author publishes, and nothing of another's or of a draft", async () => {
      const followed = await blog.register({ name: 'Followed' });
      const other = await blog.register({ name: 'Other' });
      // A reader signs in with the token in the query, as a browser's WebSocket must.
      const live = await openLive(blog.origin, followed.accessToken);
      try {
        await follow(live, followed.user.id);
        await blog.createPost(followed.accessToken, { title: 'A draft', status: 'draft' });
        await publish(blog, other.accessToken, 'Not followed');
        const post = await publish(blog, followed.accessToken, 'Followed and live');
        expect(await live.next()).toEqual({
          type: 'post',
          post: { id: post.id, title: 'Followed and live', excerpt: expect.any(String) },
        });
        live.send({ type: 'unsubscribe', authorId: followed.user.id });
        live.send('not json');
        expect(await live.next()).toMatchObject({ type: 'error', problem: { code: 'INVALID_JSON' } });
        await publish(blog, followed.accessToken, 'After unsubscribing');
        await live.quiet(300);
      } finally {
        live.ws.close();
      }
    });

    it('answers what is not a subscription with an error frame, a message over 4 KiB too, and closes with 1008 at the tenth', async () => {
      const live = await openLive(blog.origin);
      live.send({ type: 'subscribe', authorId: 'not-a-uuid' });
      expect(await live.next()).toMatchObject({
        type: 'error',
        problem: { status: 400, code: 'VALIDATION_FAILED' },
      });
      live.send({ type: 'subscribe', authorId: `${'0'.repeat(4096)}` });
      expect(await live.next()).toMatchObject({
        type: 'error',
        problem: { status: 413, code: 'PAYLOAD_TOO_LARGE' },
      });
      for (let sent = 3; sent <= 10; sent++) {
        live.send({ type: 'shout' });
        expect(await live.next()).toMatchObject({ type: 'error' });
      }
      expect(await live.closed).toBe(1008);
    });

    it('follows at most 100 authors: the 101st subscription is refused, the socket stays open', async () => {
      const live = await openLive(blog.origin);
      try {
        // In two halves, the next sent once the server answered the first: 101 messages arriving
        // in one read, before the handler could take any, would close the socket as a flood
        // (docs/sockets.md, `maxQueued`).
        for (const half of [0, 1]) {
          for (let index = 0; index < 50; index++)
            live.send({ type: 'subscribe', authorId: crypto.randomUUID() });
          live.send({ type: 'ping' });
          expect(await live.next(), `after half ${half}`).toMatchObject({
            type: 'error',
            problem: { code: 'VALIDATION_FAILED', errors: [{ path: 'type' }] },
          });
        }
        live.send({ type: 'subscribe', authorId: crypto.randomUUID() });
        expect(await live.next()).toMatchObject({
          type: 'error',
          problem: { code: 'VALIDATION_FAILED', errors: [{ path: 'authorId' }] },
        });
        live.send({ type: 'unsubscribe', authorId: crypto.randomUUID() });
        await live.quiet(200);
      } finally {
        live.ws.close();
      }
    });

    it('refuses a plain GET with 426 and a forged token before the upgrade with 401', async () => {
      const plain = await fetch(`${blog.origin}/api/posts/live`);
      expect(plain.status).toBe(426);
      expect(plain.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
      await expect(openLive(blog.origin, 'not.a.token')).rejects.toThrow(/401/);
    });
  });
}

const postgres = engines().find((engine) => engine.name === 'PostgreSQL');
describe.skipIf(postgres === undefined || postgres.skip)(
  'the live socket across two instances on PostgreSQL',
  () => {
    it('sends a post published through one instance to a socket open on the other', async () => {
      await withTwoInstances(postgres as NonNullable<typeof postgres>, async (first, second) => {
        const registered = await first.request<{ accessToken: string; user: { id: string } }>(
          'POST',
          '/api/auth/register',
          { json: { email: uniqueEmail('live'), password: 'a-long-password-1', name: 'Across' } },
        );
        expect(registered.status).toBe(201);
        const live = await openLive(second.origin);
        try {
          await follow(live, registered.body.user.id);
          const created = await first.request<{ id: string }>('POST', '/api/posts', {
            json: { title: 'Published on the first', content: 'x', status: 'published' },
            token: registered.body.accessToken,
          });
          expect(created.status).toBe(201);
          expect(await live.next()).toMatchObject({ type: 'post', post: { id: created.body.id } });
        } finally {
          live.ws.close();
        }
      });
    });
  },
);
