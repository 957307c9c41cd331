/** /api/auth/* end to end (docs/blog.md, docs/auth.md), on PGlite and PostgreSQL. */
import { describe, expect, it, vi } from 'vitest';
import {
  type Blog,
  type BlogClient,
  claimsOf,
  engines,
  expectClientProblem,
  expectKeys,
  expectProblem,
  type Session,
  signJwt,
  type UserView,
  uniqueEmail,
  useBlog,
  views,
} from './harness.js';
import { blogRuntime } from './runtimes.js';

type Registration = Parameters<BlogClient['auth']['register']>[0];

const sessionKeys = ['accessToken', 'expiresIn', 'refreshToken', 'tokenType', 'user'];

function expectSession(session: Session, email: string): void {
  expectKeys(session, sessionKeys);
  expectKeys(session.user, views.userAuthenticated);
  expect(session.user.email).toBe(email.toLowerCase());
  expect(session.tokenType).toBe('Bearer');
  expect(session.expiresIn).toBe(15 * 60);
  const access = claimsOf(session.accessToken);
  const refresh = claimsOf(session.refreshToken);
  expect(access).toMatchObject({ sub: session.user.id, type: 'access' });
  expect(refresh).toMatchObject({ sub: session.user.id, type: 'refresh' });
  expect(Number(access.exp) - Number(access.iat)).toBe(15 * 60);
  expect(Number(refresh.exp) - Number(refresh.iat)).toBe(7 * 24 * 60 * 60);
  expect(typeof access.jti).toBe('string');
  expect(access.jti).not.toBe(refresh.jti);
}

async function deactivate(blog: Blog, userId: string): Promise<void> {
  const reply = await blog.put(`/api/users/${userId}`, { isActive: false }, await blog.adminToken());
  expect(reply.status, reply.text).toBe(200);
}

