import { describe, expect, it } from 'vitest';
import { procedure, procedures } from '../core/procedure.js';
import { App } from '../server/app.js';
import { createApp } from '../server/create-app.js';
import { appRoute, sentRouteAnswer } from './app-routes.js';

describe('app.route()', () => {
  const handler = () => ({ body: 'ok' });

  it('refuses a mistake where it is made', () => {
    expect(() => appRoute('OPTIONS', '/x', handler)).toThrow(/"OPTIONS" is not a method a route takes/);
    expect(() => appRoute('GET', 'x', handler)).toThrow(/must start with "\//);
    expect(() => appRoute('GET', '/x', 'ok' as never)).toThrow(/the handler must be a function/);
    expect(() => appRoute('POST', '/x', handler, { bodyLimit: -1 })).toThrow(
      /bodyLimit must be a whole number/,
    );
    expect(appRoute('post', '/x', handler)).toMatchObject({ method: 'POST', path: '/x' });
  });

  it('types a body the handler left untyped, and never lets a browser guess', () => {
    expect(sentRouteAnswer({ body: 'hi' })).toEqual({
      status: 200,
      headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' },
      body: 'hi',
    });
    expect(sentRouteAnswer({ body: new Uint8Array(1) }).headers['content-type']).toBe(
      'application/octet-stream',
    );
    expect(sentRouteAnswer({ headers: { 'Content-Type': 'text/csv' }, body: 'a' }).headers).toEqual({
      'content-type': 'text/csv',
      'x-content-type-options': 'nosniff',
    });
    // A status without a body sends none, whatever the handler gave.
    expect(sentRouteAnswer({ status: 204, body: '' })).toEqual({
      status: 204,
      headers: { 'x-content-type-options': 'nosniff' },
      body: null,
    });
  });

  it('is listed with the procedures, and refused once the app is ready', async () => {
    const app = createApp({ logger: false }).route('GET', '/version', () => ({ body: '1' }));
    expect(app.routeLines()).toContain('GET /version');
    await app.ready();
    expect(() => app.route('GET', '/late', handler)).toThrow(/after the app is ready/);
    const answer = await app.inject({ method: 'GET', url: '/version' });
    expect(answer.body).toBe('1');
    await app.close();
  });
});

describe('a route that another already takes', () => {
  const routes = (app: App) =>
    app
      .mount([procedures('notes', { listNotes: procedure().query(() => []) })])
      .route('GET', '/api/notes', () => ({ body: 'x' }));

  it("is refused as the app starts on the Fastify adapter, whose routes are the pipeline's", async () => {
    const app = routes(createApp({ logger: false }));
    await expect(app.ready()).rejects.toThrow(/GET \/api\/notes is routed twice/);
  });

  it('is refused by app.fetch as it starts, with no adapter', async () => {
    const app = routes(new App({ logger: false }));
    await expect(app.fetch(new Request('http://api.example/api/notes'))).rejects.toThrow(
      /GET \/api\/notes is routed twice/,
    );
  });
});

describe('what every adapter does around a route', () => {
  it('counts the request a handler runs for on Node too, before the handler reads the count', async () => {
    const app = createApp({ logger: false });
    const inFlight = app.countRequestsInFlight();
    app.route('GET', '/in-flight', () => ({ body: String(inFlight()) }));
    const origin = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
    try {
      expect(await (await fetch(`${origin}/in-flight`)).text()).toBe('1');
    } finally {
      await app.close();
    }
  });

  it('answers a GET whose tag the client holds with 304 and the 200’s headers, on Node and app.fetch', async () => {
    const app = createApp({ logger: false });
    app.route('GET', '/tagged', () => ({
      headers: { ETag: '"v1"', 'Cache-Control': 'no-cache', 'Content-Type': 'text/csv' },
      body: 'a,b',
    }));
    app.route('POST', '/tagged', () => ({ headers: { etag: '"v1"' }, body: 'posted' }));
    const origin = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
    try {
      for (const send of [
        (init: RequestInit) => fetch(`${origin}/tagged`, init),
        (init: RequestInit) => app.fetch(new Request('http://api.example/tagged', init)),
      ]) {
        const held = await send({ headers: { 'if-none-match': 'W/"v1", "v0"' } });
        expect(held.status).toBe(304);
        expect(await held.text()).toBe('');
        expect(held.headers.get('etag')).toBe('"v1"');
        expect(held.headers.get('cache-control')).toBe('no-cache');
        expect(held.headers.get('content-type')).toBeNull();
        expect((await send({ headers: { 'if-none-match': '"v0"' } })).status).toBe(200);
        // Not a GET: the tag says nothing of what a write did.
        const posted = await send({ method: 'POST', headers: { 'if-none-match': '"v1"' } });
        expect(posted.status).toBe(200);
        expect(await posted.text()).toBe('posted');
      }
    } finally {
      await app.close();
    }
  });

  it('lets go of the stream a HEAD never sends', async () => {
    let cancelled = false;
    const app = new App({ logger: false }).route('GET', '/stream', () => ({
      body: new ReadableStream<Uint8Array>({
        pull: (controller) => controller.enqueue(new Uint8Array(1)),
        cancel: () => {
          cancelled = true;
        },
      }),
    }));
    const answer = await app.fetch(new Request('http://api.example/stream', { method: 'HEAD' }));
    expect(answer.status).toBe(200);
    expect(answer.body).toBeNull();
    await expect.poll(() => cancelled).toBe(true);
  });
});
