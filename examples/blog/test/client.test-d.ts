import type { Client } from 'proceedjs/client';
import { describe, expectTypeOf, it } from 'vitest';
import type { api } from '../src/app.js';

declare const client: Client<typeof api>;

describe('the blog client types', () => {
  it('types each procedure from its schemas and views, as JSON', () => {
    expectTypeOf(client.posts.getPost).parameter(0).toEqualTypeOf<{ id: string }>();
    expectTypeOf(client.posts.getPost).returns.resolves.toEqualTypeOf<{
      id: string;
      title: string;
      excerpt: string;
    }>();
    expectTypeOf(client.posts.listPosts)
      .returns.resolves.toHaveProperty('nextCursor')
      .toEqualTypeOf<string | null>();
    expectTypeOf(client.users.listUsers).returns.resolves.toHaveProperty('meta').toEqualTypeOf<{
      page: number;
      limit: number;
      total: number;
      totalPages: number;
    }>();
    expectTypeOf(client.auth.me).returns.resolves.toEqualTypeOf<{
      id: string;
      name: string;
      email: string;
      role: 'admin' | 'user' | 'guest';
    }>();
    expectTypeOf(client.posts.updatePost).parameter(0).toHaveProperty('data');
  });

  it('refuses wrong input at compile time', () => {
    // @ts-expect-error title must be a string
    void client.posts.createPost({ title: 1, content: 'x' });
    // @ts-expect-error status has no such value
    void client.posts.listPosts({ status: 'deleted' });
    // @ts-expect-error getPost needs an id
    void client.posts.getPost();
  });
});
