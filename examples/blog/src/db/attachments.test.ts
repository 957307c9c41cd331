import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
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
    let authorId: string;
    let posts: ReturnType<typeof postsRepository>;

    beforeAll(async () => {
      opened = await engine.open();
      directory = mkdtempSync(join(tmpdir(), 'attachments-'));
      store = fileAttachments(opened.database.db, directory);
      const author = await usersRepository(opened.database.db).create({
        email: `${randomUUID()}@example.com`,
        name: 'Author',
        passwordHash: 'x',
      });
      authorId = author.id;
      posts = postsRepository(opened.database);
      postId = (await posts.create({ authorId, title: 'T', content: 'C' })).id;
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
      // The post deleted while the file is written: its row, then its folder (the deletion's
      // background step), which another upload to it makes again at once.
      const doomed = (await posts.create({ authorId, title: 'Doomed', content: 'C' })).id;
      class Vanishing extends File {
        override stream() {
          const stream = super.stream();
          return stream.pipeThrough(
            new TransformStream({
              async transform(chunk, controller) {
                await posts.delete(doomed);
                rmSync(join(directory, doomed), { recursive: true, force: true });
                mkdirSync(join(directory, doomed));
                controller.enqueue(chunk);
              },
            }),
          );
        }
      }
      await expect(
        store.save({
          postId: doomed,
          name: 'b.txt',
          mediaType: 'text/plain',
          file: new Vanishing(['b'], 'b.txt'),
        }),
      ).rejects.toThrow(NotFoundError);
      // With its folder and row in place, the same upload is stored.
      const saved = await store.save({ postId, name: 'c.txt', mediaType: 'text/plain', file: file('c') });
      expect(saved).toMatchObject({ postId, name: 'c.txt', size: 1 });
    });
  });
}
