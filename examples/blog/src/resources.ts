/** The blog's resources: each field at the visibility level docs/blog.md gives it. */
import { resource } from 'proceedjs/resource';
import { z } from 'zod';
import type { BlogContext } from './context.js';
import { postStatuses, roles } from './db/schema.js';

/**
 * The blog's size limits (docs/blog.md): the inputs accept no more, so the views say so too, as
 * what the blog stores went through those inputs (or the start-up check of the admin it creates).
 */
export const limits = {
  title: 200,
  content: 50_000,
  excerpt: 500,
  name: 100,
  /** RFC 5321's longest address. */
  email: 254,
  /** Items per page of a listing (contract: `limit` 1–100). */
  page: 100,
  /** An attachment's file name, in characters. */
  fileName: 255,
} as const;

/** A timestamp the database made, as `toISOString()` writes it: `2026-12-05T07:19:30.000Z`. */
const timestamp = () => z.date().meta({ maxLength: 24 });

export const User = resource('User', {
  public: { id: z.uuid(), name: z.string().max(limits.name) },
  authenticated: {
    email: z.email().max(limits.email),
    role: z.enum(roles).meta({ examples: ['user'] }),
  },
  admin: { isActive: z.boolean(), createdAt: timestamp(), updatedAt: timestamp() },
});

/**
 * A post's author owns it; admins see and change every post. The same rule decides who may
 * change a post (docs/blog.md) and, with `Post.perRecord`, which view of it a caller is shown.
 */
export const Post = resource(
  'Post',
  {
    public: { id: z.uuid(), title: z.string().max(limits.title), excerpt: z.string().max(limits.excerpt) },
    authenticated: {
      content: z.string().max(limits.content),
      authorId: z.uuid(),
      status: z.enum(postStatuses).meta({ examples: ['published'] }),
    },
    admin: { createdAt: timestamp(), updatedAt: timestamp() },
  },
  {
    owner: 'authorId',
    admin: (ctx: Pick<BlogContext, 'user'>) => ctx.user?.role === 'admin',
  },
);

/** The answer of every route that ends a session or changes a secret. */
export const Success = z.object({ success: z.literal(true) });

/** A file uploaded to a post, as the upload answers it (docs/blog.md, "Attachments"). */
export const Attachment = z.object({
  id: z.uuid(),
  name: z
    .string()
    .max(limits.fileName)
    .meta({ examples: ['report.pdf'] }),
  mediaType: z.string().meta({ examples: ['application/pdf'] }),
  size: z.int().nonnegative(),
});
