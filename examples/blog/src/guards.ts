/**
 * The blog's own guards. They see the context only (guards run before input validation); the
 * post ownership check needs the post, so it is a step after the input (procedures/posts.ts).
 */
import { guard } from 'proceedjs';
import type { BlogContext } from './context.js';

/** The caller is the user the path names, or an admin. */
export const selfOrAdmin = guard({
  name: 'self or admin',
  requiresUser: true,
  reads: ['id', 'role'],
  check: (ctx: BlogContext) =>
    ctx.user !== undefined && (ctx.user.role === 'admin' || ctx.user.id === ctx.request.params.id),
});
