import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { z } from 'zod';
import { authenticated } from '../auth/guards.js';
import { type AuthContext, authPlugin } from '../auth/plugin.js';
import { TokenService } from '../auth/tokens.js';
import { procedure, procedures } from '../core/procedure.js';
import { webSocket } from '../core/sockets.js';
import type { App } from '../server/app.js';
import { createApp } from '../server/create-app.js';
import { ClientError, type ClientSocket, createClient, ProblemError, routeManifest } from './index.js';

const secret = 'client-socket-secret-that-is-at-least-32-bytes';
type Ctx = AuthContext<{ id: string }>;
const p = () => procedure<Ctx>();

const Said = z.object({ text: z.string().min(1) });
/** Handlers the room socket has run: a socket the server opened. */
let handlers = 0;
const Echoed = z.object({ text: z.string(), by: z.string(), room: z.string(), at: z.date() });

const rooms = procedures('rooms', {
  roomSocket: p()
    .rest({ method: 'GET', path: '/rooms/:room/socket' })
    .guard(authenticated)
    .input(z.object({ room: z.string().regex(/^[a-z]+$/) }))
    .output(webSocket({ receive: Said, send: Echoed, invalidLimit: 5, credentialsCheck: 100 }))
    .query(async function* ({ input, ctx, messages }) {
      handlers++;
      for await (const said of messages) {
        if (said.text === 'fail') throw new Error('a secret reason');
        if (said.text === 'bye') return;
        yield { text: said.text, by: ctx.user.id, room: input.room, at: new Date(0) };
      }
    }),
});
// A conventional name: the client finds it is a socket from the route's 426.
const tickers = procedures('tickers', {
  getTicker: p()
    .input(z.object({ id: z.string() }))
    .output(
      webSocket({ receive: z.object({ n: z.number() }), send: z.object({ id: z.string(), n: z.number() }) }),
    )
    .query(async function* ({ input, messages }) {
      for await (const { n } of messages) yield { id: input.id, n: n * 2 };
    }),
});
const api = [rooms, tickers] as const;
const routes = routeManifest(api);
const tokens = new TokenService({ secret });

async function serve(port = 0): Promise<{ app: App<Ctx>; url: string }> {
  const app = createApp<Ctx>({ logger: false });
  await app.register(authPlugin, { tokens, userLoader: (id) => ({ id }) });
  app.mount(api);
  const url = await app.listen({ port, host: '127.0.0.1', handleSignals: false });
  return { app, url };
}

const opened: App<Ctx>[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((app) => app.close()));
});

async function started(port = 0) {
  const served = await serve(port);
  opened.push(served.app);
  return served;
}

