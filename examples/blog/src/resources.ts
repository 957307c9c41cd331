/** The blog's resources: each field at the visibility level docs/blog.md gives it. */
import { resource } from 'proceedjs/resource';
import { z } from 'zod';
import type { BlogContext } from './context.js';
import { postStatuses, roles } from './db/schema.js';

export const User = resource('User', {
  public: { id: z.uuid(), name: z.string() },
  authenticated: { email: z.email(), role: z.enum(roles).meta({ examples: ['user'] }) },
  admin: { isActive: z.boolean(), createdAt: z.date(), updatedAt: z.date() },
});

/**
 * A post's author owns it; admins see and change every post. The same rule decides who may
 * change a post (docs/blog.md) and, with `Post.perRecord`, which view of it a caller is shown.
 */
export const Post = resource(
  'Post',
  {
    public: { id: z.uuid(), title: z.string(), excerpt: z.string() },
    authenticated: {
      content: z.string(),
      authorId: z.uuid(),
      status: z.enum(postStatuses).meta({ examples: ['published'] }),
    },
    admin: { createdAt: z.date(), updatedAt: z.date() },
  },
  {
    owner: (post: { authorId: string }, ctx: Pick<BlogContext, 'user'>) => post.authorId === ctx.user?.id,
    admin: (ctx: Pick<BlogContext, 'user'>) => ctx.user?.role === 'admin',
  },
);

/** Whether the caller may change `post`: its author or an admin. */
export function mayChange(post: { authorId: string }, ctx: Pick<BlogContext, 'user'>): boolean {
  const level = Post.levelOf(post, ctx);
  return level === 'owner' || level === 'admin';
}

/** The answer of every route that ends a session or changes a secret. */
export const Success = z.object({ success: z.literal(true) });

/** A file uploaded to a post, as the upload answers it (docs/blog.md, "Attachments"). */
export const Attachment = z.object({
  id: z.uuid(),
  name: z.string().meta({ examples: ['report.pdf'] }),
  mediaType: z.string().meta({ examples: ['application/pdf'] }),
  size: z.int().nonnegative(),
});
