import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotFoundError } from 'proceedjs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type TestDatabase, testEngines } from '../../test/databases.js';
import { type AttachmentStore, fileAttachments } from './attachments.js';
import { postsRepository } from './posts.js';
import { usersRepository } from './users.js';

for (const engine of testEngines(inject('postgresUrl'))) {
  describe.skipIf(engine.skip)(`file attachments on ${engine.name}`, () => {
    let opened: TestDatabase;
    let store: AttachmentStore;
    let directory: string;
    let postId: string;

    beforeAll(async () => {
      opened = await engine.open();
      directory = mkdtempSync(join(tmpdir(), 'attachments-'));
      store = fileAttachments(opened.database.db, directory);
      const author = await usersRepository(opened.database.db).create({
        email: `${randomUUID()}@example.com`,
        name: 'Author',
        passwordHash: 'x',
      });
      postId = (
        await postsRepository(opened.database).create({ authorId: author.id, title: 'T', content: 'C' })
      ).id;
    });
    afterAll(async () => {
      rmSync(directory, { recursive: true, force: true });
      await opened?.dispose();
    });

    const file = (text: string) => new File([text], 'notes.txt', { type: 'text/plain' });

    it('answers an upload to a post deleted meanwhile with 404 and leaves no folder behind', async () => {
      // The row gone before the insert (its foreign key): the folder the upload made goes too.
      const gone = randomUUID();
      await expect(
        store.save({ postId: gone, name: 'a.txt', mediaType: 'text/plain', file: file('a') }),
      ).rejects.toThrow(NotFoundError);
      expect(existsSync(join(directory, gone))).toBe(false);
      // The folder removed with the post while the file is written (the deletion's own step).
      class Vanishing extends File {
        override stream() {
          rmSync(join(directory, postId), { recursive: true, force: true });
          return super.stream();
        }
      }
      await expect(
        store.save({ postId, name: 'b.txt', mediaType: 'text/plain', file: new Vanishing(['b'], 'b.txt') }),
      ).rejects.toThrow(NotFoundError);
      expect(readdirSync(directory)).toEqual([]);
      // With its folder and row in place, the same upload is stored.
      const saved = await store.save({ postId, name: 'c.txt', mediaType: 'text/plain', file: file('c') });
      expect(saved).toMatchObject({ postId, name: 'c.txt', size: 1 });
    });
  });
}
