/**
 * A socket opened with a token ends when that token lapses: at its expiry, and at the first check
 * after a logout, a password reset or the user's deactivation (docs/sockets.md, "Authentication").
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { z } from 'zod';
import { NotFoundError, ProceedError } from '../core/errors.js';
import { guard } from '../core/guards.js';
import { procedure, procedures } from '../core/procedure.js';
import { webSocket } from '../core/sockets.js';
import { UnavailableError } from '../core/unavailable.js';
import { createApp } from '../server/create-app.js';
import { admin } from './guards.js';
import { authPlugin } from './plugin.js';
import { MemoryRevocationStore } from './revocation.js';
import { TokenService } from './tokens.js';

const users = new Map([
  [
    '00000000-0000-4000-8000-000000000001',
    { id: '00000000-0000-4000-8000-000000000001', isActive: true, role: 'user' },
  ],
  [
    '00000000-0000-4000-8000-000000000002',
    { id: '00000000-0000-4000-8000-000000000002', isActive: true, role: 'user' },
  ],
]);
const [ann, bob] = [...users.keys()] as [string, string];
const tokens = new TokenService({
  secret: 'a-socket-test-secret-of-32-characters',
  store: new MemoryRevocationStore(),
});
const shortLived = new TokenService({
  secret: 'a-socket-test-secret-of-32-characters',
  store: tokens.store,
  accessTokenTtl: 1,
});
const app = createApp({ logger: false, maxSocketsPerClient: 2 });
/** What the membership guard throws at its next check, if anything. */
let memberFault: (() => Error) | undefined;
const member = guard({
  name: 'member',
  check: () => {
    if (memberFault !== undefined) throw memberFault();
    return true;
  },
});
let origin = '';

beforeAll(async () => {
  await app.register(authPlugin, { tokens, userLoader: (id: string) => users.get(id) });
  app.mount([
    procedures('rooms', {
      echoRoom: procedure()
        .rest({ method: 'GET', path: '/rooms/echo' })
        .output(
          webSocket({
            receive: z.object({ text: z.string() }),
            send: z.object({ text: z.string() }),
            credentialsCheck: 100,
          }),
        )
        .query(async function* ({ messages }) {
          for await (const message of messages) yield message;
        }),
      // The default check, once a minute: a logout made here is seen at once all the same.
      quietRoom: procedure()
        .rest({ method: 'GET', path: '/rooms/quiet' })
        .output(webSocket({ receive: z.object({ text: z.string() }), send: z.object({ text: z.string() }) }))
        .query(async function* ({ messages }) {
          for await (const message of messages) yield message;
        }),
      memberRoom: procedure()
        .rest({ method: 'GET', path: '/rooms/member' })
        .guard(member)
        .output(
          webSocket({
            receive: z.object({ text: z.string() }),
            send: z.object({ text: z.string() }),
            credentialsCheck: 100,
          }),
        )
        .query(async function* ({ messages }) {
          for await (const message of messages) yield message;
        }),
      adminRoom: procedure<{ user?: { role: string } }>()
        .rest({ method: 'GET', path: '/rooms/admin' })
        .guard(admin)
        .output(
          webSocket({
            receive: z.object({ text: z.string() }),
            send: z.object({ text: z.string(), role: z.string() }),
            credentialsCheck: 100,
          }),
        )
        .query(async function* ({ messages, ctx }) {
          for await (const message of messages) yield { text: message.text, role: ctx.user.role };
        }),
    }),
  ]);
  origin = (await app.listen({ port: 0, handleSignals: false, logRoutes: false })).replace(/^http/, 'ws');
});
afterAll(() => app.close());

/** The status a handshake with `token` is refused with, or 101. */
function handshakeStatus(token: string | undefined): Promise<number> {
  const query = token === undefined ? '' : `?access_token=${encodeURIComponent(token)}`;
  const ws = new WebSocket(`${origin}/api/rooms/echo${query}`);
  // A refused handshake is ended here, which `ws` reports as an error of its own.
  ws.on('error', () => undefined);
  return new Promise((resolve) => {
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      ws.terminate();
    });
  });
}

/** Opens the echo room with `token`; resolves once open, with the close it will end with. */
async function openWith(token: string | undefined, room = 'echo') {
  const query = token === undefined ? '' : `?access_token=${encodeURIComponent(token)}`;
  const ws = new WebSocket(`${origin}/api/rooms/${room}${query}`);
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return { ws, closed };
}

const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([
    promise,
    new Promise<'still open'>((resolve) => setTimeout(() => resolve('still open'), ms)),
  ]);