for (const engine of engines()) {
  describe.skipIf(engine.skip)(`auth on ${engine.name}`, () => {
    const blog = useBlog(engine);

    describe('POST /api/auth/register', () => {
      it('creates a user with role user and signs them in', async () => {
        const email = uniqueEmail('Mixed.Case');
        const reply = await blog.post<Session>('/api/auth/register', {
          email,
          password: 'correct horse',
          name: 'Ada',
        });
        expect(reply.status, reply.text).toBe(201);
        expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
        expectSession(reply.body, email);
        expect(reply.body.user).toMatchObject({ name: 'Ada', role: 'user' });

        const me = await blog.get<UserView>('/api/auth/me', reply.body.accessToken);
        expect(me.status).toBe(200);
        expect(me.body).toEqual(reply.body.user);
      });

      it('answers 409 CONFLICT for a taken email, whatever its case', async () => {
        const { email } = await blog.register();
        for (const again of [email, email.toUpperCase()]) {
          await expectClientProblem(
            blog.client().auth.register({ email: again, password: 'password1', name: 'B' }),
            409,
            'CONFLICT',
            'A user with this email already exists',
          );
        }
      });

      it.each<[string, Registration, string]>([
        ['a short password', { email: 'x@example.com', password: 'short', name: 'X' }, 'password'],
        ['a malformed email', { email: 'not-an-email', password: 'password1', name: 'X' }, 'email'],
        ['a blank name', { email: 'x@example.com', password: 'password1', name: '   ' }, 'name'],
      ])('answers 400 VALIDATION_FAILED for %s', async (_, body, path) => {
        const problem = await expectClientProblem(
          blog.client().auth.register(body),
          400,
          'VALIDATION_FAILED',
        );
        expect(problem.errors.map((error) => error.path)).toContain(path);
      });

      // Bodies the client's types refuse, so they are sent raw.
      it.each([
        ['no name', { email: 'x@example.com', password: 'password1' }, 'name'],
        ['no password', { email: 'x@example.com', name: 'X' }, 'password'],
      ])('answers 400 VALIDATION_FAILED for %s', async (_, body, path) => {
        const reply = await blog.post('/api/auth/register', body);
        const problem = expectProblem(reply, 400, 'VALIDATION_FAILED');
        expect(problem.errors?.map((error) => error.path)).toContain(path);
      });

      it('answers 400 for a body that is not an object', async () => {
        const reply = await blog.post('/api/auth/register', ['x@example.com', 'password1']);
        expectProblem(reply, 400, 'VALIDATION_FAILED');
      });
    });

    describe('POST /api/auth/login', () => {
      it('signs in with the email in any case', async () => {
        const { email, password, user } = await blog.register();
        const session = await blog.login(email.toUpperCase(), password);
        expectSession(session, email);
        expect(session.user).toEqual(user);
      });

      it('answers an unknown email and a wrong password with the same 401', async () => {
        const { email } = await blog.register();
        const unknown = await expectClientProblem(
          blog.login(uniqueEmail('nobody'), 'password1'),
          401,
          'UNAUTHENTICATED',
          'Invalid email or password',
        );
        const wrong = await expectClientProblem(
          blog.login(email, 'wrong password'),
          401,
          'UNAUTHENTICATED',
          'Invalid email or password',
        );
        expect(wrong.problem).toEqual(unknown.problem);
        expect(wrong.headers.get('www-authenticate')).toBe(unknown.headers.get('www-authenticate'));
      });

      it('refuses every login to an account after ten failed passwords, the right one too, and no other account', async () => {
        const { email, password } = await blog.register();
        const other = await blog.register();
        for (let attempt = 0; attempt < 10; attempt++)
          await expectClientProblem(blog.login(email, `guess ${attempt}`), 401, 'UNAUTHENTICATED');
        const refused = await expectClientProblem(blog.login(email, password), 429, 'RATE_LIMITED');
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(14 * 60);
        expectSession(await blog.login(other.email, other.password), other.email);
      });

      it('answers 403 FORBIDDEN for a deactivated user with the right password', async () => {
        const { email, password, user } = await blog.register();
        await deactivate(blog, user.id);
        await expectClientProblem(blog.login(email, password), 403, 'FORBIDDEN');
        // A wrong password still says nothing about the account.
        await expectClientProblem(blog.login(email, 'wrong password'), 401, 'UNAUTHENTICATED');
      });

      it('answers 400 for missing fields', async () => {
        // A missing password: the client's types refuse it.
        expectProblem(
          await blog.post('/api/auth/login', { email: 'a@example.com' }),
          400,
          'VALIDATION_FAILED',
        );
      });
    });

    describe('POST /api/auth/refresh', () => {
      it('rotates: a new pair that works, and the old refresh token is single use', async () => {
        const first = await blog.register();
        const rotated = await blog.post<Session>('/api/auth/refresh', { refreshToken: first.refreshToken });
        expect(rotated.status, rotated.text).toBe(200);
        expectSession(rotated.body, first.email);
        expect(rotated.body.accessToken).not.toBe(first.accessToken);
        expect(rotated.body.refreshToken).not.toBe(first.refreshToken);
        expect(claimsOf(rotated.body.refreshToken).fam).toBe(claimsOf(first.refreshToken).fam);
        expect((await blog.get('/api/auth/me', rotated.body.accessToken)).status).toBe(200);

        // Reuse of the used token: 401, and the whole family is revoked.
        const { auth } = blog.client();
        await expectClientProblem(
          auth.refresh({ refreshToken: first.refreshToken }),
          401,
          'INVALID_TOKEN',
          'refresh token already used',
        );
        await expectClientProblem(
          auth.refresh({ refreshToken: rotated.body.refreshToken }),
          401,
          'INVALID_TOKEN',
        );
        await expectClientProblem(blog.client(rotated.body.accessToken).auth.me(), 401, 'INVALID_TOKEN');
        await expectClientProblem(blog.client(first.accessToken).auth.me(), 401, 'INVALID_TOKEN');

        // Another login of the same user is another family: untouched.
        const other = await blog.login(first.email, first.password);
        expect((await blog.get('/api/auth/me', other.accessToken)).status).toBe(200);
      });

      it('never accepts a refresh token as an access token, nor the reverse', async () => {
        const session = await blog.register();
        const withRefresh = blog.client(session.refreshToken);
        await expectClientProblem(withRefresh.auth.me(), 401, 'INVALID_TOKEN', 'expected an access token');
        await expectClientProblem(withRefresh.posts.listPosts(), 401, 'INVALID_TOKEN');
        await expectClientProblem(
          blog.client().auth.refresh({ refreshToken: session.accessToken }),
          401,
          'INVALID_TOKEN',
        );
        // The failed attempts did not use the refresh token up.
        expect((await blog.post('/api/auth/refresh', { refreshToken: session.refreshToken })).status).toBe(
          200,
        );
      });

      it('refuses a malformed token and a deactivated user', async () => {
        const { auth } = blog.client();
        await expectClientProblem(
          auth.refresh({ refreshToken: 'nonsense' }),
          401,
          'INVALID_TOKEN',
          'jwt malformed',
        );
        // No refresh token at all: the client's types refuse it.
        expectProblem(await blog.post('/api/auth/refresh', {}), 400, 'VALIDATION_FAILED');
        const session = await blog.register();
        await deactivate(blog, session.user.id);
        await expectClientProblem(auth.refresh({ refreshToken: session.refreshToken }), 401, 'INVALID_TOKEN');
      });
    });

    describe('races', () => {
      it('of 5 parallel refreshes with one token, exactly one wins, and the reuse revokes the family', async () => {
        const session = await blog.register();
        const replies = await Promise.all(
          Array.from({ length: 5 }, () =>
            blog.post<Session>('/api/auth/refresh', { refreshToken: session.refreshToken }),
          ),
        );
        expect(replies.map((reply) => reply.status).sort()).toEqual([200, 401, 401, 401, 401]);
        const winner = replies.find((reply) => reply.status === 200)?.body;
        if (winner === undefined) throw new Error('No refresh won');
        await expectClientProblem(blog.client(winner.accessToken).auth.me(), 401, 'INVALID_TOKEN');
        await expectClientProblem(
          blog.client().auth.refresh({ refreshToken: winner.refreshToken }),
          401,
          'INVALID_TOKEN',
        );
      });

      it('of 5 parallel resets with one token, exactly one succeeds', async () => {
        const { email } = await blog.register();
        const before = blog.mail.length;
        await blog.client().auth.forgotPassword({ email });
        const { token } = await blog.mailAfter(before);
        const replies = await Promise.all(
          Array.from({ length: 5 }, (_, index) =>
            blog.post('/api/auth/reset-password', { token, password: `racing password ${index}` }),
          ),
        );
        expect(replies.map((reply) => reply.status).sort()).toEqual([200, 400, 400, 400, 400]);
        const index = replies.findIndex((reply) => reply.status === 200);
        await blog.login(email, `racing password ${index}`);
      });
    });

    describe('POST /api/auth/logout', () => {
      it('revokes that access token and its refresh family, not other sessions', async () => {
        const session = await blog.register();
        const other = await blog.login(session.email, session.password);
        const reply = await blog.post('/api/auth/logout', undefined, session.accessToken);
        expect(reply.status, reply.text).toBe(200);
        expect(reply.body).toEqual({ success: true });

        await blog.expectSignedOut(session);
        await expectClientProblem(blog.client(session.accessToken).auth.logout(), 401, 'INVALID_TOKEN');
        expect((await blog.get('/api/auth/me', other.accessToken)).status).toBe(200);
      });

      it('needs a token: 401 UNAUTHENTICATED with WWW-Authenticate: Bearer', async () => {
        const problem = await expectClientProblem(blog.client().auth.logout(), 401, 'UNAUTHENTICATED');
        expect(problem.headers.get('www-authenticate')).toBe('Bearer');
      });
    });

    describe('GET /api/auth/me', () => {
      it('returns the caller in the authenticated view, exactly', async () => {
        const session = await blog.register({ name: 'Grace' });
        const reply = await blog.get<UserView>('/api/auth/me', session.accessToken);
        expect(reply.status).toBe(200);
        expectKeys(reply.body, views.userAuthenticated);
        expect(reply.body).toEqual({
          id: session.user.id,
          name: 'Grace',
          email: session.email,
          role: 'user',
        });
      });

      it('answers 401 UNAUTHENTICATED without a token', async () => {
        const problem = await expectClientProblem(blog.client().auth.me(), 401, 'UNAUTHENTICATED');
        expect(problem.headers.get('www-authenticate')).toBe('Bearer');
      });
    });

    describe('password reset', () => {
      it('answers 202 whether or not the email exists; only a real account gets mail', async () => {
        const { email, user } = await blog.register({ name: 'Mailed' });
        const before = blog.mail.length;
        const known = await blog.post('/api/auth/forgot-password', { email: email.toUpperCase() });
        const unknown = await blog.post('/api/auth/forgot-password', { email: uniqueEmail('ghost') });
        expect(known.status).toBe(202);
        expect(unknown.status).toBe(202);
        expect(known.body).toEqual({ success: true });
        expect(unknown.text).toBe(known.text);
        await blog.mailAfter(before);
        const sent = blog.mail.slice(before);
        expect(sent).toHaveLength(1);
        expect(sent[0]).toMatchObject({ to: email, name: 'Mailed' });
        expect(sent[0]?.token.length).toBeGreaterThanOrEqual(32);
        const lifetime = (sent[0]?.expiresAt.getTime() ?? 0) - Date.now();
        expect(lifetime).toBeGreaterThan(59 * 60 * 1000);
        expect(lifetime).toBeLessThanOrEqual(60 * 60 * 1000);

        await deactivate(blog, user.id);
        expect((await blog.post('/api/auth/forgot-password', { email })).status).toBe(202);
        expect(blog.mail.length).toBe(before + 1);
      });

      it('answers 400 for a malformed email', async () => {
        const problem = await expectClientProblem(
          blog.client().auth.forgotPassword({ email: 'nope' }),
          400,
          'VALIDATION_FAILED',
        );
        expect(problem.errors[0]?.path).toBe('email');
      });

      it('resets once, signs every session out, and swaps the passwords', async () => {
        const session = await blog.register();
        const second = await blog.login(session.email, session.password);
        const before = blog.mail.length;
        expect((await blog.post('/api/auth/forgot-password', { email: session.email })).status).toBe(202);
        const { token } = await blog.mailAfter(before);

        // A failed validation does not use the token up.
        const { auth } = blog.client();
        await expectClientProblem(auth.resetPassword({ token, password: 'short' }), 400, 'VALIDATION_FAILED');
        const reset = await blog.post('/api/auth/reset-password', {
          token,
          password: 'a brand new password',
        });
        expect(reset.status, reset.text).toBe(200);
        expect(reset.body).toEqual({ success: true });

        const used = await expectClientProblem(
          auth.resetPassword({ token, password: 'another password' }),
          400,
          'VALIDATION_FAILED',
        );
        expect(used.problem.errors).toEqual([
          { path: 'token', message: 'The reset token is unknown, used or expired' },
        ]);

        for (const old of [session, second]) {
          await blog.expectSignedOut(old);
        }
        await expectClientProblem(blog.login(session.email, session.password), 401, 'UNAUTHENTICATED');
        const fresh = await blog.login(session.email, 'a brand new password');
        expect((await blog.get('/api/auth/me', fresh.accessToken)).status).toBe(200);
      });

      it('uses up every other pending reset link of the user once one is used', async () => {
        const session = await blog.register();
        const { auth } = blog.client();
        const before = blog.mail.length;
        await auth.forgotPassword({ email: session.email });
        const first = await blog.mailAfter(before);
        await auth.forgotPassword({ email: session.email });
        const second = await blog.mailAfter(before + 1);
        const reset = await blog.post('/api/auth/reset-password', {
          token: second.token,
          password: 'the new password',
        });
        expect(reset.status).toBe(200);
        await expectClientProblem(
          auth.resetPassword({ token: first.token, password: 'an attacker password' }),
          400,
          'VALIDATION_FAILED',
        );
        await blog.login(session.email, 'the new password');
      });

      it('ends pending reset links with a deactivation: reactivated, the account takes none of them', async () => {
        const session = await blog.register();
        const before = blog.mail.length;
        await blog.client().auth.forgotPassword({ email: session.email });
        const { token } = await blog.mailAfter(before);
        await deactivate(blog, session.user.id);
        const reactivated = await blog.put(
          `/api/users/${session.user.id}`,
          { isActive: true },
          await blog.adminToken(),
        );
        expect(reactivated.status, reactivated.text).toBe(200);
        await expectClientProblem(
          blog.client().auth.resetPassword({ token, password: 'a leaked link wins' }),
          400,
          'VALIDATION_FAILED',
        );
        await blog.login(session.email, session.password);
      });

      it('sends token answers with Cache-Control: no-store', async () => {
        const email = uniqueEmail('nostore');
        const registered = await blog.post<Session>('/api/auth/register', {
          email,
          password: 'password123',
          name: 'N',
        });
        const login = await blog.post<Session>('/api/auth/login', { email, password: 'password123' });
        const refreshed = await blog.post('/api/auth/refresh', { refreshToken: login.body.refreshToken });
        for (const reply of [registered, login, refreshed])
          expect(reply.headers.get('cache-control')).toBe('no-store');
        expect((await blog.get('/api/posts')).headers.get('cache-control')).toBeNull();
      });

      // The app's clock is moved in this process: not for a blog on another runtime.
      it.skipIf(blogRuntime() !== undefined)('answers 400 for a reset token over an hour old', async () => {
        const { email } = await blog.register();
        const { auth } = blog.client();
        const before = blog.mail.length;
        await auth.forgotPassword({ email });
        const { token } = await blog.mailAfter(before);
        // The app runs in this process: moving its clock (Date only) ages the token.
        vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 61 * 60 * 1000 });
        try {
          await expectClientProblem(
            auth.resetPassword({ token, password: 'too late now' }),
            400,
            'VALIDATION_FAILED',
            'token: The reset token is unknown, used or expired',
          );
        } finally {
          vi.useRealTimers();
        }
      });

      it('answers 400 for an unknown token', async () => {
        await expectClientProblem(
          blog.client().auth.resetPassword({ token: 'x'.repeat(43), password: 'password1' }),
          400,
          'VALIDATION_FAILED',
          'token: The reset token is unknown, used or expired',
        );
      });
    });

    describe('bad tokens on a public route (GET /api/posts)', () => {
      const now = () => Math.floor(Date.now() / 1000);
      const claims = (sub: string) => ({
        sub,
        jti: crypto.randomUUID(),
        fam: crypto.randomUUID(),
        type: 'access',
        iat: now(),
        exp: now() + 600,
      });

      it('works without a token', async () => {
        expect((await blog.get('/api/posts')).status).toBe(200);
      });

      it.each([
        ['garbage', () => 'abc', 'jwt malformed'],
        ['two segments', () => 'a.b', 'jwt malformed'],
      ])('answers 401 INVALID_TOKEN for %s', async (_, token, detail) => {
        await expectClientProblem(blog.client(token()).posts.listPosts(), 401, 'INVALID_TOKEN', detail);
      });

      it('answers invalid signature for a tampered token and one signed with another secret', async () => {
        const { accessToken, user } = await blog.register();
        const [header, , signature] = accessToken.split('.');
        const forgedPayload = Buffer.from(
          JSON.stringify({ ...claimsOf(accessToken), sub: crypto.randomUUID() }),
        ).toString('base64url');
        for (const token of [
          `${header}.${forgedPayload}.${signature}`,
          `${accessToken.slice(0, -4)}${accessToken.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`,
          signJwt({ alg: 'HS256', typ: 'JWT' }, claims(user.id), 'another secret that is long enough!!'),
        ]) {
          const problem = await expectClientProblem(
            blog.client(token).posts.listPosts(),
            401,
            'INVALID_TOKEN',
            'invalid signature',
          );
          expect(problem.headers.get('www-authenticate')).toBe('Bearer');
        }
      });

      it('refuses alg none and any algorithm but HS256, even with the right secret', async () => {
        const { user } = await blog.register();
        const secret = blog.instance.secret;
        for (const header of [
          { alg: 'none', typ: 'JWT' },
          { alg: 'HS512', typ: 'JWT' },
        ]) {
          const token = signJwt(header, claims(user.id), secret);
          await expectClientProblem(blog.client(token).posts.listPosts(), 401, 'INVALID_TOKEN');
        }
        // The same claims with HS256 and the right secret pass: the refusals were about the algorithm.
        expect(
          (await blog.get('/api/posts', signJwt({ alg: 'HS256', typ: 'JWT' }, claims(user.id), secret)))
            .status,
        ).toBe(200);
      });

      it.each<[string, Record<string, unknown>]>([
        ['a sub that is not a uuid', { sub: 'not-a-uuid' }],
        ['a numeric sub', { sub: 42 }],
        ['a 10 KB sub', { sub: 'a'.repeat(10 * 1024) }],
        ['a NUL in the sub', { sub: 'a\u0000b' }],
        ['a NUL in the jti', { jti: 'a\u0000b' }],
        ['a family of 300 characters', { fam: 'f'.repeat(300) }],
        ['an exp no date can hold', { exp: 1e300 }],
      ])('answers 401 INVALID_TOKEN, not 500, for a correctly signed token with %s', async (_, odd) => {
        const secret = blog.instance.secret;
        const access = signJwt(
          { alg: 'HS256', typ: 'JWT' },
          { ...claims(crypto.randomUUID()), ...odd },
          secret,
        );
        const refresh = signJwt(
          { alg: 'HS256', typ: 'JWT' },
          { ...claims(crypto.randomUUID()), type: 'refresh', ...odd },
          secret,
        );
        expectProblem(await blog.get('/api/auth/me', access), 401, 'INVALID_TOKEN');
        expectProblem(await blog.get('/api/posts', access), 401, 'INVALID_TOKEN');
        expectProblem(
          await blog.post('/api/posts', { title: 'T', content: 'C' }, access),
          401,
          'INVALID_TOKEN',
        );
        // The refresh route's input allows tokens of up to 4096 characters; a longer one is a 400.
        const [status, code] = refresh.length > 4096 ? [400, 'VALIDATION_FAILED'] : [401, 'INVALID_TOKEN'];
        expectProblem(await blog.post('/api/auth/refresh', { refreshToken: refresh }), status, code);
      });

      it('answers jwt expired for an expired token', async () => {
        const { user } = await blog.register();
        const token = signJwt(
          { alg: 'HS256', typ: 'JWT' },
          { ...claims(user.id), iat: now() - 3600, exp: now() - 1800 },
          blog.instance.secret,
        );
        await expectClientProblem(blog.client(token).posts.listPosts(), 401, 'INVALID_TOKEN', 'jwt expired');
      });

      it.skipIf(blogRuntime() !== undefined)(
        'expires the app’s own access tokens after 15 minutes',
        async () => {
          const { accessToken } = await blog.register();
          vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 14 * 60 * 1000 });
          try {
            expect((await blog.get('/api/auth/me', accessToken)).status).toBe(200);
            vi.setSystemTime(Date.now() + 2 * 60 * 1000);
            await expectClientProblem(
              blog.client(accessToken).auth.me(),
              401,
              'INVALID_TOKEN',
              'jwt expired',
            );
          } finally {
            vi.useRealTimers();
          }
        },
      );

      it('refuses another scheme than Bearer', async () => {
        const reply = await blog.request('GET', '/api/posts', {
          headers: { authorization: 'Basic dXNlcjpwYXNz' },
        });
        expectProblem(reply, 401, 'INVALID_TOKEN');
      });
    });

    describe('admin seeding (options.admin)', () => {
      it('signs the configured admin in with role admin', async () => {
        const { email, password } = blog.instance.admin;
        const session = await blog.login(email, password);
        expect(session.user).toMatchObject({ email, role: 'admin', name: 'Admin' });
        expect((await blog.get('/api/users', session.accessToken)).status).toBe(200);
      });
    });
  });

  describe.skipIf(engine.skip)(`auth rate limit on ${engine.name}`, () => {
    const blog = useBlog(engine, { authRateLimit: 3 });

    it('answers the 4th login in a minute with 429 RATE_LIMITED and Retry-After', async () => {
      const email = uniqueEmail();
      for (let attempt = 1; attempt <= 3; attempt++) {
        const refused = await expectClientProblem(blog.login(email, 'password1'), 401, 'UNAUTHENTICATED');
        expect(refused.headers.get('x-ratelimit-limit')).toBe('3');
      }
      const limited = await expectClientProblem(blog.login(email, 'password1'), 429, 'RATE_LIMITED');
      const retryAfter = Number(limited.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);

      // Other routes have their own counters; routes without a limit have none.
      expect(
        (await blog.post('/api/auth/register', { email: uniqueEmail(), password: 'password1', name: 'R' }))
          .status,
      ).toBe(201);
      for (let attempt = 0; attempt < 5; attempt++) expect((await blog.get('/api/posts')).status).toBe(200);
    });
  });
}
