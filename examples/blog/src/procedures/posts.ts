/**
 * /api/posts (docs/blog.md): who sees what, transitions, the publish and archive routes, the live
 * feed, and the posts' attachments.
 */
import {
  download,
  eventQueue,
  eventStream,
  fileAt,
  NotFoundError,
  type Precondition,
  procedures,
  resumeAfter,
  StreamReconnect,
  sendFile,
  serverEvent,
  ValidationError,
  webSocket,
} from 'proceedjs';
import { authenticated } from 'proceedjs/auth';
import { cursorInput, cursorPage } from 'proceedjs/pagination';
import { owned } from 'proceedjs/resource';
import { z } from 'zod';
import { type BlogContext, blogProcedure } from '../context.js';
import { type Post as PostRecord, postStatuses } from '../db/index.js';
import { blogErrors } from '../errors.js';
import { type FeedEvent, replayLimit } from '../feed.js';
import { followLive } from '../live.js';
import { Attachment, limits, Post, Success } from '../resources.js';
import { updateInput } from '../schemas.js';

const id = z.object({ id: z.uuid() });
const title = z.string().trim().min(1).max(limits.title);
const content = z.string().min(1).max(limits.content);
const excerpt = z.string().max(limits.excerpt);
const initialStatus = z.enum(['draft', 'published']);

const noSuchPost = () => new NotFoundError('No post with this id');

function found<P>(post: P | undefined): P {
  if (post === undefined) throw noSuchPost();
  return post;
}

/**
 * Loads the post the path names, once, and lets only its author or an admin on (`Post`'s owner
 * and admin rules); the handler finds it on `ctx.post`. A post the caller may not see is a 404,
 * never a 403 that would reveal it. It reads no body: before `.input()`, an upload is not read
 * for anyone else.
 */
const authorOrAdmin = owned(Post, (ctx: BlogContext, id) => ctx.repos.posts.findById(id, Post.scopeOf(ctx)), {
  name: 'author or admin',
});

/** A write to one post: signed in, the id validated, the post loaded and its ownership checked. */
const ownPost = <S extends z.ZodType<{ id: string }>>(input: S) =>
  blogProcedure().guard(authenticated).input(input).use(authorOrAdmin);

/** What ETags and If-Match name: the post's version (docs/blog.md, "Versions and If-Match"). */
const postVersion = (post: Pick<PostRecord, 'version'>) => post.version;

/**
 * The version a write must find, after `If-Match` was checked against the post as loaded: with
 * If-Match the write applies to that version or fails with 412; without, any version will do.
 */
function versionToWrite(ctx: { post: PostRecord; precondition: Precondition }): number | undefined {
  ctx.precondition.check(ctx.post.version);
  return ctx.precondition.sent ? ctx.post.version : undefined;
}

const moveTo = (status: 'published' | 'archived', path: string, summary: string) =>
  ownPost(id)
    .rest({ method: 'POST', path })
    .meta({
      summary,
      description: `Moves the post to \`${status}\` if its status allows it (409 \`INVALID_TRANSITION\` otherwise). With \`If-Match\`, only the version it names.`,
      errors: [blogErrors.INVALID_TRANSITION],
    })
    .mcp({
      description: `Moves the post to \`${status}\` if its status allows it (INVALID_TRANSITION otherwise); its author or an admin.`,
    })
    .output(Post.authenticated)
    .versioned(postVersion)
    .mutation(async ({ ctx }) =>
      found(await ctx.repos.posts.setStatus(ctx.post.id, status, versionToWrite(ctx))),
    );

/** The largest attachment: 10 MiB (docs/blog.md, "Attachments"). */
export const attachmentMaxSize = 10 * 1024 * 1024;
/** The longest attachment file name, in characters. */
const attachmentNameLength = limits.fileName;

/**
 * Events not yet sent to one client: past this, a stream ends and the client resumes from the
 * database; a live socket ends with a problem.
 */
const feedBacklog = 1000;

/** What a client of the live socket sends: the authors it follows (docs/blog.md, "The live socket"). */
const LiveRequest = z.discriminatedUnion('type', [
  z.object({ type: z.literal('subscribe'), authorId: z.uuid() }),
  z.object({ type: z.literal('unsubscribe'), authorId: z.uuid() }),
]);
/** What the live socket sends: a post of a followed author, as it becomes published, in its public view. */
const LivePost = z.object({ type: z.literal('post'), post: Post.public });

