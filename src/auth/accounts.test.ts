import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConflictError } from '../core/errors.js';
import { procedure, procedures } from '../core/procedure.js';
import type { App } from '../server/app.js';
import { createApp } from '../server/create-app.js';
import { type AccountStore, type AccountUser, accountProcedures, type ResetTokenStore } from './accounts.js';
import { fixtureSecret } from './fixtures/app.js';
import { hashPassword } from './password.js';
import { type AuthContext, authPlugin } from './plugin.js';
import { MemoryRevocationStore } from './revocation.js';
import { TokenService, uuidv7 } from './tokens.js';

interface Member extends AccountUser {
  name: string;
  isActive: boolean;
}

interface Ctx extends AuthContext<Member> {
  tokens: TokenService;
  members: AccountStore<Member, { name: string }>;
  resets: ResetTokenStore;
  later: (task: () => Promise<void>) => void;
  cheapPasswords?: { N: number; r: number; p: number };
}

/** The users of one test, in memory, as an app's database would keep them. */
function memberStore() {
  const rows = new Map<string, Member & { passwordHash: string }>();
  const store = {
    rows,
    /** Runs before each read by email: the test's way to land something mid-login. */
    beforeFindByEmail: undefined as (() => Promise<void>) | undefined,
    async findByEmail(email: string) {
      await store.beforeFindByEmail?.();
      const found = [...rows.values()].find((row) => row.email === email);
      return found === undefined ? undefined : { ...found };
    },
    async findById(id: string) {
      const found = rows.get(id);
      if (found === undefined) return undefined;
      const { passwordHash: _, ...member } = found;
      return member;
    },
    async create(account: { email: string; passwordHash: string; name: string }) {
      if ([...rows.values()].some((row) => row.email === account.email)) return undefined;
      const row = { id: uuidv7(), isActive: true, ...account };
      rows.set(row.id, row);
      const { passwordHash: _, ...member } = row;
      return member;
    },
    async setPassword(id: string, passwordHash: string) {
      const row = rows.get(id);
      if (row !== undefined) row.passwordHash = passwordHash;
    },
    /** Runs before each conditional write: the test's way to land a reset just before it. */
    beforeReplace: undefined as (() => Promise<void>) | undefined,
    async replacePasswordHash(id: string, previousHash: string, passwordHash: string) {
      await store.beforeReplace?.();
      const row = rows.get(id);
      if (row !== undefined && row.passwordHash === previousHash) row.passwordHash = passwordHash;
    },
  };
  return store;
}

function resetStore() {
  const rows = new Map<string, { userId: string; expiresAt: Date; used: boolean }>();
  return {
    rows,
    async create(reset: { tokenHash: string; userId: string; expiresAt: Date }) {
      rows.set(reset.tokenHash, { userId: reset.userId, expiresAt: reset.expiresAt, used: false });
    },
    async consume(tokenHash: string) {
      const row = rows.get(tokenHash);
      if (row === undefined || row.used || row.expiresAt <= new Date()) return undefined;
      row.used = true;
      return row.userId;
    },
    async invalidateForUser(userId: string) {
      for (const row of rows.values()) if (row.userId === userId) row.used = true;
    },
    pruned: 0,
    async prune() {
      this.pruned++;
      for (const [hash, row] of rows) if (row.used) rows.delete(hash);
    },
  };
}

const Member = z.object({ id: z.string(), email: z.string(), name: z.string() });

/** What every app of this file gives the account procedures. */
const essentials = {
  procedure: () => procedure<Ctx>(),
  users: (ctx: Ctx) => ctx.members,
  tokens: (ctx: Ctx) => ctx.tokens,
  view: Member,
  profile: { name: z.string().min(1).max(100) },
  rateLimit: { name: 'auth', max: 1000, window: 60_000 },
};

const account = accountProcedures({
  ...essentials,
  onRegistered: (_ctx, user) => {
    registered.push(user.email);
  },
  passwordReset: {
    store: (ctx) => ctx.resets,
    send: async (_ctx, message) => void mailed.push(message),
    background: (ctx, task) => ctx.later(task),
  },
});
const registered: string[] = [];
const mailed: { user: Member; token: string; expiresAt: Date }[] = [];

