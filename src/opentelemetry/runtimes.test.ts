/**
 * The spans of a traced app on the runtimes that serve `app.fetch` over a real socket: Bun
 * (`Bun.serve`), Deno (`Deno.serve`) and Cloudflare's workerd (`wrangler dev`), from the npm
 * packages `bun`, `deno` and `wrangler`. The app (test/fixtures/traced-app.ts) keeps its spans in
 * memory and answers them at `/spans`; each runtime serves it once for the whole suite.
 * Deno imports the framework's dist/ (`node scripts/build.mjs --no-check` first: a stale one is
 * what it tests); Bun and wrangler's bundler follow tsconfig.json's paths to src/.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SpanRecord } from '../../test/fixtures/traced-app.js';
import {
  announcedAddress,
  type RuntimeCommand,
  startOnRuntime,
  wranglerDev,
  wranglerReady,
} from '../../test/runtimes/start.js';

interface Runtime extends RuntimeCommand {
  workers?: boolean;
}

const runtimes: Runtime[] = [
  {
    name: 'Bun (Bun.serve)',
    command: 'bun',
    args: () => ['run', '--tsconfig-override=test/runtimes/tsconfig.json', 'test/runtimes/traced-serve.ts'],
    address: announcedAddress,
  },
  {
    name: 'Deno (Deno.serve)',
    command: 'deno',
    args: () => ['run', '--allow-all', '--unstable-sloppy-imports', 'test/runtimes/traced-serve.ts'],
    address: announcedAddress,
  },
  {
    name: 'Cloudflare workerd (wrangler dev)',
    command: 'wrangler',
    args: wranglerDev('test/runtimes/traced-wrangler.jsonc'),
    address: wranglerReady,
    workers: true,
  },
];

/** The spans under `root`, as a tree of names in the order they started. */
interface Tree {
  name: string;
  children: Tree[];
}
function treeOf(spans: readonly SpanRecord[], root: SpanRecord): Tree {
  const children = spans
    .filter((span) => span.parentSpanId === root.spanId)
    .sort((a, b) => a.started - b.started);
  return { name: root.name, children: children.map((child) => treeOf(spans, child)) };
}

