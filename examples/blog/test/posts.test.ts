/** /api/posts end to end (docs/blog.md), on PGlite and PostgreSQL. */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type Blog,
  type BlogClient,
  type CursorPage,
  engines,
  expectClientProblem,
  expectKeys,
  expectProblem,
  type PostView,
  type Session,
  uniqueEmail,
  useBlog,
  views,
} from './harness.js';

type FullPost = Required<PostView>;
type NewPost = Parameters<BlogClient['posts']['createPost']>[0];
type ListQuery = NonNullable<Parameters<BlogClient['posts']['listPosts']>[0]>;

const newestFirst = (ids: string[]) => [...ids].sort().reverse();

/** Checks the cursor rules of one page (docs/pagination.md) and that items are exactly the public view. */
function expectPageRules(page: CursorPage<PostView>, limit: number): void {
  expectKeys(page, ['data', 'nextCursor', 'prevCursor']);
  expect(page.data.length).toBeLessThanOrEqual(limit);
  for (const item of page.data) expectKeys(item, views.postPublic);
  const ids = page.data.map((item) => item.id);
  expect(ids).toEqual(newestFirst(ids));
  expect(page.prevCursor).toBe(page.data[0]?.id ?? null);
  if (page.nextCursor !== null) expect(page.nextCursor).toBe(page.data.at(-1)?.id);
}

async function listPage(blog: Blog, query: string, token?: string): Promise<CursorPage<PostView>> {
  const reply = await blog.get<CursorPage<PostView>>(`/api/posts?${query}`, token);
  expect(reply.status, reply.text).toBe(200);
  const limit = Number(new URLSearchParams(query).get('limit') ?? 20);
  expectPageRules(reply.body, limit);
  return reply.body;
}

/** Follows `nextCursor` from the start; `between` runs after each page (to write during a walk). */
async function walkForward(
  blog: Blog,
  query: string,
  limit: number,
  token?: string,
  between?: (pageNumber: number) => Promise<void>,
): Promise<{ ids: string[]; pages: CursorPage<PostView>[] }> {
  const pages: CursorPage<PostView>[] = [];
  let cursor: string | null = null;
  do {
    const page = await listPage(
      blog,
      `${query}&limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`,
      token,
    );
    pages.push(page);
    cursor = page.nextCursor;
    await between?.(pages.length);
    if (pages.length > 500) throw new Error('The walk does not end');
  } while (cursor !== null);
  return { ids: pages.flatMap((page) => page.data.map((item) => item.id)), pages };
}

/** Creates posts one after another: ids grow with each, so creation order is id order. */
async function createMany(
  blog: Blog,
  token: string,
  count: number,
  status: 'draft' | 'published' = 'published',
) {
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    ids.push((await blog.createPost(token, { title: `Post ${index}`, status })).id);
  }
  return ids;
}

