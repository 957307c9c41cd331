/** What both Node servers do when the pipeline fails before its own promise (src/server/node-http.ts). */
import { afterEach, describe, expect, it } from 'vitest';
import { procedure, procedures } from '../core/procedure.js';
import type { RequestTracing } from '../http/tracing.js';
import type { App } from './app.js';
import { createApp } from './create-app.js';
import { createApp as createAppWithoutFastify } from './create-app-fetch.js';

const apps: App[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

const notes = procedures('notes', { listNotes: procedure().query(() => [{ id: 1 }]) });

/** A tracer whose start fails for a request that asks for it, as a broken exporter's might. */
const failingTracer: RequestTracing = {
  begin(request) {
    if (request.header('x-fail-trace') !== undefined) throw new Error('the tracer broke: secret-detail');
    return {
      recording: false,
      run: <T>(work: () => T) => work(),
      bind: () => undefined,
      routed: () => undefined,
      end: () => undefined,
      failed: () => undefined,
    } as unknown as ReturnType<RequestTracing['begin']>;
  },
  logFields: () => undefined,
};

/** An app of proceedjs served by Fastify: it asks for app.server as it is set up. */
const createAppOnFastify: typeof createApp = (options) => {
  const app = createApp(options);
  void app.server;
  return app;
};

describe.each([
  { server: 'Fastify', create: createAppOnFastify },
  { server: 'node:http (proceedjs/node)', create: createAppWithoutFastify },
])('a failure before the pipeline’s promise, on $server', ({ create }) => {
  it('answers 500 problem+json without the cause, and the server goes on serving', async () => {
    const app = create({ logger: false, tracing: failingTracer }).mount([notes]);
    apps.push(app);
    const url = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
    const failed = await fetch(`${url}/api/notes`, { headers: { 'x-fail-trace': '1' } });
    expect(failed.status).toBe(500);
    expect(failed.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    const body = await failed.text();
    expect(JSON.parse(body)).toMatchObject({ code: 'INTERNAL' });
    expect(body).not.toContain('secret-detail');
    const served = await fetch(`${url}/api/notes`);
    expect(served.status).toBe(200);
    expect(await served.json()).toEqual([{ id: 1 }]);
  });
});
