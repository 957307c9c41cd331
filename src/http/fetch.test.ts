import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { outageWarning, unwrappedOutageApp } from '../../test/fixtures/unwrapped-outage.js';
import { procedure, procedures } from '../core/procedure.js';
import { createApp } from '../server/create-app.js';

const notes = procedures('notes', {
  createNote: procedure()
    .input(z.object({ text: z.string() }))
    .mutation(({ input }) => ({ id: '1', text: input.text })),
});

const streamOf = (chunks: Uint8Array[], fail?: Error) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      if (fail === undefined) controller.close();
      else controller.error(fail);
    },
  });

describe('app.fetch bodies a Request built in-process carries', () => {
  it('answers 413 when the body is longer than its Content-Length says and than the limit', async () => {
    const app = createApp({ logger: false, bodyLimit: 1024 }).mount([notes]);
    const body = new TextEncoder().encode(JSON.stringify({ text: 'x'.repeat(4096) }));
    const request = new Request('http://api.example/api/notes', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': '20' },
      body: streamOf([body]),
      duplex: 'half',
    } as RequestInit);
    const answer = await app.fetch(request);
    expect(answer.status).toBe(413);
    expect(await answer.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    await app.close();
  });

  it('answers 400 BAD_REQUEST, not 500, when the body cannot be read', async () => {
    const app = createApp({ logger: false }).mount([notes]);
    const request = new Request('http://api.example/api/notes', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: streamOf([new TextEncoder().encode('{"text":')], new Error('client went away')),
      duplex: 'half',
    } as RequestInit);
    const answer = await app.fetch(request);
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    expect(await answer.json()).toMatchObject({ code: 'BAD_REQUEST' });
    await app.close();
  });
});

describe('app.fetch while the app drains', () => {
  it('asks keep-alive clients to reconnect elsewhere, and answers as before', async () => {
    const app = createApp({ logger: false, drainDelay: 1000 }).mount([notes]);
    const create = () =>
      app.fetch(
        new Request('http://api.example/api/notes', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"text":"x"}',
        }),
      );
    expect((await create()).headers.get('connection')).toBeNull();
    const shutdown = app.shutdown();
    const draining = await create();
    expect(draining.status).toBe(201);
    expect(draining.headers.get('connection')).toBe('close');
    const readiness = await app.fetch(new Request('http://api.example/api/health'));
    expect(readiness.status).toBe(503);
    expect(readiness.headers.get('retry-after')).toBe('1');
    await shutdown;
  });
});

describe('app.fetch readiness', () => {
  it('answers 503 UNAVAILABLE with Retry-After: 5 while the check fails, 200 once it passes', async () => {
    let healthy = false;
    const app = createApp({ logger: false, health: { check: () => healthy } }).mount([]);
    const unready = await app.fetch(new Request('http://api.example/api/health'));
    expect(unready.status).toBe(503);
    expect(unready.headers.get('retry-after')).toBe('5');
    expect(await unready.json()).toMatchObject({ code: 'UNAVAILABLE', detail: 'The service is not ready' });
    healthy = true;
    expect((await app.fetch(new Request('http://api.example/api/health'))).status).toBe(200);
    await app.close();
  });
});

describe('app.fetch outages', () => {
  it('logs the cause of an UnavailableError thrown unwrapped at warn, and answers 503 without it', async () => {
    const lines: string[] = [];
    const app = unwrappedOutageApp(lines);
    const answer = await app.fetch(new Request('http://api.example/api/outage'));
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('5');
    expect(await answer.text()).not.toContain('password');
    const warned = outageWarning(lines);
    expect(warned?.level).toBe(40);
    expect(JSON.stringify(warned?.err)).toContain('password authentication failed');
    await app.close();
  });
});