export const posts = procedures('posts', {
  livePosts: blogProcedure()
    .rest({ method: 'GET', path: '/posts/live' })
    .meta({
      summary: 'Posts of the authors you follow, live, over a WebSocket',
      description:
        'A WebSocket. Send `{"type":"subscribe","authorId":"…"}` or `{"type":"unsubscribe","authorId":"…"}` (at most 100 authors: one more is answered with a problem, as an invalid message is); receive `{"type":"post","post":{…}}` with the public view of each post a followed author publishes, on any instance; a client that lets more than 1,000 posts wait unread gets a 429 problem and a close with 1008. A message that is not one of these, or longer than 4 KiB, is answered with `{"type":"error","problem":{…}}`; the tenth closes the socket with 1008. A ping at least every 30 s; 1001 when the server shuts down.',
    })
    .output(
      webSocket({
        receive: LiveRequest,
        send: LivePost,
        maxMessageSize: 4096,
        invalidLimit: 10,
        pingInterval: 30_000,
      }),
    )
    .query(({ ctx, messages, send, refuse }) =>
      followLive({ feed: ctx.feed, messages, send, refuse }, feedBacklog),
    ),

  postEvents: blogProcedure()
    .rest({ method: 'GET', path: '/posts/events' })
    .meta({
      summary: 'Posts as they are published, live',
      description:
        'Server-sent events: one each time a post becomes `published`, on any instance, with its public view as `data` and an `id` that orders them. Reconnect with `Last-Event-ID` to receive the events after it that the feed still keeps (at least the last 100, or 5 minutes), then the live ones; an id this database did not give out (from before a restart on another database, from a restored one, or made up) gets the live ones only. A keep-alive comment every 15 s.',
    })
    .output(eventStream(Post.public))
    .query(async function* ({ ctx, lastEventId, signal }) {
      // Past feedBacklog events behind, the queue ends the stream as a drop: the client resumes
      // from the database with Last-Event-ID.
      const queue = eventQueue<FeedEvent>({ signal, maxBehind: feedBacklog });
      // Subscribed before the replay is read: nothing published in between is lost (ids de-duplicate).
      const unsubscribe = ctx.feed.subscribe((events) => queue.push(...events));
      try {
        // An id the feed cannot place (another epoch's, a restored database's, made up): live only.
        let last = lastEventId === undefined ? undefined : resumeAfter(lastEventId, await ctx.feed.bounds());
        // Every retained event after it, a read at a time, up to the live ones.
        while (last !== undefined && !signal.aborted) {
          const missed = await ctx.feed.since(String(last));
          for (const event of missed) {
            last = BigInt(event.id);
            yield serverEvent(event.post, { id: event.id });
          }
          if (missed.length < replayLimit) break;
        }
        for await (const event of queue) {
          if (event instanceof StreamReconnect) {
            yield event;
            return;
          }
          if (last !== undefined && BigInt(event.id) <= last) continue;
          last = BigInt(event.id);
          yield serverEvent(event.post, { id: event.id });
        }
      } finally {
        unsubscribe();
      }
    }),

  listPosts: blogProcedure()
    .meta({
      summary: 'Posts, newest first, a cursor page at a time',
      description:
        'Anonymous callers see published posts, signed-in users also their own drafts and archived posts, admins all. Follow `nextCursor` for older posts and `prevCursor` with `direction=backward` for newer ones.',
    })
    .mcp({
      description:
        'Anonymous callers see published posts, signed-in users also their own drafts and archived posts, admins all. For older posts call again with `cursor` set to `nextCursor`; for newer ones with `cursor` set to `prevCursor` and `direction` "backward".',
    })
    .input(
      cursorInput({
        maxLimit: limits.page,
        cursor: z.uuid(),
        filters: { authorId: z.uuid().optional(), status: z.enum(postStatuses).optional() },
      }),
    )
    .output(cursorPage(Post.public, { maxLimit: limits.page, cursor: z.uuid() }))
    .query(({ input, ctx }) => ctx.repos.posts.listCursor(input, Post.scopeOf(ctx))),

  getPost: blogProcedure()
    .meta({
      summary: 'A post, public view',
      description:
        "A post you may not see is 404. The `ETag` carries the post's version: send it in `If-Match` when you edit the post.",
    })
    .mcp({ description: 'A post; one you may not see is not found (404).' })
    .input(id)
    .output(Post.public)
    .versioned(postVersion)
    .query(async ({ input, ctx }) => found(await ctx.repos.posts.findShownById(input.id, Post.scopeOf(ctx)))),

  createPost: blogProcedure()
    .meta({
      summary: 'Write a post; you are its author',
      description:
        'A draft unless `status` says `published`. Without an excerpt, one is derived from the content. Send an `Idempotency-Key` to retry safely.',
    })
    .mcp({
      description:
        'A draft unless `status` says `published`. Without an excerpt, one is derived from the content. Each call creates a post: list your posts before calling again after an error.',
    })
    .guard(authenticated)
    .input(z.object({ title, content, excerpt: excerpt.optional(), status: initialStatus.optional() }))
    .output(Post.authenticated)
    .mutation(({ input, ctx }) => ctx.repos.posts.create({ ...input, authorId: ctx.user.id })),

  updatePost: ownPost(
    updateInput({
      title: title.optional(),
      content: content.optional(),
      excerpt: excerpt.optional(),
      status: initialStatus.optional(),
    }),
  )
    .meta({
      summary: 'Edit a post (author or admin)',
      description:
        'Changes the fields sent (at least one). With `If-Match`, the edit applies only to the version it names; otherwise 412.',
      errors: [blogErrors.INVALID_TRANSITION],
    })
    .mcp({ description: 'Changes the fields sent in `data` (at least one); its author or an admin.' })
    .output(Post.authenticated)
    .versioned(postVersion)
    .mutation(async ({ input, ctx }) => {
      const ifChanged = versionToWrite(ctx) === undefined ? 'decide again' : 'fail';
      return found(await ctx.repos.posts.update(ctx.post.id, input.data, ctx.post, ifChanged));
    }),

  deletePost: ownPost(id)
    .meta({
      summary: 'Delete a post (author or admin)',
      description: 'With `If-Match`, deletes only the version it names; otherwise 412.',
    })
    .mcp({ description: 'Deletes the post; its author or an admin.' })
    .output(Success)
    .versioned()
    .mutation(async ({ ctx }) => {
      if (!(await ctx.repos.posts.delete(ctx.post.id, versionToWrite(ctx)))) throw noSuchPost();
      // The rows went with the post; its attachments' bytes go in the background.
      ctx.background(() => ctx.repos.attachments.removeFilesOf([ctx.post.id]));
      return { success: true as const };
    }),

  publishPost: moveTo('published', '/posts/:id/publish', 'Publish a post (author or admin)'),
  archivePost: moveTo('archived', '/posts/:id/archive', 'Archive a post (author or admin)'),

  createAttachment: blogProcedure()
    .rest({ method: 'POST', path: '/posts/:id/attachments' })
    .meta({
      summary: 'Attach a file to a post (author or admin)',
      description:
        "A `multipart/form-data` body with one file part named `file`, of any media type, at most 10 MiB (413 `PAYLOAD_TOO_LARGE` otherwise, before anything is read when `Content-Length` says so). Nothing is read unless you are the post's author or an admin. Download it from `/api/posts/{id}/attachments/{attachmentId}`.",
    })
    .guard(authenticated)
    // Before .input(): the body is read only once the caller may write to this post.
    .use(authorOrAdmin)
    .input(z.object({ id: z.uuid(), file: z.file().max(attachmentMaxSize) }))
    .uploads({ fileSize: attachmentMaxSize, files: 1 })
    .output(Attachment)
    .mutation(async ({ input, ctx }) => {
      const { file } = input;
      const { name } = file;
      if (Array.from(name).length > attachmentNameLength)
        throw new ValidationError([
          { path: 'file', message: `The file name is longer than ${attachmentNameLength} characters` },
        ]);
      // Streamed to the store here: the upload's file lasts only until the answer is sent.
      const saved = await ctx.repos.attachments.save({
        postId: ctx.post.id,
        name,
        mediaType: file.type,
        file,
      });
      return { id: saved.id, name: saved.name, mediaType: saved.mediaType, size: saved.size };
    }),

  getAttachment: blogProcedure()
    .rest({ method: 'GET', path: '/posts/:id/attachments/:attachmentId' })
    .meta({
      summary: 'Download a file attached to a post',
      description:
        'Whoever may see the post (a draft: its author and admins; otherwise 404). The file as it was uploaded, to save (`Content-Disposition: attachment`); its `ETag` is the SHA-256 of its bytes. Takes `Range` (one range), `If-None-Match` and `HEAD`.',
    })
    .input(z.object({ id: z.uuid(), attachmentId: z.uuid() }))
    .output(download())
    .query(async ({ input, ctx }) => {
      found(await ctx.repos.posts.findShownById(input.id, Post.scopeOf(ctx)));
      const file = await ctx.repos.attachments.find(input.id, input.attachmentId);
      if (file === undefined) throw new NotFoundError('No attachment with this id');
      const described = {
        type: file.mediaType,
        name: file.name,
        etag: file.sha256,
        lastModified: file.createdAt,
        disposition: 'attachment',
      } as const;
      if (!('path' in file.content)) return sendFile(file.content.bytes, described);
      try {
        return await fileAt(file.content.path, described);
      } catch (error) {
        // Removed since it was found: its post was deleted meanwhile.
        if ((error as { code?: string }).code === 'ENOENT')
          throw new NotFoundError('No attachment with this id');
        throw error;
      }
    }),
});
