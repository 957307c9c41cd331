import { once } from 'node:events';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { z } from 'zod';
import { eventStream } from '../core/events.js';
import { procedure, procedures } from '../core/procedure.js';
import { webSocket } from '../core/sockets.js';
import type { App } from '../server/app.js';
import { createApp } from '../server/create-app.js';
import { metricsPlugin } from './plugin.js';

const apps: App[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

const notes = procedures('notes', {
  listNotes: procedure().query(() => [{ id: 1 }]),
  createNote: procedure()
    .input(z.object({ title: z.string().min(1) }))
    .mutation(({ input }) => ({ id: 2, title: input.title })),
});

async function serving(pool = { total: 10, idle: 7, waiting: 0 }, host = '127.0.0.1') {
  const app = createApp({ logger: false }).mount([notes]);
  apps.push(app);
  let metricsUrl = '';
  await app.register(metricsPlugin, {
    port: 0,
    pool: () => pool,
    onListening: (url) => {
      metricsUrl = url;
    },
  });
  const api = await app.listen({ port: 0, host, handleSignals: false, logRoutes: false });
  return { app, api, metricsUrl };
}

describe('metricsPlugin', () => {
  it('serves Prometheus text on its own port: requests, latency, in flight, problems, pool, process', async () => {
    const { api, metricsUrl } = await serving();
    expect(new URL(metricsUrl).port).not.toBe(new URL(api).port);
    await fetch(`${api}/api/notes`);
    await fetch(`${api}/api/notes`);
    await fetch(`${api}/api/notes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: '' }),
    });
    await fetch(`${api}/api/nothing`);

    const scrape = await fetch(metricsUrl);
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await scrape.text();
    expect(text).toContain(
      'proceed_http_requests_total{procedure="notes.listNotes",method="GET",status_class="2xx"} 2',
    );
    expect(text).toContain(
      'proceed_http_requests_total{procedure="notes.createNote",method="POST",status_class="4xx"} 1',
    );
    expect(text).toContain(
      'proceed_http_requests_total{procedure="unmatched",method="GET",status_class="4xx"} 1',
    );
    expect(text).toMatch(
      /proceed_http_request_duration_seconds_bucket\{le="0\.005",procedure="notes\.listNotes",method="GET"\} \d/,
    );
    expect(text).toContain(
      'proceed_http_request_duration_seconds_count{procedure="notes.listNotes",method="GET"} 2',
    );
    expect(text).toContain('proceed_problems_total{code="VALIDATION_FAILED",status="400"} 1');
    expect(text).toContain('proceed_problems_total{code="ROUTE_NOT_FOUND",status="404"} 1');
    expect(text).toMatch(/^proceed_http_requests_in_flight 0$/m);
    expect(text).toContain('proceed_db_pool_connections{state="total"} 10');
    expect(text).toContain('proceed_db_pool_connections{state="idle"} 7');
    expect(text).toContain('proceed_db_pool_connections{state="waiting"} 0');
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    expect(text).toMatch(/^process_resident_memory_bytes \d/m);
    // The API does not serve metrics, and the metrics port serves nothing else.
    expect((await fetch(`${api}/metrics`)).status).toBe(404);
    const other = await fetch(metricsUrl.replace('/metrics', '/api/notes'));
    expect(other.status).toBe(404);
    expect(other.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    expect(other.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await other.json()).toEqual({
      type: 'urn:proceed:problem:route-not-found',
      title: 'Route not found',
      status: 404,
      detail: 'Only GET /metrics is served here',
      code: 'ROUTE_NOT_FOUND',
    });
  });

  it('counts a request in flight while it runs', async () => {
    let release: () => void = () => undefined;
    let entered: () => void = () => undefined;
    const slow = procedures('slow', {
      listSlow: procedure().query(
        () =>
          new Promise<string[]>((resolve) => {
            release = () => resolve([]);
            entered();
          }),
      ),
    });
    /** Resolves once the handler holds a request. */
    const running = () =>
      new Promise<void>((resolve) => {
        entered = resolve;
      });
    const app = createApp({ logger: false }).mount([slow]);
    apps.push(app);
    let metricsUrl = '';
    await app.register(metricsPlugin, { port: 0, onListening: (url) => (metricsUrl = url) });
    const api = await app.listen({ port: 0, handleSignals: false, logRoutes: false });
    const inFlight = async () =>
      Number(/^proceed_http_requests_in_flight (\d+)$/m.exec(await (await fetch(metricsUrl)).text())?.[1]);
    const first = running();
    const pending = fetch(`${api}/api/slow`);
    await first;
    expect(await inFlight()).toBe(1);
    release();
    expect((await pending).status).toBe(200);
    expect(await inFlight()).toBe(0);
    // A client that gives up does not leave a request counted for ever.
    const second = running();
    const abort = new AbortController();
    const abandoned = fetch(`${api}/api/slow`, { signal: abort.signal }).catch(() => undefined);
    await second;
    abort.abort();
    await abandoned;
    release();
    // Until the server has seen the connection go: the count then drops to 0 and stays there.
    for (let count = await inFlight(); count !== 0; count = await inFlight()) expect(count).toBe(1);
  });

  it('counts the WebSockets and event streams open now', async () => {
    const live = procedures('live', {
      chatSocket: procedure()
        .rest({ method: 'GET', path: '/live/chat' })
        .output(webSocket({ receive: z.object({ t: z.string() }), send: z.object({ t: z.string() }) }))
        .query(async function* ({ messages }) {
          for await (const message of messages) yield message;
        }),
      listTicks: procedure()
        .output(eventStream(z.object({ n: z.number() })))
        .query(async function* ({ signal }) {
          yield { n: 1 };
          await new Promise((resolve) => signal.addEventListener('abort', resolve));
        }),
    });
    const app = createApp({ logger: false }).mount([live]);
    apps.push(app);
    let metricsUrl = '';
    await app.register(metricsPlugin, { port: 0, onListening: (url) => (metricsUrl = url) });
    const api = await app.listen({ port: 0, handleSignals: false, logRoutes: false });
    const open = async () => {
      const text = await (await fetch(metricsUrl)).text();
      const of = (kind: string) =>
        Number(new RegExp(`^proceed_streams_open\\{kind="${kind}"\\} (\\d+)$`, 'm').exec(text)?.[1]);
      return { websocket: of('websocket'), eventStream: of('event_stream') };
    };
    expect(await open()).toEqual({ websocket: 0, eventStream: 0 });
    const ws = new WebSocket(`${api.replace(/^http/, 'ws')}/api/live/chat`);
    await once(ws, 'open');
    const stream = await fetch(`${api}/api/live`, { headers: { accept: 'text/event-stream' } });
    const reader = stream.body?.getReader();
    await reader?.read();
    expect(await open()).toEqual({ websocket: 1, eventStream: 1 });
    ws.close();
    await reader?.cancel();
    // Until the server has seen both go.
    for (let counts = await open(); counts.websocket + counts.eventStream !== 0; counts = await open())
      expect(counts.websocket + counts.eventStream).toBeLessThanOrEqual(2);
  });

  it('listens on the interface the API listens on unless told otherwise', async () => {
    const { api, metricsUrl } = await serving(undefined, '127.0.0.2');
    expect(new URL(api).hostname).toBe('127.0.0.2');
    expect(new URL(metricsUrl).hostname).toBe('127.0.0.2');
    expect((await fetch(metricsUrl)).status).toBe(200);
  });

  it('refuses to run without a port, and makes listen fail when its port is taken', async () => {
    const app = createApp({ logger: false }).mount([notes]);
    apps.push(app);
    await expect(app.register(metricsPlugin, {} as never)).rejects.toThrow(/needs a port of its own/);

    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const port = (taken.address() as { port: number }).port;
    try {
      const lines: string[] = [];
      const blocked = createApp({ logger: { stream: { write: (line) => lines.push(line) } } }).mount([notes]);
      await blocked.register(metricsPlugin, { port });
      await expect(blocked.listen({ port: 0, handleSignals: false, logRoutes: false })).rejects.toThrow(
        `metricsPlugin: cannot listen on port ${port}`,
      );
      expect(blocked.phase).toBe('closing');
      // An operator reading the log does not see the app announced as listening before it fails.
      await new Promise((resolve) => setImmediate(resolve));
      expect(lines.join('')).not.toContain('Server listening');
    } finally {
      taken.close();
    }
  });
});
