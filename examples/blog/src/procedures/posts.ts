/** /api/posts (CONTRACT §5): who sees what, transitions, the publish and archive routes. */
import { NotFoundError, procedures } from 'proceedjs';
import { authenticated } from 'proceedjs/auth';
import { cursorInput, cursorPage } from 'proceedjs/pagination';
import { z } from 'zod';
import { type BlogContext, blogProcedure, visibilityOf } from '../context.js';
import { type Post as PostRecord, postStatuses } from '../db/index.js';
import { authorOrAdmin } from '../guards.js';
import { Post, Success } from '../resources.js';
import { text, updateInput } from '../schemas.js';

const id = z.object({ id: z.string() });
/**
 * An `id` in an update body is accepted and ignored: the path names the record (CONTRACT §2), and
 * clients often send back what they read. Every other unknown field is still a 400.
 */
const title = text().trim().min(1).max(200);
const content = text().min(1).max(50_000);
const excerpt = text().max(500);
const initialStatus = z.enum(['draft', 'published']);

const owned = () => blogProcedure().guard(authenticated, authorOrAdmin);

const noSuchPost = () => new NotFoundError('No post with this id');

function found(post: PostRecord | undefined): PostRecord {
  if (post === undefined) throw noSuchPost();
  return post;
}

/** The post, if the caller may see it; a 404 otherwise, so hidden posts stay hidden. */
async function visiblePost(ctx: BlogContext, id: string): Promise<PostRecord> {
  return found(await ctx.repos.posts.findById(id, visibilityOf(ctx.user)));
}

const moveTo = (status: 'published' | 'archived', path: string, summary: string) =>
  owned()
    .rest({ method: 'POST', path })
    .meta({ summary })
    .input(id)
    .output(Post.authenticated)
    .mutation(async ({ input, ctx }) => {
      await visiblePost(ctx, input.id);
      return found(await ctx.repos.posts.setStatus(input.id, status));
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
    .query(({ input, ctx }) => visiblePost(ctx, input.id)),

  createPost: blogProcedure()
    .meta({ summary: 'Write a post; you are its author' })
    .guard(authenticated)
    .input(z.object({ title, content, excerpt: excerpt.optional(), status: initialStatus.optional() }))
    .output(Post.authenticated)
    .mutation(({ input, ctx }) => ctx.repos.posts.create({ ...input, authorId: ctx.user.id })),

  updatePost: owned()
    .meta({ summary: 'Edit a post (author or admin)' })
    .input(
      updateInput({
        title: title.optional(),
        content: content.optional(),
        excerpt: excerpt.optional(),
        status: initialStatus.optional(),
      }),
    )
    .output(Post.authenticated)
    .mutation(async ({ input, ctx }) => {
      await visiblePost(ctx, input.id);
      return found(await ctx.repos.posts.update(input.id, input.data));
    }),

  deletePost: owned()
    .meta({ summary: 'Delete a post (author or admin)' })
    .input(id)
    .output(Success)
    .mutation(async ({ input, ctx }) => {
      await visiblePost(ctx, input.id);
      if (!(await ctx.repos.posts.delete(input.id))) throw noSuchPost();
      return { success: true as const };
    }),

  publishPost: moveTo('published', '/posts/:id/publish', 'Publish a post (author or admin)'),
  archivePost: moveTo('archived', '/posts/:id/archive', 'Archive a post (author or admin)'),
});
