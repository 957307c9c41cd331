import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type TestDatabase, testEngines } from '../../test/databases.js';
import { type PasswordResetsRepository, passwordResetsRepository } from './password-resets.js';
import { type User, usersRepository } from './users.js';

for (const engine of testEngines(inject('postgresUrl'))) {
  describe.skipIf(engine.skip)(`password resets on ${engine.name}`, () => {
    let opened: TestDatabase;
    let resets: PasswordResetsRepository;
    let user: User;
    const inAnHour = () => new Date(Date.now() + 3_600_000);

    beforeAll(async () => {
      opened = await engine.open();
      resets = passwordResetsRepository(opened.database.db);
      user = await usersRepository(opened.database.db).create({
        email: 'r@example.com',
        name: 'R',
        passwordHash: 'x',
      });
    });
    afterAll(async () => {
      await opened?.dispose();
    });

    it('consumes a token once', async () => {
      await resets.create({ tokenHash: 'once', userId: user.id, expiresAt: inAnHour() });
      expect(await resets.consume('once')).toBe(user.id);
      expect(await resets.consume('once')).toBeUndefined();
      expect(await resets.consume('unknown')).toBeUndefined();
    });

    it('lets one of two simultaneous uses of a token through', async () => {
      await resets.create({ tokenHash: 'race', userId: user.id, expiresAt: inAnHour() });
      const results = await Promise.all([resets.consume('race'), resets.consume('race')]);
      expect(results.filter((result) => result === user.id)).toHaveLength(1);
    });

    it('uses up every pending token of one user, and only theirs', async () => {
      const other = await usersRepository(opened.database.db).create({
        email: 'other@example.com',
        name: 'O',
        passwordHash: 'x',
      });
      await resets.create({ tokenHash: 'first', userId: user.id, expiresAt: inAnHour() });
      await resets.create({ tokenHash: 'second', userId: user.id, expiresAt: inAnHour() });
      await resets.create({ tokenHash: 'theirs', userId: other.id, expiresAt: inAnHour() });
      await resets.invalidateForUser(user.id);
      expect(await resets.consume('first')).toBeUndefined();
      expect(await resets.consume('second')).toBeUndefined();
      expect(await resets.consume('theirs')).toBe(other.id);
    });

    it("ends a user's other links with the one used: two used at the same moment, one goes through", async () => {
      await resets.create({ tokenHash: 'link-a', userId: user.id, expiresAt: inAnHour() });
      await resets.create({ tokenHash: 'link-b', userId: user.id, expiresAt: inAnHour() });
      const results = await Promise.all([resets.consume('link-a'), resets.consume('link-b')]);
      expect(results.filter((result) => result === user.id)).toHaveLength(1);
      await resets.create({ tokenHash: 'link-c', userId: user.id, expiresAt: inAnHour() });
      await resets.create({ tokenHash: 'link-d', userId: user.id, expiresAt: inAnHour() });
      expect(await resets.consume('link-c')).toBe(user.id);
      expect(await resets.consume('link-d')).toBeUndefined();
    });

    it('refuses an expired token and prunes used and expired ones', async () => {
      await resets.create({ tokenHash: 'old', userId: user.id, expiresAt: new Date(Date.now() - 1000) });
      await resets.create({ tokenHash: 'fresh', userId: user.id, expiresAt: inAnHour() });
      expect(await resets.consume('old')).toBeUndefined();
      expect(await resets.prune()).toBe(10);
      expect(await resets.consume('fresh')).toBe(user.id);
    });
  });
}
