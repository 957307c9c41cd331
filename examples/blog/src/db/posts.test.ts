import { NotFoundError } from 'proceedjs';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { type TestDatabase, testEngines, truncateAll } from '../../test/databases.js';
import type { Database } from './connect.js';
import {
  type CreatedPost,
  canTransition,
  deriveExcerpt,
  type Post,
  type PostsRepository,
  postsRepository,
  postTransitions,
  type Visibility,
} from './posts.js';
import { type PostStatus, postStatuses } from './schema.js';
import { type User, usersRepository } from './users.js';

describe('deriveExcerpt', () => {
  it('keeps short content whole, whitespace collapsed', () => {
    expect(deriveExcerpt('  Hello,\n\n  world.  ')).toBe('Hello, world.');
  });

  it('cuts long content at a word boundary with an ellipsis, within the limit', () => {
    const content = `${'word '.repeat(60)}end`;
    const excerpt = deriveExcerpt(content);
    expect(excerpt.endsWith('word…')).toBe(true);
    expect(Array.from(excerpt).length).toBeLessThanOrEqual(160);
    expect(Array.from(excerpt).length).toBeGreaterThan(150);
  });

  it('drops trailing punctuation before the ellipsis and cuts a single huge word hard', () => {
    expect(deriveExcerpt('aaaa, bbbb, cccc', 12)).toBe('aaaa, bbbb…');
    expect(deriveExcerpt('x'.repeat(500), 10)).toBe(`${'x'.repeat(9)}…`);
  });

  it('never splits a character made of two UTF-16 units', () => {
    const excerpt = deriveExcerpt('😀'.repeat(200), 10);
    expect(excerpt).toBe(`${'😀'.repeat(9)}…`);
  });
});

describe('postTransitions', () => {
  it('allows exactly the moves docs/blog.md lists', () => {
    const allowed = postStatuses.flatMap((from) =>
      postStatuses.filter((to) => canTransition(from, to)).map((to) => `${from}→${to}`),
    );
    expect(allowed).toEqual([
      'draft→published',
      'draft→archived',
      'published→draft',
      'published→archived',
      'archived→draft',
    ]);
    expect(postTransitions.archived).toEqual(['draft']);
  });
});

const anonymous: Visibility = { kind: 'anonymous' };
const admin: Visibility = { kind: 'admin' };
const missing = '01900000-0000-7000-8000-000000000000';

