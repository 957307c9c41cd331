/**
 * The spans of a traced app, seen by an in-memory exporter, on the Node server (over a socket)
 * and through app.fetch alike: the tree of a guarded POST, the route template, the statuses of a
 * 404 and a 500, the client's traceparent as parent, and the trace ids in the log lines.
 */
import { type Context, context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { eventStream } from '../core/events.js';
import { guard } from '../core/guards.js';
import { procedure, procedures } from '../core/procedure.js';
import { createApp } from '../server/create-app.js';
import { memorySpans, spanTree } from './fixtures/spans.js';
import { openTelemetry } from './index.js';

/** A span ends as its response closes: on a busy machine, a while after the client has it. */
const settling = { timeout: 10_000 };
const { exporter, provider } = memorySpans();
/** A promise and what settles it (Node 20 has no Promise.withResolvers). */
function opening() {
  let resolve = () => {};
  const promise = new Promise<void>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}
let slowArrived = opening();
let slowGate = opening();
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
afterAll(() => {
  context.disable();
  propagation.disable();
});
afterEach(() => exporter.reset());

/** What a database driver's instrumentation does: a span under whatever span is active. */
const database = provider.getTracer('a-database-driver');
const query = <T>(statement: string, result: T): Promise<T> =>
  database.startActiveSpan(statement, { kind: SpanKind.CLIENT }, async (span) => {
    await new Promise((resolve) => setImmediate(resolve));
    span.end();
    return result;
  });

const withKey = guard({
  name: 'hasKey',
  check: async (ctx: { request: { headers: Record<string, unknown> } }) => {
    await query('SELECT key', null);
    return ctx.request.headers['x-key'] === 'open sesame';
  },
});

const Thing = z.object({ id: z.string(), name: z.string() });
const things = procedures('things', {
  createThing: procedure()
    .guard(withKey)
    .input(z.object({ name: z.string().min(1) }))
    .output(Thing)
    .mutation(({ input }) => query('INSERT INTO things', { id: 't1', name: input.name })),
  getThing: procedure()
    .input(z.object({ id: z.string() }))
    .output(Thing)
    .query(({ input }) => {
      if (input.id === 'broken') throw new Error('The disk is on fire');
      // As Drizzle writes a failed query's parameters into its message: a hash among them.
      if (input.id === 'leaky')
        throw new Error(
          'Failed query: update users set password_hash = $1\nparams: scrypt$16384$8$1$salt$hash,ada',
        );
      return { id: input.id, name: 'A thing' };
    }),
  // Answers once the test lets it: a client can leave while it waits.
  slowThing: procedure()
    .rest({ method: 'GET', path: '/things/slow' })
    .query(async () => {
      slowArrived.resolve();
      await slowGate.promise;
      return { late: true };
    }),
  // A thenable that is no promise (a query builder's, say) is data to the core, traced or not.
  thenableThing: procedure()
    .rest({ method: 'GET', path: '/things/thenable' })
    .query(
      () =>
        ({
          // biome-ignore lint/suspicious/noThenProperty: the point of the test
          then: (resolve: (value: string) => void) => resolve('what awaiting it gives'),
          name: 'plain data',
        }) as unknown as { name: string },
    ),
  thingEvents: procedure()
    .rest({ method: 'GET', path: '/things/events' })
    .output(eventStream(z.object({ n: z.number() })))
    .query(async function* () {
      yield { n: await query('SELECT 1', 1) };
      yield { n: await query('SELECT 2', 2) };
    }),
});

/** The one SERVER span exported, once the request's span has ended. */
async function serverSpan(): Promise<ReadableSpan> {
  await expect
    .poll(() => exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.SERVER), settling)
    .toHaveLength(1);
  const [span] = exporter.getFinishedSpans().filter((each) => each.kind === SpanKind.SERVER);
  if (span === undefined) throw new Error('No server span');
  return span;
}

const logLines: Record<string, unknown>[] = [];
const logger = {
  stream: { write: (line: string) => logLines.push(JSON.parse(line) as Record<string, unknown>) },
};

type Send = (path: string, init?: RequestInit) => Promise<Response>;

const app = createApp({ logger, tracing: openTelemetry({ tracerProvider: provider }) }).mount([things]);
// A route of the app's own beside its procedures.
app.route('GET', '/raw/hello', () => ({ body: 'hello' }));
let origin = '';
beforeAll(async () => {
  origin = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
});
afterAll(() => app.close());

const adapters: [string, Send][] = [
  ['the Node server', (path, init) => fetch(`${origin}${path}`, init)],
  ['app.fetch', (path, init) => app.fetch(new Request(`http://api.example${path}`, init))],
];

