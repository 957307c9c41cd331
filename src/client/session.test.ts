import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { authenticated } from '../auth/guards.js';
import { type AuthContext, authPlugin } from '../auth/plugin.js';
import { MemoryRevocationStore } from '../auth/revocation.js';
import { type TokenPair, TokenService } from '../auth/tokens.js';
import { procedure, procedures } from '../core/procedure.js';
import { createApp } from '../server/create-app.js';
import {
  ClientError,
  createClient,
  ProblemError,
  type RefreshingSession,
  refreshingSession,
  routeManifest,
} from './index.js';

type Ctx = AuthContext<{ id: string }>;
const p = () => procedure<Ctx>();
const userId = '0190a4f2-0000-7000-8000-000000000001';
const tokens = new TokenService({
  secret: 'client-session-secret-that-is-at-least-32-bytes',
  store: new MemoryRevocationStore(),
  accessTokenTtl: 60,
  clockTolerance: 0,
});
let refreshes = 0;

const auth = procedures('auth', {
  me: p()
    .rest({ method: 'GET', path: '/auth/me' })
    .guard(authenticated)
    .query(({ ctx }) => ({ id: ctx.user.id })),
  refresh: p()
    .rest({ method: 'POST', path: '/auth/refresh' })
    .input(z.object({ refreshToken: z.string() }))
    .mutation(({ input }) => {
      refreshes++;
      return tokens.refresh(input.refreshToken);
    }),
});
const api = [auth] as const;
const routes = routeManifest(api);
const app = createApp<Ctx>({ logger: false });
await app.register(authPlugin, { tokens, userLoader: (id) => ({ id }) });
app.mount(api);
afterAll(() => app.close());

/** What went over the wire: each request's path and the bearer token it carried. */
const sent: { path: string; token: string | undefined }[] = [];
const wire: typeof fetch = (input, init) => {
  const request = new Request(input, init);
  sent.push({
    path: new URL(request.url).pathname,
    token: request.headers.get('authorization')?.slice('Bearer '.length),
  });
  return app.fetch(request);
};
const anonymous = createClient<typeof api>({ baseUrl: 'http://api.example', routes, fetch: wire });

/** A signed-in session whose access token has expired (the clock moved on two minutes). */
async function expiredSession(
  changes: (TokenPair | undefined)[] = [],
  refresh = (refreshToken: string) => anonymous.auth.refresh({ refreshToken }),
) {
  const pair = await tokens.issuePair(userId);
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 120_000 });
  const session = refreshingSession<TokenPair>({
    session: pair,
    refresh,
    onChange: (changed) => changes.push(changed),
    fetch: wire,
  });
  return { pair, session, client: clientOf(session) };
}

/** The typed client of a session: its token on every call, its fetch refreshing it. */
function clientOf(session: RefreshingSession<TokenPair>) {
  return createClient<typeof api>({
    baseUrl: 'http://api.example',
    routes,
    token: session.token,
    fetch: session.fetch,
  });
}

/** A promise and the function that resolves it (Node 20 has no `Promise.withResolvers`). */
function opening(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

afterEach(() => {
  vi.useRealTimers();
  sent.length = 0;
  refreshes = 0;
});

describe('refreshingSession', () => {
  it('refreshes once for calls refused at once, and sends each again with the new token', async () => {
    const changes: (TokenPair | undefined)[] = [];
    const { pair, session, client } = await expiredSession(changes);
    const answers = await Promise.all([client.auth.me(), client.auth.me(), client.auth.me()]);
    expect(answers).toEqual([{ id: userId }, { id: userId }, { id: userId }]);
    expect(refreshes).toBe(1);
    expect(changes).toHaveLength(1);
    const renewed = session.current;
    expect(renewed?.accessToken).not.toBe(pair.accessToken);
    expect(changes[0]).toBe(renewed);
    expect(sent.filter(({ path }) => path === '/api/auth/me').map(({ token }) => token)).toEqual([
      pair.accessToken,
      pair.accessToken,
      pair.accessToken,
      renewed?.accessToken,
      renewed?.accessToken,
      renewed?.accessToken,
    ]);
    // The refresh itself carried no token: the refresh route refuses an expired one too.
    expect(sent.find(({ path }) => path === '/api/auth/refresh')?.token).toBeUndefined();
  });

  it('sends a call refused after the refresh again with the new token, without a refresh of its own', async () => {
    const { pair, session, client } = await expiredSession();
    await client.auth.me();
    expect(refreshes).toBe(1);
    const late = await session.fetch('http://api.example/api/auth/me', {
      headers: { authorization: `Bearer ${pair.accessToken}` },
    });
    expect(late.status).toBe(200);
    expect(refreshes).toBe(1);
    expect(sent.at(-1)?.token).toBe(session.current?.accessToken);
  });

  it('ends the session when the refresh is refused, and the call rejects with its 401', async () => {
    const changes: (TokenPair | undefined)[] = [];
    const { session, client } = await expiredSession(changes);
    await tokens.revokeAllForUser(userId);
    const refused = await client.auth.me().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ProblemError);
    expect((refused as ProblemError).code).toBe('INVALID_TOKEN');
    expect(refreshes).toBe(1);
    expect(changes).toEqual([undefined]);
    expect(session.current).toBeUndefined();
    expect(session.token()).toBeUndefined();
    // Signed out: the next call goes without a token and is refused as anonymous, with no refresh.
    const anonymousCall = await client.auth.me().catch((error: unknown) => error);
    expect((anonymousCall as ProblemError).code).toBe('UNAUTHENTICATED');
    expect(refreshes).toBe(1);
  });

  it('keeps the session when the refresh fails for another reason, and the call rejects with it', async () => {
    const pair = await tokens.issuePair(userId);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 120_000 });
    const limited = new ProblemError(
      { type: 'about:blank', title: 'Too many requests', status: 429, code: 'RATE_LIMITED' },
      new Headers(),
    );
    const session = refreshingSession<TokenPair>({
      session: pair,
      refresh: () => Promise.reject(limited),
      fetch: wire,
    });
    const client = clientOf(session);
    const failed = await client.auth.me().catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(ClientError);
    expect((failed as ClientError).cause).toBe(limited);
    expect(session.current).toBe(pair);
  });

  it('lets a login made while a refresh runs stand, and sends the call with it', async () => {
    const refreshStarted = opening();
    const gate = opening();
    const { session, client } = await expiredSession([], async (refreshToken) => {
      refreshStarted.resolve();
      await gate.promise;
      return anonymous.auth.refresh({ refreshToken });
    });
    const call = client.auth.me();
    await refreshStarted.promise;
    const fresh = await tokens.issuePair(userId);
    session.set(fresh);
    gate.resolve();
    expect(await call).toEqual({ id: userId });
    expect(session.current).toBe(fresh);
    expect(sent.at(-1)?.token).toBe(fresh.accessToken);
  });

  it('passes any other answer through untouched', async () => {
    const session = refreshingSession<TokenPair>({
      refresh: () => Promise.reject(new Error('never asked')),
      fetch: wire,
    });
    const client = clientOf(session);
    const refused = await client.auth.me().catch((error: unknown) => error);
    expect((refused as ProblemError).code).toBe('UNAUTHENTICATED');
    expect(refreshes).toBe(0);
  });
});