for (const engine of testEngines(inject('postgresUrl'))) {
  describe.skipIf(engine.skip)(`posts repository on ${engine.name}`, () => {
    let opened: TestDatabase;
    let database: Database;
    let posts: PostsRepository;
    let alice: User;
    let bob: User;

    beforeAll(async () => {
      opened = await engine.open();
      database = opened.database;
      posts = postsRepository(database);
    });
    afterAll(async () => {
      await opened?.dispose();
    });
    beforeEach(async () => {
      await truncateAll(database);
      const users = usersRepository(database.db);
      alice = await users.create({ email: 'alice@example.com', name: 'Alice', passwordHash: 'x' });
      bob = await users.create({ email: 'bob@example.com', name: 'Bob', passwordHash: 'x' });
    });

    const write = (
      author: User,
      title: string,
      status: 'draft' | 'published' = 'published',
      content = `About ${title}`,
    ) => posts.create({ authorId: author.id, title, content, status });
    const titles = (page: { data: Pick<Post, 'title'>[] }) => page.data.map((post) => post.title);

    describe('create', () => {
      it('makes a draft with a derived excerpt unless told otherwise', async () => {
        const post = await posts.create({ authorId: alice.id, title: 'Hi', content: 'Hello   there' });
        const created = {
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          authorId: alice.id,
          title: 'Hi',
          content: 'Hello   there',
          excerpt: 'Hello there',
          status: 'draft',
          version: 1,
        };
        // What the create answers with: no timestamps, which are stored all the same.
        expect(post).toEqual(created);
        expect(await posts.findById(post.id)).toEqual({
          ...created,
          createdAt: expect.any(Date),
          updatedAt: expect.any(Date),
        });
        const given = await posts.create({
          authorId: alice.id,
          title: 'T',
          content: 'C',
          excerpt: 'Mine',
          status: 'published',
        });
        expect(given).toMatchObject({ excerpt: 'Mine', status: 'published' });
      });

      it('refuses an author that does not exist', async () => {
        await expect(posts.create({ authorId: missing, title: 't', content: 'c' })).rejects.toBeInstanceOf(
          NotFoundError,
        );
      });

      it('gives later posts greater ids (creation order)', async () => {
        const created = [];
        for (let index = 0; index < 30; index++) created.push((await write(alice, `p${index}`)).id);
        expect([...created].sort()).toEqual(created);
      });
    });

    describe('visibility', () => {
      let aliceDraft: CreatedPost;
      let alicePublished: CreatedPost;
      let bobDraft: CreatedPost;
      let archived: CreatedPost;
      beforeEach(async () => {
        alicePublished = await write(alice, 'alice published');
        aliceDraft = await write(alice, 'alice draft', 'draft');
        bobDraft = await write(bob, 'bob draft', 'draft');
        archived = await write(bob, 'bob archived');
        await posts.setStatus(archived.id, 'archived');
        await write(bob, 'bob published');
      });
      const list = (visibility: Visibility, extra: { authorId?: string; status?: PostStatus } = {}) =>
        posts.listCursor({ limit: 20, direction: 'forward', ...extra }, visibility);

      it('shows anonymous callers published posts only', async () => {
        expect(titles(await list(anonymous))).toEqual(['bob published', 'alice published']);
        expect(await posts.findById(aliceDraft.id, anonymous)).toBeUndefined();
        expect(await posts.findById(alicePublished.id, anonymous)).toMatchObject({
          title: 'alice published',
        });
        expect(await posts.findShownById(aliceDraft.id, anonymous)).toBeUndefined();
        expect(await posts.findShownById(alicePublished.id, anonymous)).toEqual({
          id: alicePublished.id,
          title: 'alice published',
          excerpt: alicePublished.excerpt,
          version: 1,
        });
      });

      it('shows a user published posts and their own in any status', async () => {
        const asAlice: Visibility = { kind: 'owner', userId: alice.id };
        expect(titles(await list(asAlice))).toEqual(['bob published', 'alice draft', 'alice published']);
        expect(await posts.findById(aliceDraft.id, asAlice)).toBeDefined();
        expect(await posts.findById(bobDraft.id, asAlice)).toBeUndefined();
        expect(await posts.findById(archived.id, asAlice)).toBeUndefined();
        expect(await posts.findShownById(aliceDraft.id, asAlice)).toMatchObject({ title: 'alice draft' });
        expect(await posts.findShownById(bobDraft.id, asAlice)).toBeUndefined();
        expect(titles(await list({ kind: 'owner', userId: bob.id }, { status: 'archived' }))).toEqual([
          'bob archived',
        ]);
      });

      it('shows an admin everything, and filters by author and status within what is visible', async () => {
        expect(titles(await list(admin))).toHaveLength(5);
        expect(titles(await list(admin, { authorId: bob.id }))).toEqual([
          'bob published',
          'bob archived',
          'bob draft',
        ]);
        expect(titles(await list(admin, { status: 'draft' }))).toEqual(['bob draft', 'alice draft']);
        expect(titles(await list(anonymous, { status: 'draft' }))).toEqual([]);
        expect(titles(await list(anonymous, { authorId: alice.id }))).toEqual(['alice published']);
      });
    });

    describe('listCursor', () => {
      it('walks forward and back over the feed with the pagination rules', async () => {
        for (let index = 1; index <= 7; index++)
          await write(alice, `p${index}`, index % 2 === 0 ? 'draft' : 'published');
        const first = await posts.listCursor({ limit: 2, direction: 'forward' }, anonymous);
        expect(titles(first)).toEqual(['p7', 'p5']);
        const second = await posts.listCursor(
          {
            limit: 2,
            direction: 'forward',
            cursor: first.nextCursor as string,
          },
          anonymous,
        );
        expect(titles(second)).toEqual(['p3', 'p1']);
        expect(second.nextCursor).toBeNull();
        const back = await posts.listCursor(
          {
            limit: 2,
            direction: 'backward',
            cursor: second.prevCursor as string,
          },
          anonymous,
        );
        expect(back).toEqual(first);
      });

      it('keeps a deleted cursor working', async () => {
        const made = [];
        for (let index = 1; index <= 5; index++) made.push(await write(alice, `p${index}`));
        const cursor = made[2]?.id as string;
        await posts.delete(cursor);
        const page = await posts.listCursor(
          {
            limit: 10,
            direction: 'forward',
            cursor,
          },
          anonymous,
        );
        expect(titles(page)).toEqual(['p2', 'p1']);
      });
    });

    describe('update', () => {
      it('changes the given fields and re-derives a derived excerpt when the content changes', async () => {
        const post = await write(alice, 'Old', 'draft', 'old words');
        const stored = await posts.findById(post.id);
        const updated = await posts.update(post.id, { title: 'New', content: 'brand new words' });
        expect(updated).toMatchObject({
          title: 'New',
          content: 'brand new words',
          excerpt: 'brand new words',
          status: 'draft',
        });
        expect(updated?.updatedAt.getTime()).toBeGreaterThanOrEqual(stored?.updatedAt.getTime() ?? Infinity);
      });

      it('keeps an excerpt the author wrote when the content changes', async () => {
        const post = await posts.create({
          authorId: alice.id,
          title: 't',
          content: 'old',
          excerpt: 'Handwritten',
        });
        expect(await posts.update(post.id, { content: 'new' })).toMatchObject({ excerpt: 'Handwritten' });
        expect(await posts.update(post.id, { excerpt: 'Other' })).toMatchObject({
          excerpt: 'Other',
          content: 'new',
        });
      });

      it('checks a status change against the transitions, and lets the same status through', async () => {
        const post = await write(alice, 't', 'published');
        expect(await posts.update(post.id, { status: 'published', title: 'same status' })).toMatchObject({
          title: 'same status',
        });
        expect(await posts.update(post.id, { status: 'archived' })).toMatchObject({ status: 'archived' });
        const refused = posts.update(post.id, { status: 'published', title: 'not applied' });
        await expect(refused).rejects.toMatchObject({
          code: 'INVALID_TRANSITION',
          status: 409,
          message: 'An archived post cannot become published',
        });
        expect(await posts.findById(post.id)).toMatchObject({ title: 'same status', status: 'archived' });
      });

      it('answers undefined for a missing id', async () => {
        expect(await posts.update(missing, { title: 'x' })).toBeUndefined();
      });

      it('given the post as read, writes in one statement; when that read is stale, decides again', async () => {
        const post = await write(alice, 'Old', 'draft', 'old words');
        expect(await posts.update(post.id, { title: 'One statement' }, post)).toMatchObject({
          title: 'One statement',
          excerpt: 'old words',
        });
        // Someone archives the post after our read: the stale read must not let archived → published.
        await posts.setStatus(post.id, 'archived');
        await expect(posts.update(post.id, { status: 'published' }, post)).rejects.toMatchObject({
          code: 'INVALID_TRANSITION',
          message: 'An archived post cannot become published',
        });
        // Someone writes an excerpt by hand after our read: new content must not replace it.
        await database.query('UPDATE posts SET excerpt = $1, version = version + 1 WHERE id = $2', [
          'Handwritten',
          post.id,
        ]);
        expect(await posts.update(post.id, { content: 'new words' }, post)).toMatchObject({
          content: 'new words',
          excerpt: 'Handwritten',
        });
        await posts.delete(post.id);
        expect(await posts.update(post.id, { title: 'gone' }, post)).toBeUndefined();
      });

      it('adds one to the version on every change; told to fail, refuses a stale read with 412', async () => {
        const post = await write(alice, 'Old', 'draft');
        expect(post.version).toBe(1);
        const first = await posts.update(post.id, { title: 'First' }, post, 'fail');
        expect(first).toMatchObject({ title: 'First', version: 2 });
        await expect(posts.update(post.id, { title: 'Lost' }, post, 'fail')).rejects.toMatchObject({
          code: 'PRECONDITION_FAILED',
          status: 412,
        });
        expect(await posts.findById(post.id)).toMatchObject({ title: 'First', version: 2 });
        expect(await posts.setStatus(post.id, 'published')).toMatchObject({ version: 3 });
        await posts.delete(post.id);
        expect(await posts.update(post.id, { title: 'gone' }, post, 'fail')).toBeUndefined();
      });

      it('lets exactly one of two writers that read the same version through', async () => {
        const post = await write(alice, 'Old', 'draft');
        const results = await Promise.allSettled([
          posts.update(post.id, { title: 'A' }, post, 'fail'),
          posts.update(post.id, { title: 'B' }, post, 'fail'),
        ]);
        expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
        expect(await posts.findById(post.id)).toMatchObject({ version: 2 });
      });
    });

    describe('setStatus', () => {
      const cases = postStatuses.flatMap((from) => postStatuses.map((to) => [from, to] as const));
      it.each(cases)('%s → %s follows the transition table', async (from, to) => {
        const post = await write(alice, 't', 'draft');
        if (from !== 'draft')
          await database.query('UPDATE posts SET status = $1 WHERE id = $2', [from, post.id]);
        if (canTransition(from, to)) {
          expect(await posts.setStatus(post.id, to)).toMatchObject({ id: post.id, status: to });
        } else {
          await expect(posts.setStatus(post.id, to)).rejects.toMatchObject({
            code: 'INVALID_TRANSITION',
            status: 409,
          });
          expect(await posts.findById(post.id)).toMatchObject({ status: from });
        }
      });

      it('lets only one of two simultaneous publications through', async () => {
        const post = await write(alice, 't', 'draft');
        const results = await Promise.allSettled([
          posts.setStatus(post.id, 'published'),
          posts.setStatus(post.id, 'published'),
        ]);
        expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
      });

      it('answers undefined for a missing post', async () => {
        expect(await posts.setStatus(missing, 'published')).toBeUndefined();
        expect(await posts.setStatus(missing, 'published', 1)).toBeUndefined();
      });

      it('moves only the version it is given; another one is 412 and stays', async () => {
        const post = await write(alice, 't', 'draft');
        await expect(posts.setStatus(post.id, 'published', 7)).rejects.toMatchObject({
          code: 'PRECONDITION_FAILED',
        });
        expect(await posts.findById(post.id)).toMatchObject({ status: 'draft', version: 1 });
        expect(await posts.setStatus(post.id, 'published', 1)).toMatchObject({ version: 2 });
      });
    });

    it('deletes a post once', async () => {
      const post = await write(alice, 't');
      expect(await posts.delete(post.id)).toBe(true);
      expect(await posts.delete(post.id)).toBe(false);
      expect(await posts.findById(post.id)).toBeUndefined();
    });

    it('deletes only the version it is given; another one is 412 and stays', async () => {
      const post = await write(alice, 't');
      await expect(posts.delete(post.id, 2)).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
      expect(await posts.findById(post.id)).toBeDefined();
      expect(await posts.delete(post.id, 1)).toBe(true);
      expect(await posts.delete(post.id, 1)).toBe(false);
    });
  });
}
