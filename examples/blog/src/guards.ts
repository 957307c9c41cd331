/** The blog's own guards: ownership checks read the record the path names. */
import { guard } from 'proceedjs';
import type { BlogContext } from './context.js';
import { visibilityOf } from './context.js';

/**
 * The caller wrote the post, or is an admin. A post that does not exist, or that the caller may
 * not see, passes here so that the handler answers 404 rather than revealing it with a 403.
 */
export const authorOrAdmin = guard({
  name: 'author or admin',
  requiresUser: true,
  async check(ctx: BlogContext) {
    const user = ctx.user;
    if (user === undefined) return false;
    if (user.role === 'admin') return true;
    const id = ctx.request.params.id;
    if (id === undefined) return false;
    const post = await ctx.repos.posts.findById(id, visibilityOf(user));
    return post === undefined || post.authorId === user.id;
  },
});

/** The caller is the user the path names, or an admin. */
export const selfOrAdmin = guard({
  name: 'self or admin',
  requiresUser: true,
  check: (ctx: BlogContext) =>
    ctx.user !== undefined && (ctx.user.role === 'admin' || ctx.user.id === ctx.request.params.id),
});
