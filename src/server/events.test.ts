/** Event streams on the Node server and through app.fetch: shutdown, HEAD, a reader slower than its writer, the client. */
import { EventEmitter, on } from 'node:events';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { settled } from '../../test/settled.js';
import { authPlugin } from '../auth/plugin.js';
import { TokenService } from '../auth/tokens.js';
import { createClient, routeManifest } from '../client/index.js';
import { eventQueue } from '../core/event-queue.js';
import { eventStream, reconnectStream, serverEvent } from '../core/events.js';
import { guard } from '../core/guards.js';
import { procedure, procedures } from '../core/procedure.js';
import { createApp } from './create-app.js';

/** Where the bus stream's ticks are published. */
const bus = new EventEmitter();
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
        // Each connection sends a few events, then holds (a test's fetch drops it after them) or ends.
        const from = lastEventId === undefined ? 1 : Number(lastEventId) + 1;
        for (let n = from; n < from + 2 && n <= input.upTo; n++)
          yield serverEvent({ n }, { id: n, retry: 10 });
        if (input.hold)
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      } finally {
        finallies++;
      }
    }),
  // Ends each connection as a drop until the third event, then is over.
  dropEvents: procedure()
    .rest({ method: 'GET', path: '/ticks/drops' })
    .output(eventStream(Tick))
    .query(async function* ({ lastEventId }) {
      const n = lastEventId === undefined ? 1 : Number(lastEventId) + 1;
      yield serverEvent({ n }, { id: n });
      if (n < 3) yield reconnectStream();
    }),
  // What a bus publishes, through a queue of 5 for each stream.
  busEvents: procedure()
    .rest({ method: 'GET', path: '/ticks/bus' })
    .output(eventStream(Tick))
    .query(async function* ({ signal }) {
      const queue = eventQueue<z.infer<typeof Tick>>({ signal, maxBehind: 5 });
      bus.on('tick', queue.push);
      try {
        yield* queue;
      } finally {
        bus.off('tick', queue.push);
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

/** A body that ends after `count` events, its source let go: a connection dropped midway. */
function droppedAfter(source: ReadableStream<Uint8Array>, count: number): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  const decoder = new TextDecoder();
  let seen = 0;
  return new ReadableStream({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      controller.enqueue(value);
      seen += decoder.decode(value, { stream: true }).split('\ndata:').length - 1;
      if (seen >= count) {
        await reader.cancel();
        controller.close();
      }
    },
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

    it('drops a reader that falls behind an eventQueue: a close event, and the bus let go', async () => {
      const response = await app.fetch(new Request('http://x/api/ticks/bus'));
      const reader = (response.body as ReadableStream<Uint8Array>)
        .pipeThrough(new TextDecoderStream() as ReadableWritablePair<string, Uint8Array>)
        .getReader();
      // The stream opens (a keep-alive while the bus is quiet), and listens.
      expect((await reader.read()).value).toBe(': keep-alive\n\n');
      expect(bus.listenerCount('tick')).toBe(1);
      bus.emit('tick', { n: 1 });
      expect((await reader.read()).value).toBe('data: {"n":1}\n\n');
      // Six published while the reader reads nothing: one past its 5.
      for (let n = 2; n <= 7; n++) bus.emit('tick', { n });
      let rest = '';
      for (let next = await reader.read(); next.done !== true; next = await reader.read()) rest += next.value;
      expect(rest).toBe('event: close\ndata: {"reason":"reconnect"}\n\n');
      expect(bus.listenerCount('tick')).toBe(0);
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

  it('iterates the events, reconnecting with Last-Event-ID and a fresh token when the connection drops, until its signal aborts', async () => {
    tokensGiven = 0;
    const seenTokens: string[] = [];
    const client = createClient<readonly [typeof ticks]>({
      baseUrl,
      routes: routeManifest([ticks]),
      token: () => `token-${++tokensGiven}`,
      fetch: async (input, init) => {
        seenTokens.push(new Headers(init?.headers).get('authorization') ?? '');
        const answer = await fetch(input, init);
        // The connection drops after two events, as a proxy's timeout would cut it.
        return new Response(droppedAfter(answer.body as ReadableStream<Uint8Array>, 2), answer);
      },
    });
    const stop = new AbortController();
    const received: number[] = [];
    for await (const tick of await client.ticks.tickEvents(
      { upTo: 5, hold: true },
      { signal: stop.signal },
    )) {
      received.push(tick.n);
      if (tick.n === 5) stop.abort();
    }
    // Two events per connection: three connections, each resuming after the last id it saw.
    expect(received).toEqual([1, 2, 3, 4, 5]);
    expect(seenTokens).toEqual(['Bearer token-1', 'Bearer token-2', 'Bearer token-3']);
  });

  /** A client of the ticks that counts the connections it opens. */
  const countingClient = () => {
    let opened = 0;
    const client = createClient<readonly [typeof ticks]>({
      baseUrl,
      routes: routeManifest([ticks]),
      fetch: (input, init) => {
        opened++;
        return fetch(input, init);
      },
    });
    return { client, connections: () => opened };
  };

  it('reconnects at once, with Last-Event-ID, after a handler ends its stream with reconnectStream()', async () => {
    const { client, connections } = countingClient();
    const received: number[] = [];
    for await (const tick of await client.ticks.dropEvents({})) received.push(tick.n);
    expect(received).toEqual([1, 2, 3]);
    expect(connections()).toBe(3);
    const frames = await (await fetch(`${baseUrl}/api/ticks/drops`)).text();
    expect(frames).toBe('id: 1\ndata: {"n":1}\n\nevent: close\ndata: {"reason":"reconnect"}\n\n');
  });

  it('ends the iteration when the handler returns: the stream is over, not dropped', async () => {
    const { client, connections } = countingClient();
    const received: number[] = [];
    for await (const tick of await client.ticks.tickEvents({ upTo: 2 })) received.push(tick.n);
    expect(received).toEqual([1, 2]);
    expect(connections()).toBe(1);
  });

  it('rejects the call with the problem when the stream cannot open', async () => {
    const client = createClient<readonly [typeof ticks]>({ baseUrl, routes: routeManifest([ticks]) });
    await expect(client.ticks.tickEvents({ upTo: 'many' as never })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      status: 400,
    });
  });
});

describe('event streams per client', () => {
  const tokens = new TokenService({ secret: 'an-events-test-secret-of-32-characters' });
  const users = new Map([
    ['ann', { id: 'ann' }],
    ['bob', { id: 'bob' }],
  ]);
  let port = 0;
  let app: ReturnType<typeof createApp>;
  beforeAll(async () => {
    app = createApp({ logger: false, maxStreamsPerClient: 2 });
    await app.register(authPlugin, { tokens, userLoader: (id: string) => users.get(id) });
    app.mount([ticks]);
    port = Number(new URL(await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false })).port);
  });
  afterAll(() => app.close());

  const bearer = async (id: string) => ({
    authorization: `Bearer ${(await tokens.issuePair(id)).accessToken}`,
  });
  const body = (response: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () => resolve(text));
    });

  it('refuses one past maxStreamsPerClient with 429 before its handler runs, counting a user wherever it connects from', async () => {
    const open = [await get(port, '/api/ticks?hold=true'), await get(port, '/api/ticks?hold=true')];
    expect(open.map((response) => response.statusCode)).toEqual([200, 200]);
    const before = finallies;
    const refused = await get(port, '/api/ticks?hold=true');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(refused.headers['retry-after']).toBe('1');
    expect(JSON.parse(await body(refused))).toMatchObject({
      code: 'RATE_LIMITED',
      detail: 'This client holds its most event streams (2); close one first',
    });
    // The refused stream's handler never ran (its finally would have counted).
    expect(finallies).toBe(before);
    // A signed-in user is a client of its own, from the same address, with a share of its own.
    const annHeaders = await bearer('ann');
    const ann = [
      await get(port, '/api/ticks?hold=true', annHeaders),
      await get(port, '/api/ticks?hold=true', annHeaders),
    ];
    expect(ann.map((response) => response.statusCode)).toEqual([200, 200]);
    expect((await get(port, '/api/ticks?hold=true', await bearer('ann'))).statusCode).toBe(429);
    const bob = await get(port, '/api/ticks?hold=true', await bearer('bob'));
    expect(bob.statusCode).toBe(200);
    // A stream the client leaves frees its place.
    open[0]?.destroy();
    await vi.waitFor(
      async () => {
        const again = await get(port, '/api/ticks?hold=true');
        again.destroy();
        expect(again.statusCode).toBe(200);
      },
      { timeout: 5000, interval: 50 },
    );
    // So does a stream whose handler ended.
    for (const response of [...open, ...ann, bob]) response.destroy();
    const ending = [await get(port, '/api/ticks?upTo=1'), await get(port, '/api/ticks?upTo=1')];
    await Promise.all(ending.map(body));
    await vi.waitFor(
      async () => {
        const after = await get(port, '/api/ticks?hold=true');
        after.destroy();
        expect(after.statusCode).toBe(200);
      },
      { timeout: 5000, interval: 50 },
    );
  });

  it('lets go of a refused stream at once: its source returned, and a client gone before the answer counted no more', async () => {
    const bus = new EventEmitter();
    const slow = guard({
      name: 'slow',
      check: () => new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 50)),
    });
    const busApp = createApp({ logger: false, maxStreamsPerClient: 1 }).mount([
      procedures('bus', {
        busEvents: procedure()
          .rest({ method: 'GET', path: '/bus' })
          .output(eventStream(Tick))
          // An iterator made without the signal: its listener is there until it is returned.
          .query(() => on(bus, 'tick') as AsyncIterable<never>),
        slowEvents: procedure()
          .rest({ method: 'GET', path: '/bus/slow' })
          .guard(slow)
          .output(eventStream(Tick))
          .query(async function* ({ signal }) {
            await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
          }),
      }),
    ]);
    const send = (path: string, init: RequestInit = {}) =>
      busApp.fetch(new Request(`http://localhost/api${path}`, init), { ip: '10.0.0.9' });
    const held = await send('/bus');
    expect(held.status).toBe(200);
    expect(bus.listenerCount('tick')).toBe(1);
    expect((await send('/bus')).status).toBe(429);
    expect((await send('/bus', { method: 'HEAD' })).status).toBe(200);
    // Let a listener dropped late show: the returns settle within a few turns.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(bus.listenerCount('tick')).toBe(1);
    await held.body?.cancel();
    // Gone during the guard: its answer, made after, is never read, and takes no place.
    const leaving = new AbortController();
    const gone = send('/bus/slow', { signal: leaving.signal });
    leaving.abort();
    await gone.catch(() => undefined);
    const next = await send('/bus/slow');
    expect(next.status).toBe(200);
    await next.body?.cancel();
    await busApp.close();
  });

  it('refuses a maxStreamsPerClient that is not a whole number of 1 or more', () => {
    expect(() => createApp({ maxStreamsPerClient: 0 })).toThrow(
      'createApp: maxStreamsPerClient must be a whole number of 1 or more (got 0)',
    );
  });
});
