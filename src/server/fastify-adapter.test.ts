import dns from 'node:dns';
import { type AddressInfo, connect } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { eventually } from '../../test/processes.js';
import { eventStream } from '../core/events.js';
import { procedure, procedures } from '../core/procedure.js';
import type { App } from './app.js';
import { createApp } from './create-app.js';

const apps: App[] = [];
const originalLookup = dns.lookup;
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

const notes = procedures('notes', {
  listNotes: procedure().query(() => [{ id: 1 }]),
});

/** An app on the Fastify adapter that counts the requests Fastify itself took (a logger child each). */
function counted(): { app: App; fastifyRequests: () => number } {
  let made = 0;
  const app = createApp({ logger: { level: 'info', stream: { write: () => undefined } } }).mount([notes]);
  apps.push(app);
  app.server.setChildLoggerFactory((parent, bindings, options) => {
    made++;
    return parent.child(bindings, options);
  });
  return { app, fastifyRequests: () => made };
}

const listen = (app: App) =>
  app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });

describe('the Fastify adapter', () => {
  it("hands the app's requests straight to the pipeline, and Fastify those of its own routes", async () => {
    const { app, fastifyRequests } = counted();
    app.server.get('/raw', async () => 'raw');
    const url = await listen(app);
    const answer = await fetch(`${url}/api/notes`);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual([{ id: 1 }]);
    expect(fastifyRequests()).toBe(0);
    expect(await (await fetch(`${url}/raw`)).text()).toBe('raw');
    expect(fastifyRequests()).toBe(1);
    // A method the route of Fastify's does not take: the pipeline's 405 names the one it does.
    const refused = await fetch(`${url}/raw`, { method: 'DELETE' });
    expect(refused.status).toBe(405);
    expect(refused.headers.get('allow')).toBe('GET, HEAD');
    expect(fastifyRequests()).toBe(1);
  });

  it('refuses an HTTP/1.1 request without Host before any route, Fastify’s own and with its hooks too', async () => {
    const { app } = counted();
    app.server.get('/raw', async () => 'raw');
    const url = new URL(await listen(app));
    const hostless = (path: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(url.port), url.hostname);
        let text = '';
        socket.on('data', (chunk) => {
          text += chunk.toString('latin1');
        });
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
        socket.write(`GET ${path} HTTP/1.1\r\n\r\n`);
      });
    for (const path of ['/raw', '/api/notes']) {
      const answer = await hostless(path);
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toContain('application/problem+json');
      expect(answer).toContain('"code":"BAD_REQUEST"');
    }
  });

  it('runs an app-wide hook of Fastify for every request, the headers it sets kept under the answer’s', async () => {
    const { app, fastifyRequests } = counted();
    const seen: string[] = [];
    app.server.addHook('onRequest', async (request, reply) => {
      seen.push(request.url);
      reply.header('x-frame-options', 'DENY');
      reply.header('content-type', 'text/plain');
      // A length of a body Fastify would have sent: never the length of the app's answer.
      reply.header('content-length', '2');
    });
    const url = await listen(app);
    const answer = await fetch(`${url}/api/notes`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-frame-options')).toBe('DENY');
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await answer.json()).toEqual([{ id: 1 }]);
    expect(seen).toEqual(['/api/notes']);
    expect(fastifyRequests()).toBe(1);
  });

  it('leaves the app’s requests to the pipeline when a hook belongs to a plugin’s own routes', async () => {
    const { app, fastifyRequests } = counted();
    const seen: string[] = [];
    await app.server.register(async (scope) => {
      scope.addHook('onRequest', async (request) => {
        seen.push(request.url);
      });
      scope.get('/scoped', async () => 'scoped');
    });
    const url = await listen(app);
    expect((await fetch(`${url}/api/notes`)).status).toBe(200);
    expect(await (await fetch(`${url}/scoped`)).text()).toBe('scoped');
    expect(seen).toEqual(['/scoped']);
    expect(fastifyRequests()).toBe(1);
  });

  it('says which routes of Fastify app.fetch leaves out, once app.fetch is used, and not as it listens', async () => {
    const lines: string[] = [];
    const app = createApp({ logger: { level: 'info', stream: { write: (line) => lines.push(line) } } }).mount(
      [notes],
    );
    apps.push(app);
    app.server.get('/raw', async () => 'raw');
    await listen(app);
    const warned = () => lines.filter((line) => line.includes('app.fetch does not serve')).length;
    expect(warned()).toBe(0);
    expect((await app.fetch(new Request('http://api.example/api/notes'))).status).toBe(200);
    await app.fetch(new Request('http://api.example/api/notes'));
    await eventually(() => warned() > 0, 5_000, 'the warning');
    expect(lines.find((line) => line.includes('app.fetch does not serve'))).toContain('GET /raw');
    expect(warned()).toBe(1);
  });

  it('lets a wildcard route of Fastify’s take what it serves, and hand the rest to the app', async () => {
    const lines: string[] = [];
    const app = createApp({ logger: { level: 'info', stream: { write: (line) => lines.push(line) } } }).mount(
      [notes],
    );
    apps.push(app);
    // As @fastify/static at the root does: its files, and the not-found handler for anything else.
    app.server.get('/*', async (request, reply) =>
      request.url === '/file.txt' ? 'a file' : reply.callNotFound(),
    );
    const url = await listen(app);
    expect(await (await fetch(`${url}/file.txt`)).text()).toBe('a file');
    const listed = await fetch(`${url}/api/notes`, { headers: { 'x-request-id': 'through-static' } });
    expect(await listed.json()).toEqual([{ id: 1 }]);
    // A route of Fastify's takes GET here and found nothing: 404, not a 405 naming HEAD.
    const missing = await fetch(`${url}/missing`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).code).toBe('ROUTE_NOT_FOUND');
    await app.close();
    const linesOf = (id: string) => lines.filter((line) => line.includes(`"reqId":"${id}"`));
    expect(linesOf('through-static')).toHaveLength(1);
  });

  it('matches the routes of Fastify’s as Fastify does: a trailing slash', async () => {
    const { app } = counted();
    app.server.get('/raw', async () => 'raw');
    const url = await listen(app);
    expect(await (await fetch(`${url}/raw/`)).text()).toBe('raw');
  });

  it('logs, tags and counts an answer a hook of Fastify’s gave in place of the app', async () => {
    const lines: string[] = [];
    const app = createApp({ logger: { level: 'info', stream: { write: (line) => lines.push(line) } } }).mount(
      [notes],
    );
    apps.push(app);
    const ids: string[] = [];
    app.server.addHook('onRequest', async (request, reply) => {
      ids.push(request.id);
      if (request.headers.authorization === undefined) await reply.code(401).send({ denied: true });
    });
    const url = await listen(app);
    const denied = await fetch(`${url}/api/notes`);
    expect(denied.status).toBe(401);
    expect(denied.headers.get('x-request-id')).toBe(ids[0]);
    const served = await fetch(`${url}/api/notes`, { headers: { authorization: 'Bearer x' } });
    expect(served.status).toBe(200);
    // The id Fastify's hook saw is the one the answer and its line carry.
    expect(served.headers.get('x-request-id')).toBe(ids[1]);
    await app.close();
    const linesOf = (id: string | undefined) => lines.filter((line) => line.includes(`"reqId":"${id}"`));
    expect(linesOf(ids[0])).toHaveLength(1);
    expect(linesOf(ids[0])[0]).toContain('"statusCode":401');
    expect(linesOf(ids[1])).toHaveLength(1);
  });

  it('binds localhost once, as Node’s server does, so no connection bypasses the pipeline', async () => {
    const { app, fastifyRequests } = counted();
    // A machine where localhost names both loopbacks (this one may name one): Fastify, given
    // `localhost`, binds the second with a server of its own.
    const lookup = vi.spyOn(dns, 'lookup').mockImplementation(((
      host: string,
      options: unknown,
      callback: (error: Error | null, addresses: dns.LookupAddress[]) => void,
    ) => {
      if (host === 'localhost' && typeof options === 'object' && (options as { all?: boolean }).all === true)
        callback(null, [
          { address: '127.0.0.1', family: 4 },
          { address: '::1', family: 6 },
        ]);
      else (originalLookup as (...args: unknown[]) => void)(host, options, callback);
    }) as typeof dns.lookup);
    try {
      const url = await app.listen({ port: 0, host: 'localhost', handleSignals: false, logRoutes: false });
      expect(app.server.addresses()).toHaveLength(1);
      expect(url).toMatch(/^http:\/\/localhost:\d+$/);
      const [bound] = app.server.addresses() as AddressInfo[];
      const host = bound?.family === 'IPv6' ? `[${bound.address}]` : bound?.address;
      expect((await fetch(`http://${host}:${bound?.port}/api/notes`)).status).toBe(200);
      expect(fastifyRequests()).toBe(0);
    } finally {
      lookup.mockRestore();
    }
  });

  it('numbers requests once with requestIds: false, whether Fastify or the pipeline serves them', async () => {
    const lines: string[] = [];
    const numbered = (hooked: boolean) => {
      const app = createApp({
        requestIds: false,
        logger: { level: 'info', stream: { write: (line) => lines.push(line) } },
      }).mount([notes]);
      apps.push(app);
      const ids: string[] = [];
      if (hooked)
        app.server.addHook('onRequest', async (request) => {
          ids.push(request.id);
        });
      app.server.get('/raw', async () => 'raw');
      return { app, ids };
    };
    // The request lines' ids (not the listening line's, which has none).
    const reqIds = () =>
      lines
        .splice(0)
        .map((line) => JSON.parse(line) as { reqId?: string; msg: string })
        .filter((line) => line.msg === 'request completed')
        .map((line) => line.reqId);
    // Straight to the pipeline, then a route of Fastify's, then the pipeline again: 1, 2, 3.
    const straight = numbered(false);
    const url = await listen(straight.app);
    for (const path of ['/api/notes', '/raw', '/api/notes'])
      expect((await fetch(`${url}${path}`)).ok).toBe(true);
    expect(straight.app.server.hasRoute({ method: 'GET', url: '/raw' })).toBe(true);
    await straight.app.close();
    expect(reqIds().sort()).toEqual(['1', '2', '3']);
    // Handed over by Fastify's not-found handler after an app-wide hook: the id the hook saw.
    const handed = numbered(true);
    const handedUrl = await listen(handed.app);
    for (const path of ['/raw', '/api/notes']) expect((await fetch(`${handedUrl}${path}`)).ok).toBe(true);
    await handed.app.close();
    expect(handed.ids).toEqual(['1', '2']);
    expect(reqIds().sort()).toEqual(['1', '2']);
  });

  it('keeps no body header a hook set on a streamed answer, whose length Fastify never knew', async () => {
    const ticks = procedures('ticks', {
      listTicks: procedure()
        .output(eventStream(z.object({ n: z.number() })))
        .query(async function* () {
          yield { n: 1 };
          yield { n: 2 };
        }),
    });
    const app = createApp({ logger: false }).mount([ticks]);
    apps.push(app);
    app.server.addHook('onRequest', async (_request, reply) => {
      reply.header('content-length', '2');
    });
    const url = await listen(app);
    const answer = await fetch(`${url}/api/ticks`);
    expect(answer.headers.get('content-length')).toBeNull();
    expect(await answer.text()).toBe('data: {"n":1}\n\ndata: {"n":2}\n\nevent: end\ndata: {}\n\n');
  });
});
