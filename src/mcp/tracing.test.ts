/**
 * The spans of MCP messages, seen by an in-memory exporter on the Node server and through
 * app.fetch: each message a SERVER span under its request's, named as the conventions for MCP
 * name it, with the called procedure's steps under it; a tool's failure marked on it.
 */
import { context, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guard } from '../core/guards.js';
import { procedure, procedures } from '../core/procedure.js';
import { memorySpans, spanTree } from '../opentelemetry/fixtures/spans.js';
import { openTelemetry } from '../opentelemetry/index.js';
import { createApp } from '../server/create-app.js';
import { mcpPlugin } from './plugin.js';

const settling = { timeout: 10_000 };
const { exporter, provider } = memorySpans();
afterAll(() => context.disable());
afterEach(() => exporter.reset());

const named = guard({ name: 'isNamed', check: () => true });
const Thing = z.object({ id: z.string(), name: z.string() });
const things = procedures('things', {
  createThing: procedure()
    .guard(named)
    .input(z.object({ name: z.string().min(1) }))
    .output(Thing)
    .mutation(({ input }) => ({ id: 't1', name: input.name })),
  getThing: procedure()
    .input(z.object({ id: z.string() }))
    .output(Thing)
    .query(({ input }) => {
      if (input.id === 'broken') throw new Error('The disk is on fire');
      return { id: input.id, name: 'A thing' };
    }),
});

const app = createApp({ logger: false, tracing: openTelemetry({ tracerProvider: provider }) }).mount([
  things,
]);
await app.register(mcpPlugin, { collections: ['things'] });
let origin = '';
beforeAll(async () => {
  origin = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
});
afterAll(() => app.close());

type Send = (body: object) => Promise<Response>;
const init = (body: object): RequestInit => ({
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
  },
  body: JSON.stringify({ jsonrpc: '2.0', id: 7, ...body }),
});
const adapters: [string, Send][] = [
  ['the Node server', (body) => fetch(`${origin}/mcp`, init(body))],
  ['app.fetch', (body) => app.fetch(new Request('http://127.0.0.1/mcp', init(body)))],
];

/** The request's span, once ended, and the message's under it. */
async function spans(): Promise<{ request: ReadableSpan; message: ReadableSpan; all: ReadableSpan[] }> {
  await expect
    .poll(() => exporter.getFinishedSpans().filter((span) => span.name === 'POST /mcp'), settling)
    .toHaveLength(1);
  const all = exporter.getFinishedSpans();
  const request = all.find((span) => span.name === 'POST /mcp') as ReadableSpan;
  const message = all.find((span) => span.parentSpanContext?.spanId === request.spanContext().spanId);
  if (message === undefined) throw new Error('No span under the request');
  return { request, message, all };
}

