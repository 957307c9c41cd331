/** /api/users end to end (docs/blog.md), on PGlite and PostgreSQL. */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type Blog,
  type BlogClient,
  engines,
  expectClientProblem,
  expectKeys,
  expectProblem,
  type OffsetPage,
  type UserView,
  uniqueEmail,
  useBlog,
  views,
} from './harness.js';

type AdminUser = Required<UserView>;
type UserQuery = NonNullable<Parameters<BlogClient['users']['listUsers']>[0]>;
type UserChanges = Parameters<BlogClient['users']['updateUser']>[0]['data'];

async function createUser(
  blog: Blog,
  fields: { name: string; email?: string; role?: 'admin' | 'user' | 'guest' },
): Promise<AdminUser & { password: string }> {
  const password = `pw-${randomBytes(6).toString('hex')}`;
  const reply = await blog.post<AdminUser>(
    '/api/users',
    { email: fields.email ?? uniqueEmail(), password, ...fields },
    await blog.adminToken(),
  );
  expect(reply.status, reply.text).toBe(201);
  return { ...reply.body, password };
}

for (const engine of engines()) {
  describe.skipIf(engine.skip)(`users on ${engine.name}`, () => {
    const blog = useBlog(engine);

    describe('GET /api/users (admin)', () => {
      // A tag in every name scopes each query to the users made here, whatever else the suite adds.
      const tag = `zq${randomBytes(3).toString('hex')}`;
      let made: AdminUser[] = [];
      const list = async (query: string) => {
        const reply = await blog.get<OffsetPage<AdminUser>>(`/api/users?${query}`, await blog.adminToken());
        expect(reply.status, reply.text).toBe(200);
        return reply.body;
      };
      const scoped = (query = '') => list(`search=${tag}${query === '' ? '' : `&${query}`}`);

      beforeAll(async () => {
        // Created one by one: creation order is the default order.
        const specs = [
          { name: `${tag} Carol`, role: 'user' },
          { name: `${tag} Alice`, role: 'guest' },
          { name: `${tag} Bob 100%_sure`, role: 'user' },
          { name: `${tag} Dave 100xxsure`, role: 'admin' },
          { name: `${tag} Erin`, role: 'user' },
        ] as const;
        made = [];
        for (const spec of specs) made.push(await createUser(blog, spec));
        const deactivated = await blog.put(
          `/api/users/${made[4]?.id}`,
          { isActive: false },
          await blog.adminToken(),
        );
        expect(deactivated.status).toBe(200);
        made[4] = { ...(made[4] as AdminUser), isActive: false };
      });

      it('answers 401 to anonymous callers and 403 to users', async () => {
        const anonymous = await expectClientProblem(blog.client().users.listUsers(), 401, 'UNAUTHENTICATED');
        expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
        const { accessToken } = await blog.register();
        await expectClientProblem(
          blog.client(accessToken).users.listUsers(),
          403,
          'FORBIDDEN',
          'Guard "admin" denied access',
        );
      });

      it('pages in creation order with exact meta, in the admin view', async () => {
        const first = await scoped('limit=2');
        expectKeys(first, ['data', 'meta']);
        expect(first.meta).toEqual({ page: 1, limit: 2, total: 5, totalPages: 3 });
        for (const user of first.data) expectKeys(user, views.userAdmin);
        const pages = [first, await scoped('limit=2&page=2'), await scoped('limit=2&page=3')];
        expect(pages.map((page) => page.data.length)).toEqual([2, 2, 1]);
        expect(pages.flatMap((page) => page.data.map((user) => user.id))).toEqual(
          made.map((user) => user.id),
        );
        expect(pages[0]?.data[0]).toEqual({
          ...made[0],
          password: undefined,
          updatedAt: pages[0]?.data[0]?.updatedAt,
        });
        expect(new Date(pages[0]?.data[0]?.createdAt ?? '').toISOString()).toBe(pages[0]?.data[0]?.createdAt);

        const past = await scoped('limit=2&page=4');
        expect(past).toEqual({ data: [], meta: { page: 4, limit: 2, total: 5, totalPages: 3 } });
      });

      it('defaults to page 1, limit 20, and counts totalPages 0 for no match', async () => {
        const all = await scoped();
        expect(all.meta).toEqual({ page: 1, limit: 20, total: 5, totalPages: 1 });
        const none = await list(`search=nothing-${tag}`);
        expect(none).toEqual({ data: [], meta: { page: 1, limit: 20, total: 0, totalPages: 0 } });
      });

      it('sorts by name, email, createdAt and updatedAt, both ways', async () => {
        const names = (page: OffsetPage<AdminUser>) => page.data.map((user) => user.name);
        // Every name starts with the tag and a distinct capital; mixed case is covered in db/users.test.ts.
        const byName = made.map((user) => user.name).sort();
        expect(names(await scoped('sortBy=name'))).toEqual(byName);
        expect(names(await scoped('sortBy=name&sortOrder=asc'))).toEqual(byName);
        expect(names(await scoped('sortBy=name&sortOrder=desc'))).toEqual([...byName].reverse());

        const emails = (await scoped('sortBy=email')).data.map((user) => user.email);
        expect(emails).toEqual([...emails].sort());
        expect((await scoped('sortBy=email&sortOrder=desc')).data.map((user) => user.email)).toEqual(
          [...emails].reverse(),
        );

        const ids = made.map((user) => user.id);
        expect((await scoped('sortBy=createdAt')).data.map((user) => user.id)).toEqual(ids);
        expect((await scoped('sortBy=createdAt&sortOrder=desc')).data.map((user) => user.id)).toEqual(
          [...ids].reverse(),
        );
        expect((await scoped('sortOrder=desc')).data.map((user) => user.id)).toEqual([...ids].reverse());
        // Erin was updated last (deactivated).
        expect((await scoped('sortBy=updatedAt&sortOrder=desc')).data[0]?.id).toBe(made[4]?.id);
      });

      it('searches name and email case-insensitively, with % and _ taken literally', async () => {
        expect((await list(`search=${tag.toUpperCase()}%20ALICE`)).data.map((user) => user.id)).toEqual([
          made[1]?.id,
        ]);
        const literal = await list(`search=${encodeURIComponent(`${tag} Bob 100%_`)}`);
        expect(literal.data.map((user) => user.id)).toEqual([made[2]?.id]);
        // Were % and _ wildcards, "100%_sure" would also match "100xxsure".
        expect((await list(`search=${encodeURIComponent('100%_sure')}`)).data.map((user) => user.id)).toEqual(
          [made[2]?.id],
        );
        expect((await list(`search=${encodeURIComponent('0%_s')}`)).data.map((user) => user.id)).toEqual([
          made[2]?.id,
        ]);
        expect(
          (await list(`search=${encodeURIComponent('_')}&limit=100`)).data.map((user) => user.name),
        ).toEqual([`${tag} Bob 100%_sure`]);

        const email = made[3]?.email ?? '';
        expect((await list(`search=${encodeURIComponent(email.slice(0, 12).toUpperCase())}`)).data).toEqual(
          [made[3]].map((user) => ({ ...user, password: undefined, updatedAt: expect.any(String) })),
        );
      });

      it('filters by role, isActive and createdAfter', async () => {
        const ids = (page: OffsetPage<AdminUser>) => page.data.map((user) => user.id);
        expect(ids(await scoped('role=guest'))).toEqual([made[1]?.id]);
        expect(ids(await scoped('role=admin'))).toEqual([made[3]?.id]);
        expect(ids(await scoped('role=user'))).toEqual([made[0]?.id, made[2]?.id, made[4]?.id]);
        expect(ids(await scoped('isActive=false'))).toEqual([made[4]?.id]);
        expect((await scoped('isActive=true')).meta.total).toBe(4);
        expect((await scoped('isActive=0')).meta.total).toBe(1);
        const third = made[2]?.createdAt ?? '';
        expect(ids(await scoped(`createdAfter=${encodeURIComponent(third)}`))).toEqual(
          made.slice(2).map((user) => user.id),
        );
        expect(ids(await scoped('role=user&isActive=true&sortOrder=desc'))).toEqual([
          made[2]?.id,
          made[0]?.id,
        ]);
      });

      it.each<[string, UserQuery, string]>([
        ['limit=101', { limit: 101 }, 'limit'],
        ['limit=0', { limit: 0 }, 'limit'],
        ['page=0', { page: 0 }, 'page'],
      ])('answers 400 VALIDATION_FAILED for %s', async (_, query, path) => {
        const problem = await expectClientProblem(
          blog.client(await blog.adminToken()).users.listUsers(query),
          400,
          'VALIDATION_FAILED',
        );
        expect(problem.errors.map((error) => error.path)).toContain(path);
      });

      // Values the client's types refuse, so the query strings are sent raw.
      it.each([
        ['page=abc', 'page'],
        ['sortBy=password', 'sortBy'],
        ['sortBy=passwordHash', 'sortBy'],
        ['sortOrder=up', 'sortOrder'],
        ['role=superuser', 'role'],
        ['isActive=maybe', 'isActive'],
        ['createdAfter=yesterday', 'createdAfter'],
      ])('answers 400 VALIDATION_FAILED for %s', async (query, path) => {
        const reply = await blog.get(`/api/users?${query}`, await blog.adminToken());
        const problem = expectProblem(reply, 400, 'VALIDATION_FAILED');
        expect(problem.errors?.map((error) => error.path)).toContain(path);
      });
    });

    describe('GET /api/users/:id (anyone)', () => {
      it('returns exactly the public view, to every caller', async () => {
        const session = await blog.register({ name: 'Public Person' });
        for (const token of [undefined, session.accessToken, await blog.adminToken()]) {
          const reply = await blog.get<UserView>(`/api/users/${session.user.id}`, token);
          expect(reply.status).toBe(200);
          expect(reply.body).toEqual({ id: session.user.id, name: 'Public Person' });
          expect(reply.text).not.toContain(session.email);
        }
      });

      it('answers 404 NOT_FOUND for an unknown id, 400 for a malformed one', async () => {
        const users = blog.client().users;
        await expectClientProblem(
          users.getUser({ id: crypto.randomUUID() }),
          404,
          'NOT_FOUND',
          'No user with this id',
        );
        await expectClientProblem(
          users.getUser({ id: 'not-a-uuid' }),
          400,
          'VALIDATION_FAILED',
          'id: Invalid UUID',
        );
      });
    });

    describe('POST /api/users (admin)', () => {
      it('creates a user: 201, Location, the admin view; the user can sign in', async () => {
        const email = uniqueEmail('Created');
        const reply = await blog.post<AdminUser>(
          '/api/users',
          { email, name: 'Made by admin', password: 'password123', role: 'guest' },
          await blog.adminToken(),
        );
        expect(reply.status, reply.text).toBe(201);
        expectKeys(reply.body, views.userAdmin);
        expect(reply.body).toMatchObject({
          email: email.toLowerCase(),
          name: 'Made by admin',
          role: 'guest',
          isActive: true,
        });
        expect(reply.headers.get('location')).toBe(`/api/users/${reply.body.id}`);
        const session = await blog.login(email, 'password123');
        expect(session.user.role).toBe('guest');
      });

      it('defaults the role to user', async () => {
        const user = await createUser(blog, { name: 'Default role' });
        expect(user.role).toBe('user');
      });

      it('answers 409 for a taken email and 400 for bad input', async () => {
        const admin = await blog.adminToken();
        const users = blog.client(admin).users;
        const { email } = await blog.register();
        await expectClientProblem(
          users.createUser({ email: email.toUpperCase(), name: 'X', password: 'password1' }),
          409,
          'CONFLICT',
        );
        await expectClientProblem(
          users.createUser({ email: uniqueEmail(), name: 'X', password: 'short' }),
          400,
          'VALIDATION_FAILED',
        );
        // A role outside the enum: the client's types refuse it.
        expectProblem(
          await blog.post(
            '/api/users',
            { email: uniqueEmail(), name: 'X', password: 'password1', role: 'root' },
            admin,
          ),
          400,
          'VALIDATION_FAILED',
        );
      });

      it('answers 401 to anonymous callers and 403 to users', async () => {
        const body = { email: uniqueEmail(), name: 'X', password: 'password1' };
        await expectClientProblem(blog.client().users.createUser(body), 401, 'UNAUTHENTICATED');
        const { accessToken } = await blog.register();
        await expectClientProblem(
          blog.client(accessToken).users.createUser(body),
          403,
          'FORBIDDEN',
          'Guard "admin" denied access',
        );
      });
    });

    describe('PUT /api/users/:id', () => {
      it('lets a user rename themselves, answering the authenticated view', async () => {
        const session = await blog.register({ name: 'Old Name' });
        const reply = await blog.put<UserView>(
          `/api/users/${session.user.id}`,
          { name: 'New Name' },
          session.accessToken,
        );
        expect(reply.status, reply.text).toBe(200);
        expectKeys(reply.body, views.userAuthenticated);
        expect(reply.body).toEqual({ ...session.user, name: 'New Name' });
        expect((await blog.client().users.getUser({ id: session.user.id })).name).toBe('New Name');
      });

      it('addresses the user of the path, whatever id the body holds', async () => {
        const session = await blog.register({ name: 'Path' });
        const other = await blog.register({ name: 'Body' });
        const reply = await blog.put<UserView>(
          `/api/users/${session.user.id}`,
          { id: other.user.id, name: 'Renamed' },
          await blog.adminToken(),
        );
        expect(reply.status, reply.text).toBe(200);
        expect(reply.body).toMatchObject({ id: session.user.id, name: 'Renamed' });
        expect((await blog.client().users.getUser({ id: other.user.id })).name).toBe('Body');
      });

      it('forbids a user to send role or isActive, or to edit someone else', async () => {
        const session = await blog.register();
        const other = await blog.register();
        const client = blog.client(session.accessToken);
        const forbidden: UserChanges[] = [
          { role: 'admin' },
          { isActive: false },
          { name: 'Me', role: 'user' },
        ];
        for (const data of forbidden) {
          await expectClientProblem(
            client.users.updateUser({ id: session.user.id, data }),
            403,
            'FORBIDDEN',
            'Only an admin may change role or isActive',
          );
        }
        await expectClientProblem(
          client.users.updateUser({ id: other.user.id, data: { name: 'Hacked' } }),
          403,
          'FORBIDDEN',
          'Guard "self or admin" denied access',
        );
        expect((await client.auth.me()).role).toBe('user');
        expect((await blog.client().users.getUser({ id: other.user.id })).name).toBe('Test User');
      });

      it('answers 400 for an empty body or an unknown field, 401 without a token', async () => {
        const session = await blog.register();
        const { id } = session.user;
        const users = blog.client(session.accessToken).users;
        await expectClientProblem(
          users.updateUser({ id, data: {} }),
          400,
          'VALIDATION_FAILED',
          'data: Send at least one field',
        );
        // An unknown field: the client's types refuse it.
        expectProblem(
          await blog.put(`/api/users/${id}`, { email: 'new@example.com' }, session.accessToken),
          400,
          'VALIDATION_FAILED',
        );
        await expectClientProblem(users.updateUser({ id, data: { name: '' } }), 400, 'VALIDATION_FAILED');
        await expectClientProblem(
          blog.client().users.updateUser({ id, data: { name: 'X' } }),
          401,
          'UNAUTHENTICATED',
        );
      });

      it('lets an admin change name, role and isActive; 404 for an unknown user', async () => {
        const session = await blog.register();
        const admin = await blog.adminToken();
        const reply = await blog.put<UserView>(
          `/api/users/${session.user.id}`,
          { name: 'Renamed', role: 'guest' },
          admin,
        );
        expect(reply.status, reply.text).toBe(200);
        expectKeys(reply.body, views.userAuthenticated);
        expect(reply.body).toMatchObject({ name: 'Renamed', role: 'guest' });
        await expectClientProblem(
          blog.client(admin).users.updateUser({ id: crypto.randomUUID(), data: { name: 'Nobody' } }),
          404,
          'NOT_FOUND',
        );
      });

      it('applies a role change to the user’s existing token at once', async () => {
        const session = await blog.register();
        const { id } = session.user;
        const client = blog.client(session.accessToken);
        const admin = blog.client(await blog.adminToken());
        await expectClientProblem(client.users.listUsers(), 403, 'FORBIDDEN');
        await admin.users.updateUser({ id, data: { role: 'admin' } });
        expect((await blog.get('/api/users', session.accessToken)).status).toBe(200);
        expect((await client.auth.me()).role).toBe('admin');
        await admin.users.updateUser({ id, data: { role: 'user' } });
        await expectClientProblem(client.users.listUsers(), 403, 'FORBIDDEN');
      });

      it('stops a deactivated user’s token at once', async () => {
        const session = await blog.register();
        expect((await blog.get('/api/auth/me', session.accessToken)).status).toBe(200);
        const reply = await blog.put(
          `/api/users/${session.user.id}`,
          { isActive: false },
          await blog.adminToken(),
        );
        expect(reply.status).toBe(200);
        const client = blog.client(session.accessToken);
        await expectClientProblem(client.auth.me(), 401, 'INVALID_TOKEN', 'jwt revoked');
        await expectClientProblem(client.posts.listPosts(), 401, 'INVALID_TOKEN');
        // Deactivation revokes: reactivated, the account needs a new login; old tokens stay dead.
        await blog
          .client(await blog.adminToken())
          .users.updateUser({ id: session.user.id, data: { isActive: true } });
        await expectClientProblem(client.auth.me(), 401, 'INVALID_TOKEN', 'jwt revoked');
        await expectClientProblem(
          blog.client().auth.refresh({ refreshToken: session.refreshToken }),
          401,
          'INVALID_TOKEN',
        );
        const again = await blog.login(session.email, session.password);
        expect((await blog.get('/api/auth/me', again.accessToken)).status).toBe(200);
      });
    });

    describe('DELETE /api/users/:id (admin)', () => {
      it('deletes the user and their posts; their token stops working', async () => {
        const session = await blog.register();
        const admin = await blog.adminToken();
        const published = await blog.createPost(session.accessToken, { status: 'published' });
        const draft = await blog.createPost(session.accessToken);
        const reply = await blog.delete(`/api/users/${session.user.id}`, admin);
        expect(reply.status, reply.text).toBe(200);
        expect(reply.body).toEqual({ success: true });

        const asAdmin = blog.client(admin);
        for (const post of [published, draft]) {
          await expectClientProblem(asAdmin.posts.getPost({ id: post.id }), 404, 'NOT_FOUND');
        }
        expect((await asAdmin.posts.listPosts({ authorId: session.user.id })).data).toEqual([]);
        await blog.expectSignedOut(session);
        await expectClientProblem(blog.login(session.email, session.password), 401, 'UNAUTHENTICATED');
        await expectClientProblem(blog.client().users.getUser({ id: session.user.id }), 404, 'NOT_FOUND');
        await expectClientProblem(asAdmin.users.deleteUser({ id: session.user.id }), 404, 'NOT_FOUND');
      });

      it('answers 401 to anonymous callers and 403 to users, deleting nothing', async () => {
        const victim = await blog.register();
        const { id } = victim.user;
        await expectClientProblem(blog.client().users.deleteUser({ id }), 401, 'UNAUTHENTICATED');
        await expectClientProblem(
          blog.client(victim.accessToken).users.deleteUser({ id }),
          403,
          'FORBIDDEN',
          'Guard "admin" denied access',
        );
        expect((await blog.get(`/api/users/${id}`)).status).toBe(200);
      });
    });
  });
}