describe.each(runtimes)('tracing on $name', (runtime) => {
  let origin = '';
  let close = async () => {};
  beforeAll(async () => {
    ({ origin, close } = await startOnRuntime(runtime));
  });
  afterAll(() => close());

  beforeEach(async () => {
    expect((await fetch(`${origin}/spans`, { method: 'DELETE' })).status).toBe(204);
  });

  const spans = async (): Promise<SpanRecord[]> =>
    (await fetch(`${origin}/spans`)).json() as Promise<SpanRecord[]>;

  /** Every span, once the request's SERVER span has ended (a stream's ends with its last frame). */
  async function finished(): Promise<{ server: SpanRecord; all: SpanRecord[] }> {
    let all: SpanRecord[] = [];
    await expect
      .poll(
        async () => {
          all = await spans();
          return all.filter((span) => span.kind === SpanKind.SERVER).length;
        },
        { timeout: 10_000 },
      )
      .toBe(1);
    const server = all.find((span) => span.kind === SpanKind.SERVER);
    if (server === undefined) throw new Error('No server span');
    return { server, all };
  }

  it('makes the tree of a guarded POST, with the spans a driver starts after an await nested in the guard and the handler', async () => {
    const response = await fetch(`${origin}/api/things`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-key': 'open sesame' },
      body: JSON.stringify({ name: 'Lamp' }),
    });
    expect(response.status).toBe(201);
    const { server, all } = await finished();
    expect(server.name).toBe('POST /api/things');
    expect(server.parentSpanId).toBeUndefined();
    expect(server.status).toBe(SpanStatusCode.UNSET);
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/api/things',
      'url.path': '/api/things',
      'url.scheme': 'http',
      'http.response.status_code': 201,
      'proceed.procedure': 'things.createThing',
    });
    expect(treeOf(all, server)).toEqual({
      name: 'POST /api/things',
      children: [
        { name: 'guard hasKey', children: [{ name: 'SELECT key', children: [] }] },
        { name: 'validate input', children: [] },
        { name: 'handler things.createThing', children: [{ name: 'INSERT INTO things', children: [] }] },
        { name: 'serialize output', children: [] },
      ],
    });
    // Nothing strayed out of the tree: every span of the request is in it, in one trace.
    expect(all).toHaveLength(7);
    expect(new Set(all.map((span) => span.traceId))).toEqual(new Set([server.traceId]));
  });

  it('names the span for the route template, and takes the client traceparent as its parent', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';
    const response = await fetch(`${origin}/api/things/t9`, {
      headers: { traceparent: `00-${traceId}-${parentId}-01` },
    });
    expect(response.status).toBe(200);
    const { server, all } = await finished();
    expect(server.name).toBe('GET /api/things/{id}');
    expect(server.attributes).toMatchObject({
      'http.route': '/api/things/{id}',
      'url.path': '/api/things/t9',
      'http.response.status_code': 200,
    });
    expect(server.traceId).toBe(traceId);
    expect(server.parentSpanId).toBe(parentId);
    expect(all.every((span) => span.traceId === traceId)).toBe(true);
  });

  it('sets ERROR and records the exception on a 500, on the server span and the handler span', async () => {
    const response = await fetch(`${origin}/api/things/broken`);
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain('fire');
    const { server, all } = await finished();
    expect(server.status).toBe(SpanStatusCode.ERROR);
    expect(server.attributes).toMatchObject({ 'http.response.status_code': 500, 'error.type': 'Error' });
    expect(server.events).toEqual([{ name: 'exception', message: 'The disk is on fire' }]);
    const handler = all.find((span) => span.name === 'handler things.getThing');
    expect(handler?.status).toBe(SpanStatusCode.ERROR);
    expect(handler?.events).toEqual([{ name: 'exception', message: 'The disk is on fire' }]);
  });

  it('leaves the status unset on a 404, and names the span for the method alone', async () => {
    const response = await fetch(`${origin}/api/nothing/here`);
    expect(response.status).toBe(404);
    const { server } = await finished();
    expect(server.name).toBe('GET');
    expect(server.attributes['http.route']).toBeUndefined();
    expect(server.attributes['http.response.status_code']).toBe(404);
    expect(server.status).toBe(SpanStatusCode.UNSET);
    expect(server.events).toEqual([]);
  });

  it('gives each streamed event a span, keeps the queries of the handler in the trace, and ends the server span with the stream', async () => {
    const response = await fetch(`${origin}/api/things/events`);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(await response.text()).toContain('"n":3');
    const { server, all } = await finished();
    expect(server.name).toBe('GET /api/things/events');
    expect(server.status).toBe(SpanStatusCode.UNSET);
    // The handler's span lasts as long as its generator: the queries made between events nest
    // under it, each event's span beside it.
    expect(treeOf(all, server)).toEqual({
      name: 'GET /api/things/events',
      children: [
        { name: 'validate input', children: [] },
        {
          name: 'handler things.thingEvents',
          children: [
            { name: 'SELECT 1', children: [] },
            { name: 'SELECT 2', children: [] },
            { name: 'SELECT 3', children: [] },
          ],
        },
        { name: 'event', children: [] },
        { name: 'event', children: [] },
        { name: 'event', children: [] },
      ],
    });
    expect(all).toHaveLength(9);
    // Ended in the order spans end: the server span's comes after its last event's.
    const events = all.filter((span) => span.name === 'event');
    expect(events.every((event) => event.ended < server.ended)).toBe(true);
  });

  it('ends the server span of a stream the client leaves, with the spans of the handler’s finally in its trace', async () => {
    const leave = new AbortController();
    const response = await fetch(`${origin}/api/things/held`, { signal: leave.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: {"n":1}\n\n');
    leave.abort();
    await reader.cancel().catch(() => undefined);
    // Bun and Deno see the connection close at once; workerd when a keep-alive fails to go out (the
    // second one after the client left). There, once the client is gone and the answer has ended,
    // what the request still has pending is dropped: the handler's finally never gets past its
    // await (its timer never fires), so the query after it never starts.
    const expected = runtime.workers
      ? ['GET /api/things/held', 'unsubscribe']
      : ['GET /api/things/held', 'UNLISTEN things', 'unsubscribe'];
    let all: SpanRecord[] = [];
    await expect
      .poll(
        async () => {
          all = await spans();
          // The request's span and the app's own: the steps are the other tests' concern.
          return all
            .map((span) => span.name)
            .filter((name) => !/^(validate input|handler |event$)/.test(name))
            .sort();
        },
        { timeout: 10_000 },
      )
      .toEqual(expected);
    const server = all.find((span) => span.kind === SpanKind.SERVER);
    expect(server?.attributes['http.response.status_code']).toBe(200);
    expect(server?.status).toBe(SpanStatusCode.UNSET);
    // The handler's finally runs as its generator is returned: under the handler's span.
    const handler = all.find((span) => span.name === 'handler things.heldEvents');
    expect(handler?.parentSpanId).toBe(server?.spanId);
    for (const name of expected.slice(1)) {
      const span = all.find((each) => each.name === name);
      expect(span?.traceId).toBe(server?.traceId);
      expect(span?.parentSpanId).toBe(handler?.spanId);
    }
  });
});