for (const engine of engines()) {
  describe.skipIf(engine.skip)(`posts on ${engine.name}`, () => {
    const blog = useBlog(engine);
    let author: Session;
    let other: Session;
    let admin: string;

    beforeAll(async () => {
      [author, other] = await Promise.all([
        blog.register({ name: 'Author' }),
        blog.register({ name: 'Other' }),
      ]);
      admin = await blog.adminToken();
    });

    describe('POST /api/posts', () => {
      it('creates a draft by the caller: 201, Location, the authenticated view', async () => {
        const reply = await blog.post<FullPost>(
          '/api/posts',
          { title: '  Hello  ', content: 'First post.' },
          author.accessToken,
        );
        expect(reply.status, reply.text).toBe(201);
        expectKeys(reply.body, views.postAuthenticated);
        expect(reply.body).toMatchObject({
          title: 'Hello',
          content: 'First post.',
          excerpt: 'First post.',
          status: 'draft',
          authorId: author.user.id,
        });
        expect(reply.headers.get('location')).toBe(`/api/posts/${reply.body.id}`);
        const fetched = await blog.client(author.accessToken).posts.getPost({ id: reply.body.id });
        expect(fetched).toEqual({ id: reply.body.id, title: 'Hello', excerpt: 'First post.' });
      });

      it('refuses keys the input does not name with 400, naming them, and creates nothing', async () => {
        const title = `Mass assignment ${crypto.randomUUID()}`;
        const reply = await blog.post(
          '/api/posts',
          { title, content: 'x', authorId: other.user.id, id: crypto.randomUUID(), exerpt: 'typo' },
          author.accessToken,
        );
        const problem = expectProblem(reply, 400, 'VALIDATION_FAILED');
        expect(problem.errors).toEqual([
          { path: 'authorId', message: 'Unknown key' },
          { path: 'id', message: 'Unknown key' },
          { path: 'exerpt', message: 'Unknown key; did you mean "excerpt"?' },
        ]);
        expect(await blog.query('SELECT id FROM posts WHERE title = $1', [title])).toEqual([]);
      });

      it('derives the excerpt from long content, and keeps a given one', async () => {
        const content = `${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(10)}\n\nEnd.`;
        const derived = await blog.createPost(author.accessToken, { content });
        expect(derived.excerpt.length).toBeLessThanOrEqual(160);
        expect(derived.excerpt.endsWith('…')).toBe(true);
        expect(content.startsWith(derived.excerpt.slice(0, -1))).toBe(true);

        const given = await blog.createPost(author.accessToken, {
          content,
          excerpt: 'My own words',
          status: 'published',
        });
        expect(given).toMatchObject({ excerpt: 'My own words', status: 'published' });
      });

      it('accepts the limits: a 200-character title, a 500-character excerpt', async () => {
        const post = await blog.createPost(author.accessToken, {
          title: 't'.repeat(200),
          excerpt: 'e'.repeat(500),
        });
        expect(post.title).toHaveLength(200);
        expect(post.excerpt).toHaveLength(500);
      });

      it.each<[string, NewPost, string]>([
        ['an empty title', { title: '   ', content: 'x' }, 'title'],
        ['a 201-character title', { title: 't'.repeat(201), content: 'x' }, 'title'],
        ['empty content', { title: 'x', content: '' }, 'content'],
        ['a 501-character excerpt', { title: 'x', content: 'x', excerpt: 'e'.repeat(501) }, 'excerpt'],
      ])('answers 400 VALIDATION_FAILED for %s', async (_, body, path) => {
        const problem = await expectClientProblem(
          blog.client(author.accessToken).posts.createPost(body),
          400,
          'VALIDATION_FAILED',
        );
        expect(problem.errors.map((error) => error.path)).toContain(path);
      });

      // Bodies the client's types refuse, so they are sent raw.
      it.each([
        ['no title', { content: 'x' }, 'title'],
        ['no content', { title: 'x' }, 'content'],
        ['status archived', { title: 'x', content: 'x', status: 'archived' }, 'status'],
        ['a numeric title', { title: 42, content: 'x' }, 'title'],
      ])('answers 400 VALIDATION_FAILED for %s', async (_, body, path) => {
        const problem = expectProblem(
          await blog.post('/api/posts', body, author.accessToken),
          400,
          'VALIDATION_FAILED',
        );
        expect(problem.errors?.map((error) => error.path)).toContain(path);
      });

      it('answers 400 for 50,001 characters of content', async () => {
        await expectClientProblem(
          blog.client(author.accessToken).posts.createPost({ title: 'x', content: 'c'.repeat(50_001) }),
          400,
          'VALIDATION_FAILED',
        );
      });

      it('answers 401 UNAUTHENTICATED without a token', async () => {
        const problem = await expectClientProblem(
          blog.client().posts.createPost({ title: 'x', content: 'x' }),
          401,
          'UNAUTHENTICATED',
        );
        expect(problem.headers.get('www-authenticate')).toBe('Bearer');
      });
    });

    describe('who sees what', () => {
      let writer: Session;
      let draft: FullPost;
      let published: FullPost;
      let archived: FullPost;

      beforeAll(async () => {
        writer = await blog.register({ name: 'Writer' });
        draft = await blog.createPost(writer.accessToken, { title: 'Draft' });
        published = await blog.createPost(writer.accessToken, { title: 'Published', status: 'published' });
        archived = await blog.createPost(writer.accessToken, { title: 'Archived' });
        expect(
          (await blog.post(`/api/posts/${archived.id}/archive`, undefined, writer.accessToken)).status,
        ).toBe(200);
      });

      const listed = async (token?: string, query = '') =>
        (await listPage(blog, `authorId=${writer.user.id}${query}`, token)).data.map((post) => post.id);

      it('anonymous callers see only published posts', async () => {
        const reply = await blog.get<PostView>(`/api/posts/${published.id}`);
        expect(reply.status).toBe(200);
        expect(reply.body).toEqual({ id: published.id, title: 'Published', excerpt: published.excerpt });
        for (const hidden of [draft, archived]) {
          await expectClientProblem(
            blog.client().posts.getPost({ id: hidden.id }),
            404,
            'NOT_FOUND',
            'No post with this id',
          );
        }
        expect(await listed()).toEqual([published.id]);
      });

      it('a signed-in user sees published posts and their own in any status', async () => {
        expect(await listed(other.accessToken)).toEqual([published.id]);
        await expectClientProblem(
          blog.client(other.accessToken).posts.getPost({ id: draft.id }),
          404,
          'NOT_FOUND',
        );
        expect(await listed(writer.accessToken)).toEqual([archived.id, published.id, draft.id]);
        for (const own of [draft, archived]) {
          const reply = await blog.get<PostView>(`/api/posts/${own.id}`, writer.accessToken);
          expect(reply.status).toBe(200);
          expectKeys(reply.body, views.postPublic);
        }
      });

      it('an admin sees every post, still in the public view on get', async () => {
        expect(await listed(admin)).toEqual([archived.id, published.id, draft.id]);
        expect(await blog.client(admin).posts.getPost({ id: draft.id })).toEqual({
          id: draft.id,
          title: 'Draft',
          excerpt: draft.excerpt,
        });
      });

      it('filters by status within what the caller may see', async () => {
        expect(await listed(writer.accessToken, '&status=draft')).toEqual([draft.id]);
        expect(await listed(writer.accessToken, '&status=archived')).toEqual([archived.id]);
        expect(await listed(undefined, '&status=draft')).toEqual([]);
        expect(await listed(other.accessToken, '&status=published')).toEqual([published.id]);
      });

      it('another user’s draft is a 404 on get, update, delete, publish and archive', async () => {
        const posts = blog.client(other.accessToken).posts;
        const id = draft.id;
        await expectClientProblem(posts.getPost({ id }), 404, 'NOT_FOUND');
        await expectClientProblem(posts.updatePost({ id, data: { title: 'Mine now' } }), 404, 'NOT_FOUND');
        await expectClientProblem(posts.deletePost({ id }), 404, 'NOT_FOUND');
        await expectClientProblem(posts.publishPost({ id }), 404, 'NOT_FOUND');
        await expectClientProblem(posts.archivePost({ id }), 404, 'NOT_FOUND');
        expect(await listed(writer.accessToken, '&status=draft')).toEqual([draft.id]);
        expect((await blog.client(writer.accessToken).posts.getPost({ id })).title).toBe('Draft');
      });

      it('answers 404 for unknown ids, 400 naming the parameter for a malformed one', async () => {
        const byAdmin = blog.client(admin).posts;
        const byAuthor = blog.client(author.accessToken).posts;
        await expectClientProblem(byAdmin.getPost({ id: crypto.randomUUID() }), 404, 'NOT_FOUND');
        await expectClientProblem(
          blog.client().posts.getPost({ id: 'not-a-uuid' }),
          400,
          'VALIDATION_FAILED',
          'id: Invalid UUID',
        );
        await expectClientProblem(
          byAuthor.updatePost({ id: 'not-a-uuid', data: { title: 'x' } }),
          400,
          'VALIDATION_FAILED',
        );
        await expectClientProblem(
          byAuthor.updatePost({ id: crypto.randomUUID(), data: { title: 'x' } }),
          404,
          'NOT_FOUND',
        );
        await expectClientProblem(
          byAdmin.updatePost({ id: crypto.randomUUID(), data: { title: 'x' } }),
          404,
          'NOT_FOUND',
        );
        await expectClientProblem(byAdmin.deletePost({ id: crypto.randomUUID() }), 404, 'NOT_FOUND');
        await expectClientProblem(byAdmin.publishPost({ id: crypto.randomUUID() }), 404, 'NOT_FOUND');
      });
    });

    describe('PUT /api/posts/:id', () => {
      it('lets the author edit, answering the authenticated view', async () => {
        const post = await blog.createPost(author.accessToken, { title: 'Before' });
        const reply = await blog.put<FullPost>(
          `/api/posts/${post.id}`,
          { title: 'After' },
          author.accessToken,
        );
        expect(reply.status, reply.text).toBe(200);
        expectKeys(reply.body, views.postAuthenticated);
        expect(reply.body).toEqual({ ...post, title: 'After' });
      });

      it('addresses the post of the path, whatever id the body holds', async () => {
        const target = await blog.createPost(author.accessToken, { title: 'Target' });
        const bystander = await blog.createPost(author.accessToken, { title: 'Bystander' });
        const reply = await blog.put<FullPost>(
          `/api/posts/${target.id}`,
          { id: bystander.id, title: 'Changed' },
          author.accessToken,
        );
        expect(reply.status, reply.text).toBe(200);
        expect(reply.body).toMatchObject({ id: target.id, title: 'Changed' });
        const posts = blog.client(author.accessToken).posts;
        expect((await posts.getPost({ id: bystander.id })).title).toBe('Bystander');
        await expectClientProblem(
          posts.updatePost({ id: target.id, data: { id: bystander.id } }),
          400,
          'VALIDATION_FAILED',
          'data: Send at least one field',
        );
      });

      it('needs at least one field, and refuses fields it does not know', async () => {
        const post = await blog.createPost(author.accessToken);
        const path = `/api/posts/${post.id}`;
        const posts = blog.client(author.accessToken).posts;
        await expectClientProblem(
          posts.updatePost({ id: post.id, data: {} }),
          400,
          'VALIDATION_FAILED',
          'data: Send at least one field',
        );
        await expectClientProblem(
          posts.updatePost({ id: post.id, data: { title: '' } }),
          400,
          'VALIDATION_FAILED',
        );
        // An unknown field, a near miss and a status outside the enum: the client's types refuse them.
        expectProblem(
          await blog.put(path, { authorId: other.user.id }, author.accessToken),
          400,
          'VALIDATION_FAILED',
        );
        const nearMiss = expectProblem(
          await blog.put(path, { titel: 'Typo' }, author.accessToken),
          400,
          'VALIDATION_FAILED',
        );
        expect(nearMiss.errors).toEqual([
          { path: 'data.titel', message: 'Unknown key; did you mean "title"?' },
        ]);
        expect((await posts.getPost({ id: post.id })).title).toBe(post.title);
        expectProblem(
          await blog.put(path, { status: 'archived' }, author.accessToken),
          400,
          'VALIDATION_FAILED',
        );
      });

      it('re-derives a derived excerpt when the content changes, and keeps a given one', async () => {
        const posts = blog.client(author.accessToken).posts;
        const derived = await blog.createPost(author.accessToken, { content: 'Old content.' });
        const edited = await posts.updatePost({ id: derived.id, data: { content: 'New content.' } });
        expect(edited).toMatchObject({ content: 'New content.', excerpt: 'New content.' });

        const given = await blog.createPost(author.accessToken, { content: 'Old.', excerpt: 'Chosen' });
        const kept = await posts.updatePost({ id: given.id, data: { content: 'New.' } });
        expect(kept).toMatchObject({ content: 'New.', excerpt: 'Chosen' });
      });

      it('forbids another user on a published post; an admin may edit it', async () => {
        const post = await blog.createPost(author.accessToken, { title: 'Mine', status: 'published' });
        const path = `/api/posts/${post.id}`;
        await expectClientProblem(
          blog.client(other.accessToken).posts.updatePost({ id: post.id, data: { title: 'Theirs' } }),
          403,
          'FORBIDDEN',
          'Guard "author or admin" denied access',
        );
        await expectClientProblem(
          blog.client().posts.updatePost({ id: post.id, data: { title: 'Anon' } }),
          401,
          'UNAUTHENTICATED',
        );
        const byAdmin = await blog.put<FullPost>(path, { title: 'Moderated' }, admin);
        expect(byAdmin.status).toBe(200);
        expect(byAdmin.body).toMatchObject({ title: 'Moderated', authorId: author.user.id });
      });
    });

    describe('DELETE /api/posts/:id', () => {
      it('lets the author delete: { success: true }, then 404', async () => {
        const post = await blog.createPost(author.accessToken, { status: 'published' });
        const reply = await blog.delete(`/api/posts/${post.id}`, author.accessToken);
        expect(reply.status, reply.text).toBe(200);
        expect(reply.body).toEqual({ success: true });
        await expectClientProblem(blog.client(admin).posts.getPost({ id: post.id }), 404, 'NOT_FOUND');
        await expectClientProblem(
          blog.client(author.accessToken).posts.deletePost({ id: post.id }),
          404,
          'NOT_FOUND',
        );
      });

      it('forbids another user and anonymous callers; an admin may delete', async () => {
        const post = await blog.createPost(author.accessToken, { status: 'published' });
        const { id } = post;
        await expectClientProblem(
          blog.client(other.accessToken).posts.deletePost({ id }),
          403,
          'FORBIDDEN',
          'Guard "author or admin" denied access',
        );
        await expectClientProblem(blog.client().posts.deletePost({ id }), 401, 'UNAUTHENTICATED');
        expect((await blog.get(`/api/posts/${id}`)).status).toBe(200);
        expect(await blog.client(admin).posts.deletePost({ id })).toEqual({ success: true });
        await expectClientProblem(blog.client().posts.getPost({ id }), 404, 'NOT_FOUND');
      });
    });

    describe('status transitions', () => {
      const move = (post: { id: string }, action: 'publish' | 'archive', token = author.accessToken) =>
        blog.post<FullPost>(`/api/posts/${post.id}/${action}`, undefined, token);
      const edit = (post: { id: string }, status: 'draft' | 'published', token = author.accessToken) =>
        blog.put<FullPost>(`/api/posts/${post.id}`, { status }, token);

      it('allows every move of the contract', async () => {
        const post = await blog.createPost(author.accessToken);
        const steps: [string, () => ReturnType<typeof move>, string][] = [
          ['draft → published (publish)', () => move(post, 'publish'), 'published'],
          ['published → draft (PUT)', () => edit(post, 'draft'), 'draft'],
          ['draft → archived (archive)', () => move(post, 'archive'), 'archived'],
          ['archived → draft (PUT)', () => edit(post, 'draft'), 'draft'],
          ['draft → published (PUT)', () => edit(post, 'published'), 'published'],
          ['published → archived (archive)', () => move(post, 'archive'), 'archived'],
        ];
        for (const [step, run, status] of steps) {
          const reply = await run();
          expect(reply.status, `${step}: ${reply.text}`).toBe(200);
          expectKeys(reply.body, views.postAuthenticated);
          expect(reply.body.status, step).toBe(status);
        }
      });

      it('answers 409 INVALID_TRANSITION for archived → published and for the same state', async () => {
        const posts = blog.client(author.accessToken).posts;
        const post = await blog.createPost(author.accessToken);
        const { id } = post;
        expect((await move(post, 'archive')).status).toBe(200);
        await expectClientProblem(
          posts.publishPost({ id }),
          409,
          'INVALID_TRANSITION',
          /archived.*published/,
        );
        await expectClientProblem(
          posts.updatePost({ id, data: { status: 'published' } }),
          409,
          'INVALID_TRANSITION',
        );
        await expectClientProblem(posts.archivePost({ id }), 409, 'INVALID_TRANSITION', /archived.*archived/);

        // A PUT that repeats the current status is no move.
        const draft = await blog.createPost(author.accessToken);
        expect((await edit(draft, 'draft')).status).toBe(200);

        const live = await blog.createPost(author.accessToken, { status: 'published' });
        expect((await posts.updatePost({ id: live.id, data: { status: 'published' } })).status).toBe(
          'published',
        );
        await expectClientProblem(
          posts.publishPost({ id: live.id }),
          409,
          'INVALID_TRANSITION',
          /published.*published/,
        );
        // The failed moves changed nothing.
        expect(
          (
            await listPage(blog, `authorId=${author.user.id}&status=archived&limit=100`, author.accessToken)
          ).data.map((p) => p.id),
        ).toContain(post.id);
      });

      it('lets only the author or an admin move a post', async () => {
        const post = await blog.createPost(author.accessToken, { status: 'published' });
        await expectClientProblem(
          blog.client(other.accessToken).posts.archivePost({ id: post.id }),
          403,
          'FORBIDDEN',
          'Guard "author or admin" denied access',
        );
        await expectClientProblem(blog.client().posts.archivePost({ id: post.id }), 401, 'UNAUTHENTICATED');
        const byAdmin = await move(post, 'archive', admin);
        expect(byAdmin.status).toBe(200);
        expect(byAdmin.body.status).toBe('archived');
      });
    });

    describe('cursor pagination', () => {
      let walker: Session;
      let expected: string[];

      beforeAll(async () => {
        walker = await blog.register({ name: 'Walker' });
        expected = newestFirst(await createMany(blog, walker.accessToken, 13));
      });

      const query = () => `authorId=${walker.user.id}`;

      it('walks forward: every post exactly once, newest first, with exact cursors', async () => {
        const { ids, pages } = await walkForward(blog, query(), 5);
        expect(ids).toEqual(expected);
        expect(pages.map((page) => page.data.length)).toEqual([5, 5, 3]);
        expect(pages.map((page) => page.nextCursor)).toEqual([expected[4], expected[9], null]);
        expect(pages.map((page) => page.prevCursor)).toEqual([expected[0], expected[5], expected[10]]);
      });

      it('detects the end exactly: a page that ends the list has nextCursor null', async () => {
        expect((await listPage(blog, `${query()}&limit=13`)).nextCursor).toBeNull();
        const twelve = await listPage(blog, `${query()}&limit=12`);
        expect(twelve.nextCursor).toBe(expected[11]);
        const last = await listPage(blog, `${query()}&limit=12&cursor=${twelve.nextCursor}`);
        expect(last).toEqual({
          data: [expect.objectContaining({ id: expected[12] })],
          nextCursor: null,
          prevCursor: expected[12],
        });
      });

      it('defaults to 20 items', async () => {
        const many = await blog.register();
        const ids = newestFirst(await createMany(blog, many.accessToken, 21));
        const page = await listPage(blog, `authorId=${many.user.id}`);
        expect(page.data.map((item) => item.id)).toEqual(ids.slice(0, 20));
        expect(page.nextCursor).toBe(ids[19]);
      });

      it('goes backward: the limit items just before the cursor, newest first, without it', async () => {
        const page = await listPage(blog, `${query()}&limit=3&direction=backward&cursor=${expected[7]}`);
        expect(page.data.map((item) => item.id)).toEqual(expected.slice(4, 7));
        expect(page.prevCursor).toBe(expected[4]);
        expect(page.nextCursor).toBe(expected[6]);

        const top = await listPage(blog, `${query()}&limit=3&direction=backward&cursor=${expected[1]}`);
        expect(top.data.map((item) => item.id)).toEqual([expected[0]]);
        expect(top.prevCursor).toBe(expected[0]);

        const beyond = await listPage(blog, `${query()}&limit=3&direction=backward&cursor=${expected[0]}`);
        expect(beyond).toEqual({ data: [], nextCursor: null, prevCursor: null });
      });

      it('walks backward from the oldest post to the newest with prevCursor', async () => {
        const collected: string[][] = [];
        let cursor = expected[12];
        for (;;) {
          const page = await listPage(blog, `${query()}&limit=5&direction=backward&cursor=${cursor}`);
          if (page.data.length === 0) break;
          collected.unshift(page.data.map((item) => item.id));
          cursor = page.prevCursor ?? '';
        }
        expect(collected.flat()).toEqual(expected.slice(0, 12));
      });

      it('still works from a cursor whose post was deleted', async () => {
        const owner = await blog.register();
        const ids = newestFirst(await createMany(blog, owner.accessToken, 8));
        const gone = ids[4] ?? '';
        expect((await blog.delete(`/api/posts/${gone}`, owner.accessToken)).status).toBe(200);
        const forward = await listPage(blog, `authorId=${owner.user.id}&limit=2&cursor=${gone}`);
        expect(forward.data.map((item) => item.id)).toEqual(ids.slice(5, 7));
        expect(forward.nextCursor).toBe(ids[6]);
        const backward = await listPage(
          blog,
          `authorId=${owner.user.id}&limit=2&direction=backward&cursor=${gone}`,
        );
        expect(backward.data.map((item) => item.id)).toEqual(ids.slice(2, 4));
        expect(backward.nextCursor).toBe(ids[3]);
      });

      it('never duplicates or skips when posts are inserted during a walk', async () => {
        const owner = await blog.register();
        const original = newestFirst(await createMany(blog, owner.accessToken, 7));
        const inserted: string[] = [];
        const { ids, pages } = await walkForward(
          blog,
          `authorId=${owner.user.id}`,
          2,
          undefined,
          async () => {
            inserted.push(...(await createMany(blog, owner.accessToken, 2)));
          },
        );
        expect(ids).toEqual(original);
        expect(pages).toHaveLength(4);
        // The new posts are all before the walk's first item: one backward page finds them.
        const newer = await listPage(
          blog,
          `authorId=${owner.user.id}&limit=100&direction=backward&cursor=${pages[0]?.prevCursor}`,
        );
        expect(newer.data.map((item) => item.id)).toEqual(newestFirst(inserted));
      });

      it('gives the oldest page for backward without a cursor', async () => {
        const page = await listPage(blog, `${query()}&limit=3&direction=backward`);
        expect(page.data.map((item) => item.id)).toEqual(expected.slice(10, 13));
        expect(page.nextCursor).toBeNull();
      });

      it.each<[string, ListQuery, string]>([
        ['authorId=abc', { authorId: 'abc' }, 'authorId'],
        ['cursor=abc', { cursor: 'abc' }, 'cursor'],
        ['cursor=', { cursor: '' }, 'cursor'],
        ['limit=0', { limit: 0 }, 'limit'],
        ['limit=101', { limit: 101 }, 'limit'],
      ])('answers 400 VALIDATION_FAILED for %s', async (_, query, path) => {
        const problem = await expectClientProblem(
          blog.client().posts.listPosts(query),
          400,
          'VALIDATION_FAILED',
        );
        expect(problem.errors.map((error) => error.path)).toContain(path);
      });

      // Values the client's types refuse, so the query strings are sent raw.
      it.each([
        ['limit=ten', 'limit'],
        ['direction=sideways', 'direction'],
        ['status=deleted', 'status'],
      ])('answers 400 VALIDATION_FAILED for %s', async (bad, path) => {
        const problem = expectProblem(await blog.get(`/api/posts?${bad}`), 400, 'VALIDATION_FAILED');
        expect(problem.errors?.map((error) => error.path)).toContain(path);
      });
    });

    describe('concurrency', () => {
      it('40 parallel creates by one user all succeed and each appears once in a walk', async () => {
        const writer = await blog.register();
        const replies = await Promise.all(
          Array.from({ length: 40 }, (_, index) =>
            blog.post<FullPost>(
              '/api/posts',
              {
                title: `Parallel ${index}`,
                content: `Body ${index}`,
                status: index % 2 === 0 ? 'published' : 'draft',
              },
              writer.accessToken,
            ),
          ),
        );
        expect(replies.map((reply) => reply.status)).toEqual(Array(40).fill(201));
        const created = replies.map((reply) => reply.body.id);
        expect(new Set(created).size).toBe(40);

        const { ids } = await walkForward(blog, `authorId=${writer.user.id}`, 7, writer.accessToken);
        expect(ids).toEqual(newestFirst(created));
        const published = replies
          .filter((reply) => reply.body.status === 'published')
          .map((reply) => reply.body.id);
        expect((await walkForward(blog, `authorId=${writer.user.id}`, 6)).ids).toEqual(
          newestFirst(published),
        );
      });

      it('of 10 parallel publishes of one draft, exactly one succeeds; the rest are 409', async () => {
        const post = await blog.createPost(author.accessToken);
        const replies = await Promise.all(
          Array.from({ length: 10 }, () =>
            blog.post(`/api/posts/${post.id}/publish`, undefined, author.accessToken),
          ),
        );
        expect(replies.map((reply) => reply.status).sort()).toEqual([200, ...Array(9).fill(409)]);
        for (const reply of replies.filter((r) => r.status === 409))
          expectProblem(reply, 409, 'INVALID_TRANSITION');
      });

      it('20 parallel registrations of one email: exactly one 201, the rest 409', async () => {
        const email = uniqueEmail('race');
        const replies = await Promise.all(
          Array.from({ length: 20 }, (_, index) =>
            blog.post('/api/auth/register', { email, password: `password-${index}`, name: `Racer ${index}` }),
          ),
        );
        const statuses = replies.map((reply) => reply.status).sort();
        expect(statuses).toEqual([201, ...Array(19).fill(409)]);
        for (const reply of replies.filter((r) => r.status === 409)) expectProblem(reply, 409, 'CONFLICT');
      });
    });
  });
}