async function next<T>(socket: ClientSocket<unknown, T>): Promise<T> {
  const { value, done } = await socket[Symbol.asyncIterator]().next();
  if (done === true) throw new Error('the socket ended');
  return value;
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

describe('a socket procedure in the typed client', () => {
  it('opens with the token, sends typed messages and iterates the validated answers as JSON', async () => {
    const { url } = await started();
    const { accessToken } = await tokens.issuePair('u1');
    const client = createClient<typeof api>({ baseUrl: url, token: accessToken, routes, WebSocket });
    const socket = await client.rooms.roomSocket({ room: 'lobby' });
    expect(socket.state).toBe('open');
    await socket.send({ text: 'hello' });
    await socket.send({ text: 'again' });
    const received = [];
    for await (const message of socket) {
      received.push(message);
      if (received.length === 2) break;
    }
    expect(received).toEqual([
      { text: 'hello', by: 'u1', room: 'lobby', at: '1970-01-01T00:00:00.000Z' },
      { text: 'again', by: 'u1', room: 'lobby', at: '1970-01-01T00:00:00.000Z' },
    ]);
    // Leaving the loop closed it.
    expect(socket.state).toBe('closed');
    const late = await failure(socket.send({ text: 'late' }));
    expect(late).toBeInstanceOf(ClientError);
    expect((late as ClientError).reason).toBe('closed');
  });

  it('rejects with the problem of a refused handshake, as any call does', async () => {
    const { url } = await started();
    const anonymous = createClient<typeof api>({ baseUrl: url, routes, WebSocket });
    const unauthenticated = await failure(anonymous.rooms.roomSocket({ room: 'lobby' }));
    expect(unauthenticated).toBeInstanceOf(ProblemError);
    expect(unauthenticated).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });

    const { accessToken } = await tokens.issuePair('u1');
    const client = createClient<typeof api>({ baseUrl: url, token: accessToken, routes, WebSocket });
    const invalid = await failure(client.rooms.roomSocket({ room: 'NOT valid' }));
    expect(invalid).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
  });

  it('hands a refused message to onProblem and stays open', async () => {
    const { url } = await started();
    const { accessToken } = await tokens.issuePair('u1');
    const client = createClient<typeof api>({ baseUrl: url, token: accessToken, routes, WebSocket });
    const socket = await client.rooms.roomSocket({ room: 'lobby' });
    const problems: ProblemError[] = [];
    socket.onProblem((problem) => problems.push(problem));
    await socket.send({ text: '' });
    await socket.send({ text: 'after' });
    expect(await next(socket)).toMatchObject({ text: 'after' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    expect(socket.state).toBe('open');
    socket.close();
  });

  it("ends the iteration with the handler's problem, and quietly when the handler returns", async () => {
    const { url } = await started();
    const { accessToken } = await tokens.issuePair('u1');
    const client = createClient<typeof api>({ baseUrl: url, token: accessToken, routes, WebSocket });
    const failing = await client.rooms.roomSocket({ room: 'lobby' });
    await failing.send({ text: 'fail' });
    const thrown = await failure(next(failing));
    expect(thrown).toBeInstanceOf(ProblemError);
    expect(thrown).toMatchObject({ status: 500, code: 'INTERNAL' });
    expect(JSON.stringify((thrown as ProblemError).problem)).not.toContain('secret');
    expect(failing.state).toBe('closed');
    // A send after it: closed, and why.
    const late = await failure(failing.send({ text: 'late' }));
    expect(late).toMatchObject({ reason: 'closed', cause: thrown });

    const leaving = await client.rooms.roomSocket({ room: 'lobby' });
    await leaving.send({ text: 'one' });
    await leaving.send({ text: 'bye' });
    const received = [];
    for await (const message of leaving) received.push(message.text);
    expect(received).toEqual(['one']);
  });

  it('finds a conventionally named socket procedure without a manifest, with one GET for the client', async () => {
    const { url } = await started();
    let gets = 0;
    const client = createClient<typeof api>({
      baseUrl: url,
      WebSocket,
      fetch: (input, init) => {
        gets++;
        return fetch(input, init);
      },
    });
    const ticker = await client.tickers.getTicker({ id: 'abc' });
    await ticker.send({ n: 21 });
    expect(await next(ticker)).toEqual({ id: 'abc', n: 42 });
    ticker.close();
    // The second call goes straight to the socket.
    const again = await client.tickers.getTicker({ id: 'def' });
    await again.send({ n: 1 });
    expect(await next(again)).toEqual({ id: 'def', n: 2 });
    again.close();
    expect(gets).toBe(1);
  });

  it('closes when the call signal aborts', async () => {
    const { url } = await started();
    const client = createClient<typeof api>({ baseUrl: url, WebSocket });
    const controller = new AbortController();
    const ticker = await client.tickers.getTicker({ id: 'abc' }, { signal: controller.signal });
    const reading = (async () => {
      const seen = [];
      for await (const message of ticker) seen.push(message);
      return seen;
    })();
    controller.abort();
    expect(await reading).toEqual([]);
    expect(ticker.state).toBe('closed');
  });

  it('sends in order what is sent without waiting, and shares the messages between two readers', async () => {
    const { url } = await started();
    const client = createClient<typeof api>({ baseUrl: url, WebSocket });
    const ticker = await client.tickers.getTicker({ id: 'abc' });
    // Fewer than the route's maxQueued (100), which a flood would pass.
    const sent = Array.from({ length: 80 }, (_, n) => ticker.send({ n }));
    const iterator = ticker[Symbol.asyncIterator]();
    const received: number[] = [];
    // Two reads pending at once: each gets its own message.
    while (received.length < 80) {
      const [first, second] = await Promise.all([iterator.next(), iterator.next()]);
      for (const result of [first, second]) if (result.done !== true) received.push(result.value.n / 2);
    }
    await Promise.all(sent);
    expect(received).toEqual(Array.from({ length: 80 }, (_, n) => n));
    ticker.close();
  });

  it('opens nothing when the call is aborted while its token is fetched', async () => {
    const { url } = await started();
    const { accessToken } = await tokens.issuePair('u1');
    const controller = new AbortController();
    let asked!: () => void;
    const asking = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const client = createClient<typeof api>({
      baseUrl: url,
      routes,
      WebSocket,
      token: async () => {
        asked();
        await new Promise((resolve) => setTimeout(resolve, 100));
        return accessToken;
      },
    });
    const before = handlers;
    const call = client.rooms.roomSocket({ room: 'lobby' }, { signal: controller.signal });
    await asking;
    controller.abort();
    const refused = await failure(call);
    expect(refused).toBeInstanceOf(ClientError);
    expect((refused as ClientError).reason).toBe('closed');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(handlers).toBe(before);
  });

  it('survives a listener that throws: it is reported, and the socket goes on', async () => {
    const { url } = await started();
    const { accessToken } = await tokens.issuePair('u1');
    const client = createClient<typeof api>({ baseUrl: url, token: accessToken, routes, WebSocket });
    const socket = await client.rooms.roomSocket({ room: 'lobby' });
    const reported = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      socket.onProblem(() => {
        throw new Error('a listener of the app failed');
      });
      await socket.send({ text: '' });
      await socket.send({ text: 'after' });
      expect(await next(socket)).toMatchObject({ text: 'after' });
      expect(reported).toHaveBeenCalledWith(
        expect.objectContaining({ message: 'a listener of the app failed' }),
      );
    } finally {
      reported.mockRestore();
      socket.close();
    }
  });

  it('says what to pass where the runtime has no WebSocket', async () => {
    const { url } = await started();
    const client = createClient<typeof api>({
      baseUrl: url,
      WebSocket: undefined as never,
    });
    const missing = await failure(
      (async () => {
        const saved = (globalThis as { WebSocket?: unknown }).WebSocket;
        delete (globalThis as { WebSocket?: unknown }).WebSocket;
        try {
          return await client.tickers.getTicker({ id: 'abc' });
        } finally {
          if (saved !== undefined) (globalThis as { WebSocket?: unknown }).WebSocket = saved;
        }
      })(),
    );
    expect(missing).toBeInstanceOf(ClientError);
    expect((missing as Error).message).toMatch(/pass createClient\(\{ WebSocket \}\)/);
  });
});