describe('a socket opened with a token', () => {
  it('ends with 4401 once the token is revoked (a logout), and lives on while it holds', async () => {
    const { accessToken } = await tokens.issuePair(ann);
    const socket = await openWith(accessToken);
    expect(await within(socket.closed, 350)).toBe('still open');
    await tokens.revoke(await tokens.verifyAccess(accessToken));
    expect(await within(socket.closed, 10_000)).toEqual({ code: 4401, reason: 'the token no longer holds' });
  });

  it('ends at once when the logout or reset is made in this process, not at the next check a minute on', async () => {
    const { accessToken } = await tokens.issuePair(ann);
    const loggedOut = await openWith(accessToken, 'quiet');
    const reset = await openWith((await tokens.issuePair(ann)).accessToken, 'quiet');
    const other = await openWith((await tokens.issuePair(bob)).accessToken, 'quiet');
    await tokens.revoke(await tokens.verifyAccess(accessToken));
    expect(await within(loggedOut.closed, 5_000)).toEqual({
      code: 4401,
      reason: 'the token no longer holds',
    });
    expect(await within(reset.closed, 300)).toBe('still open');
    await tokens.revokeAllForUser(ann);
    expect(await within(reset.closed, 5_000)).toEqual({ code: 4401, reason: 'the token no longer holds' });
    expect(await within(other.closed, 300)).toBe('still open');
    other.ws.close();
  });

  it("ends once the user's tokens are all revoked (a password reset) or the user is deactivated", async () => {
    const reset = await openWith((await tokens.issuePair(ann)).accessToken);
    await tokens.revokeAllForUser(ann);
    expect(await within(reset.closed, 10_000)).toEqual({ code: 4401, reason: 'the token no longer holds' });
    const deactivated = await openWith((await tokens.issuePair(bob)).accessToken);
    users.set(bob, { id: bob, isActive: false, role: 'user' });
    expect(await within(deactivated.closed, 10_000)).toEqual({
      code: 4401,
      reason: 'the token no longer holds',
    });
  });

  it("ends with 4403 once the route's guards refuse the user as now loaded (a demoted admin)", async () => {
    users.set(bob, { id: bob, isActive: true, role: 'admin' });
    const { ws, closed } = await openWith((await tokens.issuePair(bob)).accessToken, 'admin');
    const echoed = () =>
      new Promise<unknown>((resolve) => ws.once('message', (data) => resolve(JSON.parse(String(data)))));
    const reply = echoed();
    ws.send(JSON.stringify({ text: 'hi' }));
    expect(await reply).toEqual({ text: 'hi', role: 'admin' });
    expect(await within(closed, 350)).toBe('still open');
    users.set(bob, { id: bob, isActive: true, role: 'editor' });
    const ended = await within(closed, 10_000);
    expect(ended).toEqual({ code: 4403, reason: 'the route no longer allows this user' });
    users.set(bob, { id: bob, isActive: true, role: 'user' });
  });

  it('ends with 1013, to be opened again, when a guard cannot answer (a service down, a 429), and with 4403 when it throws a refusal', async () => {
    const lapsed = { code: 1013, reason: 'the credentials could not be checked' };
    const refused = { code: 4403, reason: 'the route no longer allows this user' };
    const faults: Array<[() => Error, typeof lapsed]> = [
      [() => new UnavailableError(new Error('the membership service is down')), lapsed],
      // A 4xx is a refusal (the room gone); a 429 passes, so the check is tried again.
      [() => new NotFoundError('No such room'), refused],
      [() => new ProceedError('RATE_LIMITED', 'Too many checks'), lapsed],
    ];
    for (const [fault, close] of faults) {
      const { closed } = await openWith((await tokens.issuePair(ann)).accessToken, 'member');
      expect(await within(closed, 350)).toBe('still open');
      memberFault = fault;
      expect(await within(closed, 10_000)).toEqual(close);
      memberFault = undefined;
    }
  });

  it('ends with 4401 when the token expires; an anonymous socket has nothing to lapse', async () => {
    const anonymous = await openWith(undefined);
    const { accessToken } = await shortLived.issuePair(ann);
    const expiring = await openWith(accessToken);
    expect(await within(expiring.closed, 10_000)).toEqual({ code: 4401, reason: 'the token expired' });
    expect(await within(anonymous.closed, 200)).toBe('still open');
    anonymous.ws.close();
    await anonymous.closed;
  });

  it('counts a user wherever it connects from, anyone else by address: one more than maxSocketsPerClient is a 429', async () => {
    users.set(bob, { id: bob, isActive: true, role: 'user' });
    const annToken = (await tokens.issuePair(ann)).accessToken;
    // The server counts a socket as gone once its close is done, a moment after the client's
    // own close event: each place is taken again as soon as it is free.
    const openSoon = (token: string | undefined) =>
      vi.waitFor(() => openWith(token), { timeout: 5000, interval: 50 });
    const held = [
      await openSoon(undefined),
      await openSoon(undefined),
      await openSoon(annToken),
      await openSoon(annToken),
    ];
    expect(await handshakeStatus(undefined)).toBe(429);
    expect(await handshakeStatus((await tokens.issuePair(ann)).accessToken)).toBe(429);
    // Another user is another client, from the same address.
    expect(await handshakeStatus((await tokens.issuePair(bob)).accessToken)).toBe(101);
    // A closed socket frees its place.
    const first = held[0] as Awaited<ReturnType<typeof openWith>>;
    first.ws.close();
    await first.closed;
    await vi.waitFor(async () => expect(await handshakeStatus(undefined)).toBe(101), {
      timeout: 5000,
      interval: 50,
    });
    for (const socket of held) socket.ws.close();
  });
});
