/** Event streams on the Node server and through app.fetch: shutdown, HEAD, a reader slower than its writer, the client. */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { settled } from '../../test/settled.js';
import { createClient, routeManifest } from '../client/index.js';
import { eventStream, serverEvent } from '../core/events.js';
import { procedure, procedures } from '../core/procedure.js';
import { createApp } from './create-app.js';

/** How many events the fast stream has yielded so far. */
let yielded = 0;
let finallies = 0;
/** Tokens the client handed out, one per connection. */
let tokensGiven = 0;

const Tick = z.object({ n: z.number() });
const ticks = procedures('ticks', {
  tickEvents: procedure()
    .rest({ method: 'GET', path: '/ticks' })
    .input(z.object({ upTo: z.number().int().default(3), hold: z.boolean().default(false) }))
    .output(eventStream(Tick))
    .query(async function* ({ input, lastEventId, signal }) {
      try {
        // Each connection sends a few events and ends: the client reconnects for the rest.
        const from = lastEventId === undefined ? 1 : Number(lastEventId) + 1;
        for (let n = from; n < from + 2 && n <= input.upTo; n++)
          yield serverEvent({ n }, { id: n, retry: 10 });
        if (input.hold)
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        else if (from > input.upTo)
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      } finally {
        finallies++;
      }
    }),
  fastEvents: procedure()
    .rest({ method: 'GET', path: '/ticks/fast' })
    .output(eventStream(Tick))
    .query(async function* () {
      for (let n = 0; ; n++) {
        yielded++;
        yield { n };
      }
    }),
});

function get(port: number, path: string, headers: Record<string, string> = {}): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    httpRequest({ port, host: '127.0.0.1', path, headers }, resolve).on('error', reject).end();
  });
}

describe('event streams on the Node server', () => {
  it('end with a close event when the app shuts down, instead of holding the shutdown', async () => {
    const app = createApp({ logger: false, shutdownTimeout: 60_000 }).mount([ticks]);
    const port = Number(new URL(await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false })).port);
    const response = await get(port, '/api/ticks?hold=true');
    let text = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      text += chunk;
    });
    const ended = new Promise((resolve) => response.once('end', resolve));
    await settled(
      () => text.length,
      () => new Promise((resolve) => setTimeout(resolve, 20)),
    );
    const before = finallies;
    await app.close();
    await ended;
    expect(text).toBe(
      'id: 1\nretry: 10\ndata: {"n":1}\n\nid: 2\nretry: 10\ndata: {"n":2}\n\nevent: close\ndata: {"reason":"shutdown"}\n\n',
    );
    expect(finallies).toBe(before + 1);
  });

  it('answers HEAD with the headers and runs nothing', async () => {
    const app = createApp({ logger: false }).mount([ticks]);
    const before = finallies;
    const head = await app.inject({ method: 'HEAD', url: '/api/ticks' });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(head.body).toBe('');
    expect(finallies).toBe(before);
  });

  describe('a reader slower than the handler', () => {
    const app = createApp({ logger: false }).mount([ticks]);
    let port: number;
    beforeAll(async () => {
      port = Number(new URL(await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false })).port);
    });
    afterAll(() => app.close());

    it('holds the handler back on Node: it yields only what the socket can take', async () => {
      yielded = 0;
      const response = await get(port, '/api/ticks/fast');
      response.pause();
      const held = await settled(
        () => yielded,
        () => new Promise((resolve) => setTimeout(resolve, 200)),
      );
      // A socket's buffers hold some thousands of these 20-byte events, never an unbounded number.
      expect(held).toBeLessThan(500_000);
      response.destroy();
    });

    it('holds the handler back through app.fetch: one event per read', async () => {
      yielded = 0;
      const response = await app.fetch(new Request('http://x/api/ticks/fast'));
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      await reader.read();
      const held = await settled(
        () => yielded,
        () => new Promise((resolve) => setImmediate(resolve)),
      );
      expect(held).toBeLessThanOrEqual(3);
      await reader.cancel();
    });
  });
});

describe('the typed client', () => {
  const app = createApp({ logger: false }).mount([ticks]);
  let baseUrl: string;
  beforeAll(async () => {
    baseUrl = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
  });
  afterAll(() => app.close());

  it('iterates the events, reconnecting with Last-Event-ID and a fresh token, until its signal aborts', async () => {
    tokensGiven = 0;
    const seenTokens: string[] = [];
    const client = createClient<readonly [typeof ticks]>({
      baseUrl,
      routes: routeManifest([ticks]),
      token: () => `token-${++tokensGiven}`,
      fetch: (input, init) => {
        seenTokens.push(new Headers(init?.headers).get('authorization') ?? '');
        return fetch(input, init);
      },
    });
    const stop = new AbortController();
    const received: number[] = [];
    for await (const tick of await client.ticks.tickEvents({ upTo: 5 }, { signal: stop.signal })) {
      received.push(tick.n);
      if (tick.n === 5) stop.abort();
    }
    // Two events per connection: three connections, each resuming after the last id it saw.
    expect(received).toEqual([1, 2, 3, 4, 5]);
    expect(seenTokens).toEqual(['Bearer token-1', 'Bearer token-2', 'Bearer token-3']);
  });

  it('rejects the call with the problem when the stream cannot open', async () => {
    const client = createClient<readonly [typeof ticks]>({ baseUrl, routes: routeManifest([ticks]) });
    await expect(client.ticks.tickEvents({ upTo: 'many' as never })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      status: 400,
    });
  });
});