describe.each(adapters)('tracing on %s', (_adapter, send) => {
  it('makes the tree of a guarded POST: server span, guard, validation, handler (with the database span), serialization', async () => {
    const response = await send('/api/things', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-key': 'open sesame' },
      body: JSON.stringify({ name: 'Lamp' }),
    });
    expect(response.status).toBe(201);
    const server = await serverSpan();
    expect(server.name).toBe('POST /api/things');
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/api/things',
      'url.path': '/api/things',
      'url.scheme': 'http',
      'http.response.status_code': 201,
      'proceed.procedure': 'things.createThing',
    });
    expect(server.attributes['proceed.request_id']).toBe(response.headers.get('x-request-id'));
    expect(server.status.code).toBe(SpanStatusCode.UNSET);
    expect(spanTree(exporter.getFinishedSpans(), server)).toEqual({
      name: 'POST /api/things',
      children: [
        { name: 'guard hasKey', children: [{ name: 'SELECT key', children: [] }] },
        { name: 'validate input', children: [] },
        { name: 'handler things.createThing', children: [{ name: 'INSERT INTO things', children: [] }] },
        { name: 'serialize output', children: [] },
      ],
    });
  });

  it('names the span for the route template, and takes the client traceparent as its parent', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';
    const response = await send('/api/things/t9', {
      headers: { traceparent: `00-${traceId}-${parentId}-01` },
    });
    expect(response.status).toBe(200);
    const server = await serverSpan();
    expect(server.name).toBe('GET /api/things/{id}');
    expect(server.attributes['http.route']).toBe('/api/things/{id}');
    expect(server.attributes['url.path']).toBe('/api/things/t9');
    expect(server.spanContext().traceId).toBe(traceId);
    expect(server.parentSpanContext?.spanId).toBe(parentId);
    expect(server.parentSpanContext?.isRemote).toBe(true);
  });

  it('leaves the status unset on a 4xx: a refused guard, an invalid input, a route that does not exist', async () => {
    const refused = await send('/api/things', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Lamp' }),
    });
    expect(refused.status).toBe(401);
    let server = await serverSpan();
    expect(server.status.code).toBe(SpanStatusCode.UNSET);
    expect(server.attributes['http.response.status_code']).toBe(401);
    // The guard said no: no validation, no handler.
    expect(spanTree(exporter.getFinishedSpans(), server).children.map((child) => child.name)).toEqual([
      'guard hasKey',
    ]);
    exporter.reset();

    const invalid = await send('/api/things', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-key': 'open sesame' },
      body: JSON.stringify({ name: '' }),
    });
    expect(invalid.status).toBe(400);
    server = await serverSpan();
    expect(server.status.code).toBe(SpanStatusCode.UNSET);
    const validation = exporter.getFinishedSpans().find((span) => span.name === 'validate input');
    expect(validation?.status.code).toBe(SpanStatusCode.UNSET);
    expect(validation?.events).toEqual([]);
    exporter.reset();

    const missing = await send('/api/nothing/here');
    expect(missing.status).toBe(404);
    server = await serverSpan();
    // No route was matched: the span is named for the method alone, and has no http.route.
    expect(server.name).toBe('GET');
    expect(server.attributes['http.route']).toBeUndefined();
    expect(server.attributes['http.response.status_code']).toBe(404);
    expect(server.status.code).toBe(SpanStatusCode.UNSET);
    // Its request id still ties the span to the 404's log line and to what the client reports.
    expect(server.attributes['proceed.request_id']).toBe(missing.headers.get('x-request-id'));
    expect(missing.headers.get('x-request-id')).toMatch(/\S/);
  });

  it('sets ERROR and records the exception on a 500, on the server span and the handler span', async () => {
    const response = await send('/api/things/broken');
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain('fire');
    const server = await serverSpan();
    expect(server.status.code).toBe(SpanStatusCode.ERROR);
    expect(server.attributes).toMatchObject({ 'http.response.status_code': 500, 'error.type': 'Error' });
    expect(server.events.map((event) => [event.name, event.attributes?.['exception.message']])).toEqual([
      ['exception', 'The disk is on fire'],
    ]);
    const handler = exporter.getFinishedSpans().find((span) => span.name === 'handler things.getThing');
    expect(handler?.status.code).toBe(SpanStatusCode.ERROR);
    expect(handler?.events.map((event) => event.name)).toEqual(['exception']);
  });

  it('records a failed query without the parameters it carried, as the log does', async () => {
    expect((await send('/api/things/leaky')).status).toBe(500);
    const server = await serverSpan();
    const handler = exporter.getFinishedSpans().find((span) => span.name === 'handler things.getThing');
    for (const event of [...server.events, ...(handler?.events ?? [])]) {
      expect(event.attributes?.['exception.message']).toBe(
        'Failed query: update users set password_hash = $1\nparams: [redacted]',
      );
      expect(JSON.stringify(event.attributes)).not.toContain('scrypt');
    }
    expect(server.events).toHaveLength(1);
    expect(JSON.stringify(logLines)).not.toContain('scrypt');
  });

  it('gives a request its client left before the answer no status code, as the log counts it 499', async () => {
    slowArrived = opening();
    slowGate = opening();
    const leaving = new AbortController();
    const sent = send('/api/things/slow', { signal: leaving.signal }).catch(() => undefined);
    await slowArrived.promise;
    leaving.abort();
    // Time for the server to see the connection close (at once on app.fetch: the signal).
    await new Promise((resolve) => setTimeout(resolve, 250));
    slowGate.resolve();
    await sent;
    const server = await serverSpan();
    expect(server.attributes['http.response.status_code']).toBeUndefined();
    expect(server.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('keeps the handler span of a stream open while it runs, gives each event a span, and ends the server span last', async () => {
    const response = await send('/api/things/events');
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(await response.text()).toContain('"n":2');
    const server = await serverSpan();
    expect(server.name).toBe('GET /api/things/events');
    const spans = exporter.getFinishedSpans();
    // The queries between events nest under the handler, which spans the whole stream.
    const tree = spanTree(spans, server);
    expect(tree.children.map((child) => child.name).sort()).toEqual([
      'event',
      'event',
      'handler things.thingEvents',
      'validate input',
    ]);
    expect(tree.children.find((child) => child.name === 'handler things.thingEvents')).toEqual({
      name: 'handler things.thingEvents',
      children: [
        { name: 'SELECT 1', children: [] },
        { name: 'SELECT 2', children: [] },
      ],
    });
    // Exported as they end: the server span after every other span of its trace.
    const ofTrace = spans.filter((span) => span.spanContext().traceId === server.spanContext().traceId);
    expect(ofTrace.at(-1)).toBe(server);
  });

  it('traces a route added with app.route() too, with its path template', async () => {
    const response = await send('/raw/hello');
    expect(await response.text()).toBe('hello');
    const server = await serverSpan();
    expect(server.attributes['http.response.status_code']).toBe(200);
    expect(server.attributes['proceed.procedure']).toBeUndefined();
    expect(server.name).toBe('GET /raw/hello');
  });

  it('ends the handler span of a stream that a HEAD never reads', async () => {
    const response = await send('/api/things/events', { method: 'HEAD' });
    expect(response.status).toBe(200);
    const server = await serverSpan();
    await expect
      .poll(() => exporter.getFinishedSpans().map((span) => span.name), settling)
      .toContain('handler things.thingEvents');
    expect(server.name).toBe('HEAD /api/things/events');
  });

  it('answers what a handler returns as an untraced call does', async () => {
    const response = await send('/api/things/thenable');
    expect(await response.json()).toEqual({ name: 'plain data' });
    expect((await serverSpan()).name).toBe('GET /api/things/thenable');
  });

  it('writes trace_id and span_id on the log lines of a traced request', async () => {
    logLines.length = 0;
    const response = await send('/api/things/t1');
    const server = await serverSpan();
    const id = response.headers.get('x-request-id');
    await expect
      .poll(() => logLines.filter((line) => line.msg === 'request completed' && line.reqId === id), settling)
      .toHaveLength(1);
    const line = logLines.find((each) => each.msg === 'request completed' && each.reqId === id);
    expect(line).toMatchObject({
      trace_id: server.spanContext().traceId,
      span_id: server.spanContext().spanId,
    });
  });
});

describe('a request the sampler leaves out', () => {
  it('makes no span at all, and is answered as any other', async () => {
    const unsampled = new BasicTracerProvider({
      sampler: new AlwaysOffSampler(),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    const sampledOut = createApp({
      logger: false,
      tracing: openTelemetry({ tracerProvider: unsampled }),
    }).mount([things]);
    const origin = await sampledOut.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
    try {
      for (const send of [
        (path: string, init?: RequestInit) => fetch(`${origin}${path}`, init),
        (path: string, init?: RequestInit) =>
          sampledOut.fetch(new Request(`http://api.example${path}`, init)),
      ]) {
        const created = await send('/api/things', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-key': 'open sesame' },
          body: JSON.stringify({ name: 'Lamp' }),
        });
        expect(created.status).toBe(201);
        expect((await send('/api/things/broken')).status).toBe(500);
        expect(await (await send('/api/things/events')).text()).toContain('"n":2');
      }
      // Nor does the driver, whose spans follow their parent's decision: the request's context,
      // unsampled, was still the active one.
      expect(exporter.getFinishedSpans()).toEqual([]);
    } finally {
      await sampledOut.close();
    }
  });
});

describe('an app without tracing', () => {
  it('makes no span, even with a tracer provider registered and a traceparent sent', async () => {
    const untraced = createApp({ logger: false }).mount([things]);
    const parent: Context = trace.setSpan(context.active(), provider.getTracer('test').startSpan('outside'));
    const response = await context.with(parent, () =>
      untraced.fetch(new Request('http://api.example/api/things/t1')),
    );
    expect(response.status).toBe(200);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('refuses a tracing option that is not a tracer', () => {
    expect(() => createApp({ tracing: {} as never })).toThrow(
      'createApp tracing takes what openTelemetry() from proceedjs/opentelemetry returns',
    );
    expect(() => openTelemetry({ tracer: provider } as never)).toThrow('tracer');
  });
});
