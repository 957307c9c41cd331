/**
 * The typed client drives the blog over a real socket, with no code generation: types come from
 * `typeof api`, routes from the naming convention plus the server's manifest for overrides.
 */
import { type Client, createClient, ProblemError, routeManifest } from 'proceedjs/client';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { api } from '../src/app.js';
import type { blogErrors } from '../src/errors.js';
import { engines, uniqueEmail, useBlog } from './harness.js';

type Blog = typeof api;

describe.each(engines())('the typed client on $name', (engine) => {
  if (engine.skip) {
    it.skip('needs PostgreSQL', () => undefined);
    return;
  }
  const blog = useBlog(engine);
  const routes = routeManifest(api);
  const client = (token?: string): Client<Blog, typeof blogErrors> =>
    createClient<Blog, typeof blogErrors>({
      baseUrl: blog.origin,
      routes,
      ...(token === undefined ? {} : { token }),
    });

  it('registers, writes, publishes, reads and deletes a post', async () => {
    const email = uniqueEmail('client');
    const session = await client().auth.register({ email, password: 'correct horse', name: 'Client' });
    expect(session.user).toEqual({ id: session.user.id, name: 'Client', email, role: 'user' });
    expect(session.tokenType).toBe('Bearer');

    const writer = client(session.accessToken);
    expect(await writer.auth.me()).toEqual(session.user);

    const draft = await writer.posts.createPost({ title: 'Typed', content: 'Sent by the typed client' });
    expect(draft).toMatchObject({ title: 'Typed', status: 'draft', authorId: session.user.id });
    await expect(client().posts.getPost({ id: draft.id })).rejects.toMatchObject({
      status: 404,
      code: 'NOT_FOUND',
    });

    const published = await writer.posts.publishPost({ id: draft.id });
    expect(published.status).toBe('published');
    expect(await client().posts.getPost({ id: draft.id })).toEqual({
      id: draft.id,
      title: 'Typed',
      excerpt: 'Sent by the typed client',
    });

    const renamed = await writer.posts.updatePost({ id: draft.id, data: { title: 'Typed, renamed' } });
    expect(renamed.title).toBe('Typed, renamed');

    const page = await client().posts.listPosts({ authorId: session.user.id, limit: 5 });
    expect(page).toEqual({
      data: [{ id: draft.id, title: 'Typed, renamed', excerpt: 'Sent by the typed client' }],
      nextCursor: null,
      prevCursor: draft.id,
    });

    expect(await writer.posts.deletePost({ id: draft.id })).toEqual({ success: true });
    expect((await client().posts.listPosts({ authorId: session.user.id })).data).toEqual([]);
  });

  it('turns problems into typed ProblemErrors with field errors', async () => {
    const failure = await client()
      .auth.register({ email: 'not an email', password: 'short', name: '' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProblemError);
    const problem = failure as ProblemError;
    expect(problem.status).toBe(400);
    expect(problem.code).toBe('VALIDATION_FAILED');
    expect(problem.errors.map((error) => error.path).sort()).toEqual(['email', 'name', 'password']);

    await expect(client().posts.createPost({ title: 'x', content: 'y' })).rejects.toMatchObject({
      status: 401,
      code: 'UNAUTHENTICATED',
    });
    await expect(client('not-a-token').posts.listPosts()).rejects.toMatchObject({
      status: 401,
      code: 'INVALID_TOKEN',
      detail: 'jwt malformed',
    });
  });

  it('matches the blog’s own INVALID_TRANSITION like a built-in code', async () => {
    const session = await client().auth.register({ email: uniqueEmail(), password: 'password1', name: 'T' });
    const writer = client(session.accessToken);
    const post = await writer.posts.createPost({
      title: 'Twice',
      content: 'Published twice',
      status: 'published',
    });
    const failure = await writer.posts.publishPost({ id: post.id }).catch((error: unknown) => error);
    expect(writer.$isProblem(failure, 'INVALID_TRANSITION')).toBe(true);
    expect(writer.$isProblem(failure, 'CONFLICT')).toBe(false);
    if (!writer.$isProblem(failure, 'INVALID_TRANSITION')) throw failure;
    expectTypeOf(failure.code).toEqualTypeOf<'INVALID_TRANSITION'>();
    expect(failure).toMatchObject({
      status: 409,
      title: 'Invalid state transition',
      type: 'urn:proceed:problem:invalid-transition',
      detail: 'A published post cannot become published',
    });
    // @ts-expect-error not a code of Proceed or of the blog
    writer.$isProblem(failure, 'INVALID_TRANSITON');
  });

  it('lists users as an admin, with coerced filters and the admin view', async () => {
    const admin = client(await blog.adminToken());
    const page = await admin.users.listUsers({ role: 'admin', isActive: true, sortBy: 'email', limit: 10 });
    expect(page.meta).toMatchObject({ page: 1, limit: 10 });
    expect(page.data.length).toBeGreaterThanOrEqual(1);
    const [first] = page.data;
    expect(Object.keys(first ?? {}).sort()).toEqual([
      'createdAt',
      'email',
      'id',
      'isActive',
      'name',
      'role',
      'updatedAt',
    ]);
    expect(typeof first?.createdAt).toBe('string');
    expectTypeOf(page.data[0]!.createdAt).toEqualTypeOf<string>();
    await expect(
      client(
        (await client().auth.register({ email: uniqueEmail(), password: 'password1', name: 'U' }))
          .accessToken,
      ).users.listUsers(),
    ).rejects.toMatchObject({ status: 403, code: 'FORBIDDEN' });
  });
});