describe('reconnecting', () => {
  it('opens again after the server went away (1001), with a fresh token, and tells onReconnect first', async () => {
    const first = await started();
    const port = Number(new URL(first.url).port);
    const issued: string[] = [];
    const client = createClient<typeof api>({
      baseUrl: first.url,
      routes,
      WebSocket,
      token: async () => {
        const { accessToken } = await tokens.issuePair(`u${issued.length + 1}`);
        issued.push(accessToken);
        return accessToken;
      },
    });
    const socket = await client.rooms.roomSocket({ room: 'lobby' });
    const order: string[] = [];
    socket.onReconnect(() => {
      order.push('reconnected');
      void socket.send({ text: 'resubscribed' });
    });
    await socket.send({ text: 'before' });
    expect(await next(socket)).toMatchObject({ text: 'before', by: 'u1' });

    await first.app.close();
    opened.splice(opened.indexOf(first.app), 1);
    // Sent while no instance answers: it waits for the next connection.
    const waiting = socket.send({ text: 'meanwhile' }).then(() => order.push('sent'));
    await started(port);
    const resubscribed = await next(socket);
    expect(resubscribed.text).toBe('resubscribed');
    // The new connection asked for a token again: the server saw the user of a later one.
    expect(resubscribed.by).not.toBe('u1');
    expect(await next(socket)).toMatchObject({ text: 'meanwhile' });
    await waiting;
    expect(order).toEqual(['reconnected', 'sent']);
    expect(socket.state).toBe('open');
    socket.close();
  });

  it('opens again with a fresh token when the server ends the socket for its lapsed one (4401)', async () => {
    const { url } = await started();
    const issued: string[] = [];
    const client = createClient<typeof api>({
      baseUrl: url,
      routes,
      WebSocket,
      token: async () => {
        const { accessToken } = await tokens.issuePair(`u${issued.length + 1}`);
        issued.push(accessToken);
        return accessToken;
      },
    });
    const socket = await client.rooms.roomSocket({ room: 'lobby' });
    const reconnected = new Promise<void>((resolve) => socket.onReconnect(() => resolve()));
    await socket.send({ text: 'before' });
    expect(await next(socket)).toMatchObject({ text: 'before', by: 'u1' });
    // Signed out elsewhere: the server's next check ends the socket, the client comes back.
    await tokens.revoke(await tokens.verifyAccess(issued[0] as string));
    await reconnected;
    await socket.send({ text: 'after' });
    expect(await next(socket)).toMatchObject({ text: 'after', by: 'u2' });
    expect(socket.state).toBe('open');
    socket.close();
  });

  it('ends with the error of a token function that throws at a reconnection, without retrying it', async () => {
    const first = await started();
    const port = Number(new URL(first.url).port);
    const { accessToken } = await tokens.issuePair('u1');
    let asked = 0;
    const client = createClient<typeof api>({
      baseUrl: first.url,
      routes,
      WebSocket,
      token: () => {
        asked++;
        if (asked > 1) throw new Error('signed out');
        return accessToken;
      },
    });
    const socket = await client.rooms.roomSocket({ room: 'lobby' });
    await first.app.close();
    opened.splice(opened.indexOf(first.app), 1);
    await started(port);
    const ended = await failure(next(socket));
    expect((ended as Error).message).toBe('signed out');
    expect(asked).toBe(2);
    expect(socket.state).toBe('closed');
  });

  it('ends with the problem when a reconnection is refused for good', async () => {
    const first = await started();
    const port = Number(new URL(first.url).port);
    let token: string | undefined = (await tokens.issuePair('u1')).accessToken;
    const client = createClient<typeof api>({ baseUrl: first.url, routes, WebSocket, token: () => token });
    const socket = await client.rooms.roomSocket({ room: 'lobby' });
    token = undefined;
    await first.app.close();
    opened.splice(opened.indexOf(first.app), 1);
    await started(port);
    const ended = await failure(next(socket));
    expect(ended).toBeInstanceOf(ProblemError);
    expect(ended).toMatchObject({ status: 401 });
    expect(socket.state).toBe('closed');
  });
});
