import { ConflictError } from 'proceedjs';
import { PostgresRevocationStore, TokenService } from 'proceedjs/auth';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { type TestDatabase, testEngines, truncateAll } from '../../test/databases.js';
import type { Database } from './connect.js';
import { posts } from './schema.js';
import {
  containsPattern,
  type SignedInUser,
  signedInUserSql,
  type User,
  type UsersRepository,
  usersRepository,
} from './users.js';

const uuidV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('containsPattern', () => {
  it('escapes the LIKE wildcards and the escape character', () => {
    expect(containsPattern('50%_off\\')).toBe('%50\\%\\_off\\\\%');
  });
});

for (const engine of testEngines(inject('postgresUrl'))) {
  describe.skipIf(engine.skip)(`users repository on ${engine.name}`, () => {
    let opened: TestDatabase;
    let database: Database;
    let users: UsersRepository;

    beforeAll(async () => {
      opened = await engine.open();
      database = opened.database;
      users = usersRepository(database.db);
    });
    afterAll(async () => {
      await opened?.dispose();
    });
    beforeEach(async () => {
      await truncateAll(database);
    });

    const make = (
      name: string,
      email = `${name}@example.com`,
      extra: Partial<Parameters<UsersRepository['create']>[0]> = {},
    ) => users.create({ name, email, passwordHash: `hash-of-${name}`, ...extra });

    describe('create', () => {
      it('stores a lowercased email, a UUIDv7 id and the defaults, and returns no hash', async () => {
        const user = await make('Ada', '  Ada@Example.COM ');
        expect(user).toEqual({
          id: expect.stringMatching(uuidV7),
          email: 'ada@example.com',
          name: 'Ada',
          role: 'user',
          isActive: true,
          createdAt: expect.any(Date),
          updatedAt: expect.any(Date),
          version: 1,
        });
        expect(user).not.toHaveProperty('passwordHash');
      });

      it('refuses a taken email in any case with a ConflictError', async () => {
        await make('Ada', 'ada@example.com');
        const failure = await make('Other', 'ADA@example.com').catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(ConflictError);
        expect(failure).toMatchObject({
          code: 'CONFLICT',
          status: 409,
          message: 'A user with this email already exists',
        });
      });

      it('lets exactly one of 20 simultaneous sign-ups with one email succeed', async () => {
        const attempts = await Promise.allSettled(
          Array.from({ length: 20 }, (_, index) => make(`racer${index}`, 'race@example.com')),
        );
        const succeeded = attempts.filter((attempt) => attempt.status === 'fulfilled');
        const failed = attempts.filter((attempt) => attempt.status === 'rejected');
        expect(succeeded).toHaveLength(1);
        expect(failed).toHaveLength(19);
        for (const failure of failed)
          expect((failure as PromiseRejectedResult).reason).toBeInstanceOf(ConflictError);
        expect((await users.list({ page: 1, limit: 100, sortOrder: 'asc' })).total).toBe(1);
      });
    });

    describe('find', () => {
      it('finds by id without the hash, and by email in any case with it', async () => {
        const ada = await make('Ada');
        expect(await users.findById(ada.id)).toEqual(ada);
        expect(await users.findByEmail('ADA@example.com')).toEqual({ ...ada, passwordHash: 'hash-of-Ada' });
      });

      it('reads the signed-in user in the token check’s statement as findById does', async () => {
        const ada = await make('Ada');
        const store = new PostgresRevocationStore(database);
        const tokens = new TokenService({ secret: 'x'.repeat(64), store });
        const claims = await tokens.verifyAccess((await tokens.issuePair(ada.id)).accessToken);
        const load = store.userLoader<SignedInUser>(signedInUserSql);
        const { createdAt: _created, updatedAt: _updated, ...found } = (await users.findById(ada.id)) as User;
        expect(await load(ada.id, claims)).toEqual(found);
      });

      it('answers undefined for unknown ids and emails', async () => {
        expect(await users.findById('01900000-0000-7000-8000-000000000000')).toBeUndefined();
        expect(await users.findByEmail('nobody@example.com')).toBeUndefined();
      });
    });

    describe('list', () => {
      let created: User[];
      beforeEach(async () => {
        created = [];
        const people: [string, string, Partial<Parameters<UsersRepository['create']>[0]>][] = [
          ['carol', 'carol@example.com', {}],
          ['alice', 'alice@example.com', { role: 'admin' }],
          ['bob', 'bob_smith@example.com', { isActive: false }],
          ['alice', 'alice2@example.com', { role: 'guest' }],
          ['dave 100%', 'dave@example.com', {}],
          ['erin', 'erin@sample.org', {}],
        ];
        for (const [name, email, extra] of people) created.push(await make(name, email, extra));
      });
      const list = (params: Partial<Parameters<UsersRepository['list']>[0]> = {}) =>
        users.list({ page: 1, limit: 20, sortOrder: 'asc', ...params });
      const names = (result: { items: User[] }) => result.items.map((user) => user.email);

      it('lists in creation order by default, reversed with sortOrder desc', async () => {
        const all = await list();
        expect(all.items).toEqual(created);
        expect(all.total).toBe(6);
        expect((await list({ sortOrder: 'desc' })).items).toEqual([...created].reverse());
      });

      it('sorts by a column with the id as the final tie-breaker, in both orders', async () => {
        const byName = await list({ sortBy: 'name' });
        expect(names(byName)).toEqual([
          'alice@example.com',
          'alice2@example.com',
          'bob_smith@example.com',
          'carol@example.com',
          'dave@example.com',
          'erin@sample.org',
        ]);
        expect(names(await list({ sortBy: 'name', sortOrder: 'desc' }))).toEqual(
          [...names(byName)].reverse(),
        );
        expect(names(await list({ sortBy: 'email', limit: 2 }))).toEqual([
          'alice2@example.com',
          'alice@example.com',
        ]);
      });

      it('sorts names case-insensitively and the same way on every server', async () => {
        await truncateAll(database);
        for (const name of ['bob', 'Zoe', 'alice', 'Bob', 'Émile', 'Alice']) {
          await make(
            name,
            `${name
              .normalize('NFD')
              .replace(/[^a-z]/gi, '')
              .toLowerCase()}${Math.random()}@x.org`,
          );
        }
        const order = (await list({ sortBy: 'name' })).items.map((user) => user.name);
        expect(order).toEqual(['Alice', 'alice', 'Bob', 'bob', 'Zoe', 'Émile']);
      });

      it('pages without overlap and counts every match', async () => {
        const first = await list({ sortBy: 'name', limit: 4 });
        const second = await list({ sortBy: 'name', limit: 4, page: 2 });
        expect(first.total).toBe(6);
        expect(second.items).toHaveLength(2);
        expect(new Set([...names(first), ...names(second)]).size).toBe(6);
        expect(await list({ page: 3, limit: 4 })).toEqual({ items: [], total: 6 });
      });

      it('searches name or email, case-insensitively', async () => {
        expect(names(await list({ search: 'ALICE' }))).toEqual(['alice@example.com', 'alice2@example.com']);
        expect(names(await list({ search: 'Sample' }))).toEqual(['erin@sample.org']);
        expect((await list({ search: 'example' })).total).toBe(5);
      });

      it('matches % and _ literally', async () => {
        expect(names(await list({ search: '100%' }))).toEqual(['dave@example.com']);
        expect(names(await list({ search: '%' }))).toEqual(['dave@example.com']);
        expect(names(await list({ search: 'b_s' }))).toEqual(['bob_smith@example.com']);
        expect(await list({ search: 'c_rol' })).toEqual({ items: [], total: 0 });
      });

      it('filters by role, isActive and createdAfter (inclusive), counting only matches', async () => {
        expect(names(await list({ role: 'admin' }))).toEqual(['alice@example.com']);
        expect(await list({ isActive: false })).toMatchObject({ total: 1, items: [{ name: 'bob' }] });
        expect((await list({ isActive: true, limit: 1 })).total).toBe(5);
        const day = (n: number) => new Date(Date.UTC(2024, 0, n));
        for (const [index, user] of created.entries()) {
          await database.query('UPDATE users SET created_at = $1 WHERE id = $2', [day(index + 1), user.id]);
        }
        expect(names(await list({ createdAfter: day(5) }))).toEqual(['dave@example.com', 'erin@sample.org']);
        expect((await list({ createdAfter: day(5), role: 'user', search: 'erin' })).total).toBe(1);
        expect(await list({ createdAfter: day(30) })).toEqual({ items: [], total: 0 });
      });
    });

    describe('update', () => {
      it('changes the given fields, the update time and the version only', async () => {
        const ada = await make('Ada');
        await new Promise((resolve) => setTimeout(resolve, 5));
        const updated = await users.update(ada.id, { name: 'Ada L.', role: 'guest', isActive: false });
        expect(updated).toEqual({
          ...ada,
          name: 'Ada L.',
          role: 'guest',
          isActive: false,
          updatedAt: expect.any(Date),
          version: 2,
        });
        expect(updated?.updatedAt.getTime()).toBeGreaterThan(ada.updatedAt.getTime());
        expect(await users.findByEmail(ada.email)).toMatchObject({ passwordHash: 'hash-of-Ada' });
      });

      it('changes only the version it is given, and deletes only that version; another is 412', async () => {
        const ada = await make('Ada');
        await expect(users.update(ada.id, { name: 'Lost' }, 5)).rejects.toMatchObject({
          code: 'PRECONDITION_FAILED',
        });
        expect(await users.findById(ada.id)).toMatchObject({ name: 'Ada', version: 1 });
        expect(await users.update(ada.id, { name: 'Ada L.' }, 1)).toMatchObject({ version: 2 });
        await expect(users.delete(ada.id, 1)).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
        expect(await users.delete(ada.id, 2)).toBe(true);
        expect(await users.update(ada.id, { name: 'Gone' }, 2)).toBeUndefined();
        expect(await users.delete(ada.id, 2)).toBe(false);
      });

      it('answers undefined for an unknown user and a conflict for a taken email', async () => {
        const ada = await make('Ada');
        await make('Bob');
        expect(await users.update('01900000-0000-7000-8000-000000000000', { name: 'x' })).toBeUndefined();
        await expect(users.update(ada.id, { email: 'BOB@example.com' })).rejects.toBeInstanceOf(
          ConflictError,
        );
      });
    });

    it('sets a password hash', async () => {
      const ada = await make('Ada');
      expect(await users.setPassword(ada.id, 'new-hash')).toBe(true);
      expect(await users.findByEmail('ada@example.com')).toMatchObject({ passwordHash: 'new-hash' });
      expect(await users.setPassword('01900000-0000-7000-8000-000000000000', 'x')).toBe(false);
    });

    it('replaces a password hash only while it is the one the login checked', async () => {
      const ada = await make('Ada');
      const before = await users.findByEmail('ada@example.com');
      if (before === undefined) throw new Error('no Ada');
      expect(await users.replacePasswordHash(ada.id, 'not-the-hash', 'rehashed')).toBe(false);
      expect(await users.findByEmail('ada@example.com')).toMatchObject({ passwordHash: before.passwordHash });
      expect(await users.replacePasswordHash(ada.id, before.passwordHash, 'rehashed')).toBe(true);
      expect(await users.findByEmail('ada@example.com')).toMatchObject({
        passwordHash: 'rehashed',
        version: before.version,
      });
    });

    it('deletes a user with their posts', async () => {
      const ada = await make('Ada');
      await database.db.insert(posts).values({
        id: '01900000-0000-7000-8000-000000000001',
        authorId: ada.id,
        title: 't',
        content: 'c',
        excerpt: 'c',
      });
      expect(await users.delete(ada.id)).toBe(true);
      expect(await users.delete(ada.id)).toBe(false);
      expect((await database.query('SELECT count(*)::int AS n FROM posts')).rows).toEqual([{ n: 0 }]);
    });

    it('ensures an admin: creates it, then promotes, reactivates and re-keys the same account', async () => {
      const first = await users.ensureAdmin({ email: 'Root@Example.com', name: 'Root', passwordHash: 'h1' });
      expect(first).toMatchObject({ email: 'root@example.com', role: 'admin', isActive: true });
      await users.update(first.id, { role: 'user', isActive: false });
      const again = await users.ensureAdmin({
        email: 'root@example.com',
        name: 'Ignored',
        passwordHash: 'h2',
      });
      expect(again).toMatchObject({ id: first.id, name: 'Root', role: 'admin', isActive: true });
      expect(await users.findByEmail('root@example.com')).toMatchObject({ passwordHash: 'h2' });
    });
  });
}
