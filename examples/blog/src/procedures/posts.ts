/** /api/posts (CONTRACT §5): who sees what, transitions, the publish and archive routes. */
import { NotFoundError, procedures } from 'proceed';
import { authenticated } from 'proceed/auth';
import { cursorInput, cursorPage } from 'proceed/pagination';
import { z } from 'zod';
import { blogProcedure, visibilityOf } from '../context.js';
import { postStatuses } from '../db/index.js';
import { authorOrAdmin } from '../guards.js';
import { Post, Success } from '../resources.js';

const id = z.object({ id: z.string() });
const title = z.string().trim().min(1).max(200);
const content = z.string().min(1).max(50_000);
const excerpt = z.string().max(500);
const initialStatus = z.enum(['draft', 'published']);

const owned = () => blogProcedure().guard(authenticated, authorOrAdmin);

const moveTo = (status: 'published' | 'archived', path: string, summary: string) =>
  owned()
    .rest({ method: 'POST', path })
    .meta({ summary })
    .input(id)
    .output(Post.authenticated)
    .mutation(async ({ input, ctx }) => {
      const visible = await ctx.repos.posts.findById(input.id, visibilityOf(ctx.user));
      if (visible === undefined) throw new NotFoundError('No post with this id');
      const post = await ctx.repos.posts.setStatus(input.id, status);
      if (post === undefined) throw new NotFoundError('No post with this id');
      return post;
    });

export const posts = procedures('posts', {
  listPosts: blogProcedure()
    .meta({ summary: 'Posts, newest first, a cursor page at a time' })
    .input(
      cursorInput({
        cursor: z.uuid(),
        filters: { authorId: z.uuid().optional(), status: z.enum(postStatuses).optional() },
      }),
    )
    .output(cursorPage(Post.public))
    .query(({ input, ctx }) => ctx.repos.posts.listCursor({ ...input, visibility: visibilityOf(ctx.user) })),

  getPost: blogProcedure()
    .meta({ summary: 'A post, public view' })
    .input(id)
    .output(Post.public)
    .query(async ({ input, ctx }) => {
      const post = await ctx.repos.posts.findById(input.id, visibilityOf(ctx.user));
      if (post === undefined) throw new NotFoundError('No post with this id');
      return post;
    }),

  createPost: blogProcedure()
    .meta({ summary: 'Write a post; you are its author' })
    .guard(authenticated)
    .input(z.object({ title, content, excerpt: excerpt.optional(), status: initialStatus.optional() }))
    .output(Post.authenticated)
    .mutation(({ input, ctx }) => ctx.repos.posts.create({ ...input, authorId: ctx.user.id })),

  updatePost: owned()
    .meta({ summary: 'Edit a post (author or admin)' })
    .input(
      z.object({
        id: z.string(),
        data: z
          .strictObject({
            title: title.optional(),
            content: content.optional(),
            excerpt: excerpt.optional(),
            status: initialStatus.optional(),
          })
          .refine((data) => Object.keys(data).length > 0, 'Send at least one field'),
      }),
    )
    .output(Post.authenticated)
    .mutation(async ({ input, ctx }) => {
      const visible = await ctx.repos.posts.findById(input.id, visibilityOf(ctx.user));
      if (visible === undefined) throw new NotFoundError('No post with this id');
      const post = await ctx.repos.posts.update(input.id, input.data);
      if (post === undefined) throw new NotFoundError('No post with this id');
      return post;
    }),

  deletePost: owned()
    .meta({ summary: 'Delete a post (author or admin)' })
    .input(id)
    .output(Success)
    .mutation(async ({ input, ctx }) => {
      const visible = await ctx.repos.posts.findById(input.id, visibilityOf(ctx.user));
      if (visible === undefined || !(await ctx.repos.posts.delete(input.id))) {
        throw new NotFoundError('No post with this id');
      }
      return { success: true as const };
    }),

  publishPost: moveTo('published', '/posts/:id/publish', 'Publish a post (author or admin)'),
  archivePost: moveTo('archived', '/posts/:id/archive', 'Archive a post (author or admin)'),
});