describe('accountProcedures: one behaviour for every app', () => {
  let app: App<Ctx>;
  let members: ReturnType<typeof memberStore>;
  let resets: ReturnType<typeof resetStore>;
  let tokens: TokenService;
  let pending: Promise<void>[];

  beforeEach(async () => {
    members = memberStore();
    resets = resetStore();
    tokens = new TokenService({ secret: fixtureSecret, store: new MemoryRevocationStore() });
    pending = [];
    registered.length = 0;
    mailed.length = 0;
    app = createApp<Ctx>({
      logger: false,
      context: () => ({ tokens, members, resets, later: (task) => void pending.push(task()) }),
    });
    await app.register(authPlugin, { tokens, userLoader: (id) => members.findById(id) });
    app.mount([procedures('auth', account)]);
    await app.ready();
  });
  afterEach(() => app.close());

  const post = (url: string, payload: object, token?: string) =>
    app.inject({
      method: 'POST',
      url: `/api/auth/${url}`,
      payload,
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    });
  const me = (token: string) =>
    app.inject({ url: '/api/auth/me', headers: { authorization: `Bearer ${token}` } });
  const register = async (email = 'ada@example.com', password = 'correct horse') => {
    const answer = await post('register', { email, password, name: 'Ada' });
    expect(answer.statusCode).toBe(201);
    return answer.json() as { user: Member; accessToken: string; refreshToken: string };
  };

  it('registers with the profile fields, lowercases the email, calls onRegistered, and answers 409 for a taken email', async () => {
    const answer = await post('register', {
      email: ' Ada@Example.COM',
      password: 'correct horse',
      name: 'Ada',
    });
    expect(answer.statusCode).toBe(400);
    const session = await register('Ada@Example.COM');
    expect(session.user).toEqual({ id: session.user.id, email: 'ada@example.com', name: 'Ada' });
    expect(session).toMatchObject({ tokenType: 'Bearer', expiresIn: 900 });
    expect(registered).toEqual(['ada@example.com']);
    expect((await me(session.accessToken)).json()).toEqual(session.user);

    const taken = await post('register', { email: 'ADA@example.com', password: 'another one', name: 'Ada' });
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toMatchObject({ code: 'CONFLICT', detail: 'An account with this email exists' });
    await expect(
      post('register', { email: 'x@example.com', password: 'short', name: 'X' }),
    ).resolves.toMatchObject({
      statusCode: 400,
    });
  });

  it('keeps a ConflictError the store throws', async () => {
    members.create = async () => {
      throw new ConflictError('That email is taken');
    };
    const answer = await post('register', {
      email: 'ada@example.com',
      password: 'correct horse',
      name: 'Ada',
    });
    expect(answer.statusCode).toBe(409);
    expect(answer.json().detail).toBe('That email is taken');
  });

  it('answers an unknown email and a wrong password with the same 401, and a deactivated account with 403', async () => {
    await register();
    const wrong = await post('login', { email: 'ada@example.com', password: 'wrong horse' });
    const unknown = await post('login', { email: 'nobody@example.com', password: 'correct horse' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.headers['www-authenticate']).toBe('Bearer');
    const { instance: _a, requestId: _b, ...wrongBody } = wrong.json();
    const { instance: _c, requestId: _d, ...unknownBody } = unknown.json();
    expect(unknownBody).toEqual(wrongBody);

    const login = await post('login', { email: 'ADA@example.com', password: 'correct horse' });
    expect(login.statusCode).toBe(200);
    expect(login.headers['cache-control']).toBe('no-store');
    expect(login.json().user).not.toHaveProperty('passwordHash');

    for (const row of members.rows.values()) row.isActive = false;
    const deactivated = await post('login', { email: 'ada@example.com', password: 'correct horse' });
    expect(deactivated.statusCode).toBe(403);
    expect(deactivated.json()).toMatchObject({ code: 'FORBIDDEN', detail: 'This account is deactivated' });
  });

  it('refuses every login to an account after ten failed passwords from any addresses, the right one included, and only that account', async () => {
    await register();
    const from = (email: string, password: string, address: string) =>
      app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { email, password },
        remoteAddress: address,
      });
    // Successes are not counted: a user who signs in often is never refused.
    for (let attempt = 0; attempt < 3; attempt += 1)
      expect((await from('ada@example.com', 'correct horse', '192.0.2.1')).statusCode).toBe(200);
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const wrong = await from(
        attempt % 2 === 0 ? 'ada@example.com' : ' ADA@example.com ',
        'guess',
        `198.51.100.${attempt}`,
      );
      expect(wrong.statusCode).toBe(401);
    }
    const refused = await from('ada@example.com', 'correct horse', '192.0.2.1');
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 'RATE_LIMITED' });
    const wait = Number(refused.headers['retry-after']);
    expect(wait).toBeGreaterThan(14 * 60);
    expect(wait).toBeLessThanOrEqual(15 * 60);
    // An email without an account is counted the same way, so the 429 tells nothing about it.
    for (let attempt = 0; attempt < 10; attempt += 1)
      expect((await from('nobody@example.com', 'guess', `203.0.113.${attempt}`)).statusCode).toBe(401);
    expect((await from('nobody@example.com', 'guess', '203.0.113.99')).statusCode).toBe(429);
    // Another account is not touched.
    await register('grace@example.com');
    expect((await from('grace@example.com', 'correct horse', '198.51.100.1')).statusCode).toBe(200);
  });

  it('counts failed password changes per user, and reset mails per address whether or not it has an account', async () => {
    const session = await register();
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const wrong = await post(
        'change-password',
        { currentPassword: `guess ${attempt}`, newPassword: 'battery staple' },
        session.accessToken,
      );
      expect(wrong.statusCode).toBe(400);
    }
    const refused = await post(
      'change-password',
      { currentPassword: 'correct horse', newPassword: 'battery staple' },
      session.accessToken,
    );
    expect(refused.statusCode).toBe(429);
    expect((await post('login', { email: 'ada@example.com', password: 'correct horse' })).statusCode).toBe(
      200,
    );

    for (const email of ['ada@example.com', 'nobody@example.com']) {
      for (let attempt = 0; attempt < 5; attempt += 1)
        expect((await post('forgot-password', { email })).statusCode).toBe(202);
      expect((await post('forgot-password', { email: email.toUpperCase() })).statusCode).toBe(429);
    }
    await Promise.all(pending);
    expect(mailed).toHaveLength(5);
  });

  it('takes the per-account limits from its options, and none with false', async () => {
    const own = async (options: object) => {
      const made = createApp<Ctx>({
        logger: false,
        context: () => ({ tokens, members, resets, later: (task) => void pending.push(task()) }),
      });
      await made.register(authPlugin, { tokens, userLoader: (id) => members.findById(id) });
      return made.mount([procedures('auth', accountProcedures({ ...essentials, ...options }))]);
    };
    const tries = async (target: App<Ctx>, count: number) => {
      const statuses: number[] = [];
      for (let attempt = 0; attempt < count; attempt += 1)
        statuses.push(
          (
            await target.inject({
              method: 'POST',
              url: '/api/auth/login',
              payload: { email: 'ada@example.com', password: 'guess' },
            })
          ).statusCode,
        );
      return statuses;
    };
    const strict = await own({ failedAttempts: { max: 2, window: 60_000 } });
    expect(await tries(strict, 3)).toEqual([401, 401, 429]);
    const off = await own({ failedAttempts: false });
    expect(await tries(off, 12)).toEqual(Array(12).fill(401));
    await Promise.all([strict.close(), off.close()]);
    expect(() => accountProcedures({ ...essentials, failedAttempts: { max: 0, window: 1 } })).toThrow(
      /accountProcedures failedAttempts: .*max must be an integer ≥ 1/,
    );
    expect(() => accountProcedures({ ...essentials, failedAttempts: { max: 3 } } as never)).toThrow(
      /window must be/,
    );
  });

  it('revokes a login that a user-wide revocation (a password reset) lands in the middle of', async () => {
    const { user } = await register();
    let reads = 0;
    members.beforeFindByEmail = async () => {
      // Between the first read (the generation is read after it) and the password check.
      if (++reads === 2) await tokens.revokeAllForUser(user.id);
    };
    const login = await post('login', { email: 'ada@example.com', password: 'correct horse' });
    expect(login.statusCode).toBe(200);
    expect((await me(login.json().accessToken)).statusCode).toBe(401);
  });

  it('re-hashes at login a password stored at a weaker cost, and keeps a password changed meanwhile', async () => {
    const { user } = await register();
    const row = members.rows.get(user.id);
    if (row === undefined) throw new Error('no row');
    row.passwordHash = await hashPassword('correct horse', { N: 16384, r: 8, p: 1 });
    expect((await post('login', { email: 'ada@example.com', password: 'correct horse' })).statusCode).toBe(
      200,
    );
    expect(row.passwordHash).toMatch(/^scrypt\$16384\$8\$5\$/);
    expect((await post('login', { email: 'ada@example.com', password: 'correct horse' })).statusCode).toBe(
      200,
    );

    // A password change that lands while the login checks the old one is not undone by its re-hash.
    row.passwordHash = await hashPassword('correct horse', { N: 16384, r: 8, p: 1 });
    const changed = await hashPassword('battery staple');
    let reads = 0;
    members.beforeFindByEmail = async () => {
      if (++reads === 2)
        setTimeout(() => {
          row.passwordHash = changed;
        }, 0);
    };
    expect((await post('login', { email: 'ada@example.com', password: 'correct horse' })).statusCode).toBe(
      200,
    );
    expect(row.passwordHash).toBe(changed);
  });

  it('refreshes once per refresh token, and never for a deactivated or deleted user', async () => {
    const session = await register();
    const refreshed = await post('refresh', { refreshToken: session.refreshToken });
    expect(refreshed.statusCode).toBe(200);
    expect(refreshed.json().user).toEqual(session.user);
    const again = await post('refresh', { refreshToken: session.refreshToken });
    expect(again.json()).toMatchObject({ status: 401, code: 'INVALID_TOKEN' });

    const other = await post('login', { email: 'ada@example.com', password: 'correct horse' });
    for (const row of members.rows.values()) row.isActive = false;
    const refused = await post('refresh', { refreshToken: other.json().refreshToken });
    expect(refused.json()).toMatchObject({ status: 401, code: 'INVALID_TOKEN' });
    for (const row of members.rows.values()) row.isActive = true;
    const third = await post('login', { email: 'ada@example.com', password: 'correct horse' });
    members.rows.clear();
    expect((await post('refresh', { refreshToken: third.json().refreshToken })).statusCode).toBe(401);
  });

  it('logs out with 200 { success: true }: that login ends, others do not', async () => {
    const first = await register();
    const second = (await post('login', { email: 'ada@example.com', password: 'correct horse' })).json();
    const out = await post('logout', {}, first.accessToken);
    expect(out.statusCode).toBe(200);
    expect(out.json()).toEqual({ success: true });
    expect((await me(first.accessToken)).json()).toMatchObject({
      code: 'INVALID_TOKEN',
      detail: 'jwt revoked',
    });
    expect((await post('refresh', { refreshToken: first.refreshToken })).statusCode).toBe(401);
    expect((await me(second.accessToken)).statusCode).toBe(200);
    expect((await post('logout', {})).json()).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
  });

  it('changes the password with the current one: other sessions and reset links end, this one gets a new pair', async () => {
    const first = await register();
    const other = (await post('login', { email: 'ada@example.com', password: 'correct horse' })).json();
    await post('forgot-password', { email: 'ada@example.com' });
    await Promise.all(pending);
    const wrong = await post(
      'change-password',
      { currentPassword: 'wrong horse', newPassword: 'battery staple' },
      first.accessToken,
    );
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().errors).toEqual([
      { path: 'currentPassword', message: 'The current password is wrong' },
    ]);

    const changed = await post(
      'change-password',
      { currentPassword: 'correct horse', newPassword: 'battery staple' },
      first.accessToken,
    );
    expect(changed.statusCode).toBe(200);
    expect(changed.headers['cache-control']).toBe('no-store');
    expect((await me(changed.json().accessToken)).headers['cache-control']).toBe('no-store');
    expect((await me(changed.json().accessToken)).statusCode).toBe(200);
    expect((await me(first.accessToken)).statusCode).toBe(401);
    expect((await me(other.accessToken)).statusCode).toBe(401);
    const link = mailed[0]?.token ?? '';
    expect((await post('reset-password', { token: link, password: 'a new one!' })).statusCode).toBe(400);
    expect((await post('login', { email: 'ada@example.com', password: 'correct horse' })).statusCode).toBe(
      401,
    );
    expect((await post('login', { email: 'ada@example.com', password: 'battery staple' })).statusCode).toBe(
      200,
    );
    expect(
      (await post('change-password', { currentPassword: 'x', newPassword: 'yyyyyyyy' })).statusCode,
    ).toBe(401);
  });

  it.each([
    ['while the current password is checked', 1],
    ['once the new one is written', 2],
  ])('lets a password reset that lands %s win over a password change', async (_when, landsAtRead) => {
    const { user, accessToken } = await register();
    const row = members.rows.get(user.id);
    if (row === undefined) throw new Error('no row');
    const resetHash = await hashPassword('the owner resets');
    let reads = 0;
    members.beforeFindByEmail = async () => {
      if (++reads !== landsAtRead) return;
      // A reset, as resetPassword makes one: the password set, every session revoked.
      const resets = async () => {
        row.passwordHash = resetHash;
        await tokens.revokeAllForUser(user.id);
      };
      if (landsAtRead === 1) setTimeout(() => void resets(), 0);
      else await resets();
    };
    const changed = await post(
      'change-password',
      { currentPassword: 'correct horse', newPassword: 'the intruder keeps it' },
      accessToken,
    );
    expect(changed.json()).toMatchObject({ status: 401, code: 'INVALID_TOKEN' });
    members.beforeFindByEmail = undefined;
    expect(row.passwordHash).toBe(resetHash);
    expect((await me(accessToken)).statusCode).toBe(401);
    const login = (password: string) => post('login', { email: 'ada@example.com', password });
    expect((await login('the intruder keeps it')).statusCode).toBe(401);
    expect((await login('the owner resets')).statusCode).toBe(200);
  });

  it("keeps a reset's password that lands just before the change writes, its revocation after the answer", async () => {
    const { user, accessToken } = await register();
    const row = members.rows.get(user.id);
    if (row === undefined) throw new Error('no row');
    const resetHash = await hashPassword('the owner resets');
    members.beforeReplace = async () => {
      row.passwordHash = resetHash;
    };
    const changed = await post(
      'change-password',
      { currentPassword: 'correct horse', newPassword: 'the intruder keeps it' },
      accessToken,
    );
    expect(changed.json()).toMatchObject({ status: 401, code: 'INVALID_TOKEN' });
    await tokens.revokeAllForUser(user.id);
    expect(row.passwordHash).toBe(resetHash);
    const login = (password: string) => post('login', { email: 'ada@example.com', password });
    expect((await login('the intruder keeps it')).statusCode).toBe(401);
    expect((await login('the owner resets')).statusCode).toBe(200);
  });

  it('answers a forgotten password before its task touches the store, even where background runs it at once', async () => {
    await register();
    // This app's background runs the task at once, as the blog's does.
    const answer = await app.fetch(
      new Request('http://localhost/api/auth/forgot-password', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'ada@example.com' }),
      }),
    );
    expect(answer.status).toBe(202);
    expect(resets.pruned).toBe(0);
    expect(resets.rows.size).toBe(0);
    await Promise.all(pending);
    expect(resets.pruned).toBe(1);
    expect(mailed).toHaveLength(1);
  });

  it('resets a password by a mailed single-use link, answering 202 whether or not the account exists', async () => {
    const session = await register();
    for (const email of ['nobody@example.com', 'ada@example.com']) {
      const answer = await post('forgot-password', { email });
      expect(answer.statusCode).toBe(202);
      expect(answer.json()).toEqual({ success: true });
    }
    await Promise.all(pending);
    expect(mailed).toHaveLength(1);
    const [message] = mailed;
    expect(message?.user).toEqual({ ...session.user, isActive: true });
    expect(message?.expiresAt.getTime()).toBeGreaterThan(Date.now() + 59 * 60_000);
    // Only the hash is stored: the link's token is nowhere in the store.
    expect([...resets.rows.keys()]).not.toContain(message?.token);

    const reset = await post('reset-password', { token: message?.token, password: 'battery staple' });
    expect(reset.statusCode).toBe(200);
    expect((await me(session.accessToken)).statusCode).toBe(401);
    const reused = await post('reset-password', { token: message?.token, password: 'another one' });
    expect(reused.statusCode).toBe(400);
    expect(reused.json().errors).toEqual([
      { path: 'token', message: 'The reset token is unknown, used or expired' },
    ]);
    expect((await post('login', { email: 'ada@example.com', password: 'battery staple' })).statusCode).toBe(
      200,
    );

    // A link sent before the account was deactivated sets no password.
    await post('forgot-password', { email: 'ada@example.com' });
    await Promise.all(pending);
    expect(mailed).toHaveLength(2);
    for (const row of members.rows.values()) row.isActive = false;
    const late = await post('reset-password', { token: mailed[1]?.token, password: 'yet another' });
    expect(late.statusCode).toBe(400);
    await post('forgot-password', { email: 'ada@example.com' });
    await Promise.all(pending);
    expect(mailed).toHaveLength(2);
  });

  it('types the password reset routes as maybe there when passwordReset may be undefined', () => {
    const mailer = process.env.NO_SUCH_MAILER;
    const maybe = accountProcedures({
      procedure: () => procedure<Ctx>(),
      users: (ctx) => ctx.members,
      tokens: (ctx) => ctx.tokens,
      view: Member,
      passwordReset:
        mailer === undefined
          ? undefined
          : { store: (ctx) => ctx.resets, send: async () => {}, background: (ctx, task) => ctx.later(task) },
    });
    expect(maybe.forgotPassword).toBeUndefined();
    expect(maybe.login).toBeDefined();
  });

  it('has no password reset routes without passwordReset', () => {
    const without = accountProcedures({
      procedure: () => procedure<Ctx>(),
      users: (ctx) => ctx.members,
      tokens: (ctx) => ctx.tokens,
      view: Member,
    });
    expect(Object.keys(without).sort()).toEqual([
      'changePassword',
      'login',
      'logout',
      'me',
      'refresh',
      'register',
    ]);
  });

  it('refuses options it does not know, and a password reset without a background runner', () => {
    const base = {
      procedure: () => procedure<Ctx>(),
      users: (ctx: Ctx) => ctx.members,
      tokens: (ctx: Ctx) => ctx.tokens,
      view: Member,
    };
    expect(() => accountProcedures({ ...base, logoutStatus: 204 } as never)).toThrow(/logoutStatus/);
    expect(() =>
      accountProcedures({
        ...base,
        passwordReset: { store: (ctx: Ctx) => ctx.resets, send: async () => {} },
      } as never),
    ).toThrow(/background/);
    expect(() => accountProcedures({ ...base, tokens: undefined } as never)).toThrow(/tokens/);
    expect(() => accountProcedures({ ...base, passwordCost: { N: 1000 } })).toThrow(
      /passwordCost: scrypt N must be a power of two/,
    );
  });

  it('hashes at the passwordCost it is given, and re-hashes only below it', async () => {
    const cheap = accountProcedures({ ...essentials, passwordCost: (ctx) => ctx.cheapPasswords ?? {} });
    const own = createApp<Ctx>({
      logger: false,
      context: () => ({
        tokens,
        members,
        resets,
        later: (task) => void pending.push(task()),
        cheapPasswords: { N: 1024, r: 8, p: 1 },
      }),
    });
    await own.register(authPlugin, { tokens, userLoader: (id) => members.findById(id) });
    own.mount([procedures('auth', cheap)]);
    await own.ready();
    try {
      const call = (url: string, payload: object) =>
        own.inject({ method: 'POST', url: `/api/auth/${url}`, payload });
      const created = await call('register', {
        email: 'ada@example.com',
        password: 'correct horse',
        name: 'Ada',
      });
      expect(created.statusCode).toBe(201);
      const row = members.rows.get(created.json().user.id);
      const stored = row?.passwordHash;
      expect(stored).toMatch(/^scrypt\$1024\$8\$1\$/);
      expect((await call('login', { email: 'ada@example.com', password: 'correct horse' })).statusCode).toBe(
        200,
      );
      expect(row?.passwordHash).toBe(stored);
    } finally {
      await own.close();
    }
  });
});
