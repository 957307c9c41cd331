/**
 * The typed client's live socket reconnecting, on every runtime the blog runs on (Node, Bun and
 * Deno: vitest.config.ts): two instances on one PostgreSQL database behind a TCP proxy; the
 * connection to the first is dropped (1006) while the proxy now leads to the second; the client
 * opens again there, follows its author again from `onReconnect`, and receives a post published
 * through the first instance (docs/sockets.md, "The typed client").
 */
import { createClient } from 'proceedjs/client';
import { describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import type { api } from '../src/app.js';
import { engines, uniqueEmail, withTwoInstances } from './harness.js';
import { TcpProxy } from './tcp-proxy.js';

const postgres = engines().find((engine) => engine.name === 'PostgreSQL');
const portOf = (origin: string) => Number(new URL(origin).port);

describe.skipIf(postgres === undefined || inject('postgresUrl') === null)(
  'the typed client reconnecting to the live socket',
  () => {
    it('opens again on the other instance after its connection drops, follows again, and receives what the first publishes', async () => {
      await withTwoInstances(postgres as NonNullable<typeof postgres>, async (first, second) => {
        const registered = await first.request<{ accessToken: string; user: { id: string } }>(
          'POST',
          '/api/auth/register',
          { json: { email: uniqueEmail('again'), password: 'a-long-password-1', name: 'Again' } },
        );
        expect(registered.status).toBe(201);
        const proxy = await new TcpProxy({ host: '127.0.0.1', port: portOf(first.origin) }).start();
        const client = createClient<typeof api>({
          baseUrl: `http://127.0.0.1:${proxy.port}`,
          WebSocket,
          routes: {
            posts: { livePosts: { method: 'GET', path: '/posts/live', inputMode: 'query', socket: true } },
          },
        });
        const live = await client.posts.livePosts();
        const follow = { type: 'subscribe', authorId: registered.body.user.id } as const;
        let reconnects = 0;
        live.onReconnect(() => {
          reconnects++;
          return live.send(follow);
        });
        const titles: string[] = [];
        const reading = (async () => {
          for await (const message of live) titles.push(message.post.title);
        })();
        /** The socket has taken what it was sent: a message it refuses is answered in order. */
        const settled = () =>
          new Promise<void>((resolve) => {
            const stop = live.onProblem(() => {
              stop();
              resolve();
            });
            void live.send({ type: 'settled' } as never);
          });
        const publish = async (title: string) => {
          const created = await first.request('POST', '/api/posts', {
            json: { title, content: 'x', status: 'published' },
            token: registered.body.accessToken,
          });
          expect(created.status).toBe(201);
          const deadline = Date.now() + 10_000;
          while (!titles.includes(title) && Date.now() < deadline)
            await new Promise((resolve) => setTimeout(resolve, 20));
          expect(titles).toContain(title);
        };
        try {
          await live.send(follow);
          await settled();
          await publish('Before the drop');
          proxy.target = { host: '127.0.0.1', port: portOf(second.origin) };
          proxy.drop();
          const deadline = Date.now() + 10_000;
          while ((reconnects === 0 || live.state !== 'open') && Date.now() < deadline)
            await new Promise((resolve) => setTimeout(resolve, 20));
          expect(reconnects).toBe(1);
          expect(live.state).toBe('open');
          await settled();
          // Published through the first, received on the second: across instances.
          await publish('After the drop');
          expect(titles).toEqual(['Before the drop', 'After the drop']);
        } finally {
          live.close();
          await reading;
          await proxy.cut();
        }
      });
    });
  },
);
