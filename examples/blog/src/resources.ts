/** The blog's resources: each field at the visibility level docs/blog.md gives it. */
import { resource } from 'proceedjs/resource';
import { z } from 'zod';
import { postStatuses, roles } from './db/schema.js';

export const User = resource('User', {
  public: { id: z.uuid(), name: z.string() },
  authenticated: { email: z.email(), role: z.enum(roles).meta({ examples: ['user'] }) },
  admin: { isActive: z.boolean(), createdAt: z.date(), updatedAt: z.date() },
});

export const Post = resource('Post', {
  public: { id: z.uuid(), title: z.string(), excerpt: z.string() },
  authenticated: {
    content: z.string(),
    authorId: z.uuid(),
    status: z.enum(postStatuses).meta({ examples: ['published'] }),
  },
  admin: { createdAt: z.date(), updatedAt: z.date() },
});

/** The answer of every route that ends a session or changes a secret. */
export const Success = z.object({ success: z.literal(true) });

/** A file uploaded to a post, as the upload answers it (docs/blog.md, "Attachments"). */
export const Attachment = z.object({
  id: z.uuid(),
  name: z.string().meta({ examples: ['report.pdf'] }),
  mediaType: z.string().meta({ examples: ['application/pdf'] }),
  size: z.int().nonnegative(),
});
