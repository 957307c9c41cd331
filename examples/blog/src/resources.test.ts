/**
 * The views are the blog's promise of who sees which field (docs/blog.md, "Resources"). The
 * end-to-end suites check every answer against these views; this pins the views themselves.
 */
import { describe, expect, it } from 'vitest';
import { Post, User } from './resources.js';

describe('the blog’s resources', () => {
  it('declare each field at the level docs/blog.md gives it', () => {
    expect(User.fieldLevels).toEqual({
      id: 'public',
      name: 'public',
      email: 'authenticated',
      role: 'authenticated',
      isActive: 'admin',
      createdAt: 'admin',
      updatedAt: 'admin',
    });
    expect(Post.fieldLevels).toEqual({
      id: 'public',
      title: 'public',
      excerpt: 'public',
      content: 'authenticated',
      authorId: 'authenticated',
      status: 'authenticated',
      createdAt: 'admin',
      updatedAt: 'admin',
    });
  });
});
