/**
 * Beside `@opentelemetry/instrumentation-http`, which makes a SERVER span for every request Node
 * receives: the app makes no second one; it names that span for its route and hangs its steps
 * under it.
 */
import { createRequire } from 'node:module';
import { context, propagation, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, expect, it } from 'vitest';
import { z } from 'zod';
import { procedure, procedures } from '../core/procedure.js';
import { createApp } from '../server/create-app.js';
import { openTelemetry } from './index.js';

/** A span ends as its response closes: on a busy machine, a while after the client has it. */
const settling = { timeout: 10_000 };
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
const unregister = registerInstrumentations({
  instrumentations: [new HttpInstrumentation()],
  tracerProvider: provider,
});
// Node's http module was loaded before the instrumentation was enabled (Fastify loads it): the
// instrumentation patches its shared exports when it is next required.
createRequire(import.meta.url)('node:http');
afterAll(() => {
  unregister();
  context.disable();
  propagation.disable();
});

const notes = procedures('notes', {
  createNote: procedure()
    .input(z.object({ title: z.string() }))
    .mutation(({ input }) => {
      if (input.title === 'fire') throw new Error('The disk is on fire');
      return { id: 'n1', title: input.title };
    }),
});

it('names the instrumentation’s SERVER span for the route, makes no second one, and nests its steps under it', async () => {
  const app = createApp({ logger: false, tracing: openTelemetry({ tracerProvider: provider }) }).mount([
    notes,
  ]);
  const origin = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
  try {
    const response = await fetch(`${origin}/api/notes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Hello' }),
    });
    expect(response.status).toBe(201);
    await expect
      .poll(() => exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.SERVER), settling)
      .toHaveLength(1);
    const spans = exporter.getFinishedSpans();
    const [server] = spans.filter((span) => span.kind === SpanKind.SERVER);
    expect(server?.instrumentationScope.name).toBe('@opentelemetry/instrumentation-http');
    expect(server?.name).toBe('POST /api/notes');
    expect(server?.attributes).toMatchObject({
      'http.route': '/api/notes',
      'http.response.status_code': 201,
      'proceed.procedure': 'notes.createNote',
    });
    const children = spans.filter((span) => span.parentSpanContext?.spanId === server?.spanContext().spanId);
    expect(children.map((span) => span.name).sort()).toEqual([
      'handler notes.createNote',
      'serialize output',
      'validate input',
    ]);
    exporter.reset();

    // A 5xx: the instrumentation's span, which it ends before Proceed hears of the close,
    // carries the exception.
    const failed = await fetch(`${origin}/api/notes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'fire' }),
    });
    expect(failed.status).toBe(500);
    await expect
      .poll(() => exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.SERVER), settling)
      .toHaveLength(1);
    const [failedServer] = exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.SERVER);
    expect(failedServer?.status.code).toBe(SpanStatusCode.ERROR);
    expect(failedServer?.events.map((event) => event.attributes?.['exception.message'])).toEqual([
      'The disk is on fire',
    ]);
  } finally {
    await app.close();
  }
});