describe.each(adapters)('MCP messages traced on %s', (_adapter, send) => {
  it('gives a tool call a span named for the tool, with the procedure steps under it', async () => {
    const response = await send({
      method: 'tools/call',
      params: { name: 'createThing', arguments: { name: 'x' } },
    });
    expect((await response.json()).result.isError).toBeUndefined();
    const { request, message, all } = await spans();
    expect(spanTree(all, request)).toEqual({
      name: 'POST /mcp',
      children: [
        {
          name: 'tools/call createThing',
          children: [
            { name: 'guard isNamed', children: [] },
            { name: 'validate input', children: [] },
            { name: 'handler things.createThing', children: [] },
            { name: 'serialize output', children: [] },
          ],
        },
      ],
    });
    expect(message.kind).toBe(SpanKind.SERVER);
    expect(message.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'createThing',
      'gen_ai.operation.name': 'execute_tool',
      'jsonrpc.request.id': '7',
      'mcp.protocol.version': '2025-11-25',
    });
    expect(message.attributes['error.type']).toBeUndefined();
    expect(message.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("marks a tool's refusal with error.type, a client's mistake leaving the status unset", async () => {
    const response = await send({
      method: 'tools/call',
      params: { name: 'createThing', arguments: { name: '' } },
    });
    expect((await response.json()).result.isError).toBe(true);
    const { message } = await spans();
    expect(message.attributes['error.type']).toBe('tool_error');
    expect(message.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("marks a tool's own failure as an error of the server, with its exception", async () => {
    const response = await send({
      method: 'tools/call',
      params: { name: 'getThing', arguments: { id: 'broken' } },
    });
    const { result } = await response.json();
    expect(result.isError).toBe(true);
    // The app's exposeErrors is off: the model reads a 500 without its message.
    expect(result.structuredContent).toBeUndefined();
    expect(JSON.parse(result.content[0].text)).toMatchObject({ status: 500, code: 'INTERNAL' });
    expect(JSON.stringify(result)).not.toContain('on fire');
    const { message, all } = await spans();
    expect(message.attributes['error.type']).toBe('tool_error');
    expect(message.status.code).toBe(SpanStatusCode.ERROR);
    expect(message.events.map((event) => event.name)).toContain('exception');
    const handler = all.find((span) => span.name === 'handler things.getThing');
    expect(handler?.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('names any other message for its method, and a protocol error by its code', async () => {
    await send({ method: 'tools/list' });
    expect((await spans()).message.name).toBe('tools/list');
    exporter.reset();
    const response = await send({ method: 'tools/call', params: { name: 'noSuchTool' } });
    expect((await response.json()).error.code).toBe(-32602);
    const { message } = await spans();
    expect(message.name).toBe('tools/call');
    expect(message.attributes['gen_ai.tool.name']).toBeUndefined();
    expect(message.attributes['error.type']).toBe('-32602');
    exporter.reset();
    // A method of the client's making names no span: each would be one more, of any length.
    const made = await send({ method: `x/${'A'.repeat(5000)}` });
    expect((await made.json()).error.code).toBe(-32601);
    const other = (await spans()).message;
    expect(other.name).toBe('_OTHER');
    expect(other.attributes['mcp.method.name']).toBe('_OTHER');
  });
});

describe('an app with exposeErrors and a log', () => {
  it("gives a tool's unexpected error its message, as its REST route does, and logs each refusal", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = { stream: { write: (line: string) => lines.push(JSON.parse(line)) } };
    const exposing = createApp({ exposeErrors: true, logger }).mount([things]);
    await exposing.register(mcpPlugin, { collections: ['things'] });
    const response = await exposing.fetch(
      new Request(
        'http://api.example/mcp',
        init({ method: 'tools/call', params: { name: 'getThing', arguments: { id: 'broken' } } }),
      ),
    );
    const { result } = await response.json();
    expect(result.isError).toBe(true);
    const problem = JSON.parse(result.content[0].text);
    expect(problem.detail).toContain('The disk is on fire');
    const rest = await exposing.fetch(new Request('http://api.example/api/things/broken'));
    expect((await rest.json()).detail).toBe(problem.detail);
    const refusal = lines.find((line) => line.msg === 'MCP tool call answered with a problem');
    expect(refusal).toMatchObject({ tool: 'getThing', status: 500, code: 'INTERNAL' });
    expect(refusal?.reqId).toBe(response.headers.get('x-request-id'));
    // The error's own line, with its stack, names the request too, as over REST.
    const unexpected = lines.filter((line) => line.msg === 'Unexpected error');
    expect(unexpected).toHaveLength(2);
    expect(unexpected[0]?.reqId).toBe(response.headers.get('x-request-id'));
    expect(unexpected[1]?.reqId).toBe(rest.headers.get('x-request-id'));
    await exposing.close();
  });
});

describe('an operation whose work throws at once', () => {
  it('ends its span, marked with the error', async () => {
    const tracing = openTelemetry({ tracerProvider: provider });
    const failing = () =>
      provider.getTracer('a-test').startActiveSpan(
        'a request',
        (parent) =>
          tracing.operation?.(
            () => ({ name: 'tools/call broken', attributes: {} }),
            () => {
              throw new Error('Thrown before any promise');
            },
          ) ?? Promise.resolve(parent.end()),
      );
    expect(failing).toThrow('Thrown before any promise');
    const span = exporter.getFinishedSpans().find((each) => each.name === 'tools/call broken');
    expect(span?.status.code).toBe(SpanStatusCode.ERROR);
    expect(span?.attributes['error.type']).toBe('Error');
  });
});

describe('an operation of a request nobody records', () => {
  it('is not described: no name or attributes made for it', async () => {
    let described = 0;
    const describe = () => {
      described += 1;
      return { name: 'tools/call unseen', attributes: {} };
    };
    const untraced = createApp({ logger: false });
    expect(await untraced.traceOperation(describe, async (trace) => trace.steps)).toBeUndefined();
    // A tracer, but no recording span around the call.
    const traced = createApp({ logger: false, tracing: openTelemetry({ tracerProvider: provider }) });
    expect(await traced.traceOperation(describe, async (trace) => trace.steps)).toBeUndefined();
    expect(described).toBe(0);
    await Promise.all([untraced.close(), traced.close()]);
  });
});
