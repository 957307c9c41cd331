/**
 * Posts: the queries behind `/api/posts`. Visibility (docs/blog.md) is applied here, in SQL, so
 * a post a caller may not see is absent from lists and `undefined` from `findById` (a 404). Ids
 * are UUIDs: the procedures' schemas refuse anything else before a query runs.
 */
import { and, asc, desc, eq, gt, inArray, lt, or, type SQL, sql } from 'drizzle-orm';
import { NotFoundError, ProceedError } from 'proceedjs';
import { type CursorPage, type CursorParams, keysetClauses, paginateKeyset } from 'proceedjs/pagination';
import { blogErrors } from '../errors.js';
import type { Db } from './connect.js';
import { FOREIGN_KEY_VIOLATION, sqlState } from './errors.js';
import { newId } from './ids.js';
import { type PostStatus, postStatuses, posts } from './schema.js';

/** A post as stored: the row type of the Drizzle schema. */
export type Post = typeof posts.$inferSelect;

export interface NewPost {
  authorId: string;
  title: string;
  content: string;
  /** Derived from the start of `content` when absent. */
  excerpt?: string | undefined;
  status?: 'draft' | 'published' | undefined;
}

/** The fields an update may change; `undefined` leaves one as it is. */
export type PostPatch = {
  [K in 'title' | 'content' | 'excerpt' | 'status']?: Post[K] | undefined;
};

/** Who is asking: anonymous callers see published posts, users also their own, admins all. */
export type Visibility = { kind: 'anonymous' } | { kind: 'user'; userId: string } | { kind: 'admin' };

export interface ListPostsParams extends CursorParams {
  authorId?: string | undefined;
  status?: PostStatus | undefined;
  visibility: Visibility;
}

export interface PostsRepository {
  /** Inserts a post (`draft` unless said otherwise). An author that does not exist is `NotFoundError`. */
  create(input: NewPost): Promise<Post>;
  /** `undefined` when there is no such post or `visibility` may not see it (default: admin, sees all). */
  findById(id: string, visibility?: Visibility): Promise<Post | undefined>;
  /** One cursor page, newest first, of the posts `visibility` may see (rules: proceed/pagination). */
  listCursor(params: ListPostsParams): Promise<CursorPage<Post>>;
  /**
   * Changes the given fields; `undefined` when there is no such post. A changed `status` must be
   * an allowed transition (else `INVALID_TRANSITION`); the same status is no change. When
   * `content` changes and the excerpt was derived from the old content, it is derived again.
   * Given the post as just read (`current`), the update is one statement that applies only if
   * what the decision read is unchanged; otherwise it reads the post again, locked, and decides
   * anew.
   */
  update(id: string, patch: PostPatch, current?: Post): Promise<Post | undefined>;
  /** `false` when there was no such post. */
  delete(id: string): Promise<boolean>;
  /**
   * Moves a post to `status` (publish, archive…) in one statement; `undefined` when there is no
   * such post; `INVALID_TRANSITION` (409) when the move is not allowed, including to the
   * status it already has.
   */
  setStatus(id: string, status: PostStatus): Promise<Post | undefined>;
}

/** The allowed moves between statuses (docs/blog.md). */
export const postTransitions: Readonly<Record<PostStatus, readonly PostStatus[]>> = {
  draft: ['published', 'archived'],
  published: ['draft', 'archived'],
  archived: ['draft'],
};

/** Whether a post may move from one status to another. */
export function canTransition(from: PostStatus, to: PostStatus): boolean {
  return postTransitions[from].includes(to);
}

/** Longest derived excerpt, in characters, the ellipsis included. */
export const excerptLength = 160;

/**
 * The excerpt of a post without one: the start of its content, whitespace collapsed, cut at a
 * word boundary (unless the first word alone is too long) and ended with '…' when shortened.
 *
 * @example
 * deriveExcerpt('A short post.') // 'A short post.'
 */
export function deriveExcerpt(content: string, max = excerptLength): string {
  const characters = Array.from(content.replace(/\s+/g, ' ').trim());
  if (characters.length <= max) return characters.join('');
  const head = characters.slice(0, max - 1).join('');
  const boundary = head.lastIndexOf(' ');
  const cut = boundary >= head.length / 2 ? head.slice(0, boundary) : head;
  return `${cut.replace(/[\s.,;:!?\-–—]+$/u, '')}…`;
}

const operators = { lt, gt, asc, desc };

function visibleTo(visibility: Visibility): SQL | undefined {
  switch (visibility.kind) {
    case 'admin':
      return undefined;
    case 'user':
      return or(eq(posts.status, 'published'), eq(posts.authorId, visibility.userId));
    case 'anonymous':
      return eq(posts.status, 'published');
  }
}

function invalidTransition(from: PostStatus, to: PostStatus): ProceedError {
  return new ProceedError(
    blogErrors.INVALID_TRANSITION,
    `${from === 'archived' ? 'An' : 'A'} ${from} post cannot become ${to}`,
  );
}

/** The columns an update writes, decided from the post as it is now. */
function changesOf(current: Post, patch: PostPatch): Partial<Post> {
  if (
    patch.status !== undefined &&
    patch.status !== current.status &&
    !canTransition(current.status, patch.status)
  ) {
    throw invalidTransition(current.status, patch.status);
  }
  const excerptWasDerived = current.excerpt === deriveExcerpt(current.content);
  const excerpt =
    patch.excerpt ??
    (patch.content !== undefined && excerptWasDerived ? deriveExcerpt(patch.content) : undefined);
  return {
    ...(patch.title === undefined ? {} : { title: patch.title }),
    ...(patch.content === undefined ? {} : { content: patch.content }),
    ...(excerpt === undefined ? {} : { excerpt }),
    ...(patch.status === undefined ? {} : { status: patch.status }),
  };
}

/** What `changesOf` read of the post: an update decided on it holds only while these are unchanged. */
function unchangedSince(current: Post, patch: PostPatch): SQL | undefined {
  const derivesExcerpt = patch.content !== undefined && patch.excerpt === undefined;
  return and(
    eq(posts.id, current.id),
    patch.status === undefined ? undefined : eq(posts.status, current.status),
    derivesExcerpt ? and(eq(posts.excerpt, current.excerpt), eq(posts.content, current.content)) : undefined,
  );
}

/**
 * The posts repository over a Drizzle database (PGlite or PostgreSQL).
 *
 * @example
 * const posts = postsRepository(database.db);
 * const post = await posts.create({ authorId: user.id, title: 'Hello', content: 'First post' });
 * const page = await posts.listCursor({ limit: 20, direction: 'forward', visibility: { kind: 'anonymous' } });
 */
export function postsRepository(db: Db): PostsRepository {
  return {
    async create(input) {
      try {
        const [created] = await db
          .insert(posts)
          .values({
            id: newId(),
            authorId: input.authorId,
            title: input.title,
            content: input.content,
            excerpt: input.excerpt ?? deriveExcerpt(input.content),
            status: input.status ?? 'draft',
          })
          .returning();
        return created as Post;
      } catch (error) {
        // The author was deleted between authentication and this insert.
        if (sqlState(error) === FOREIGN_KEY_VIOLATION) throw new NotFoundError('No such author');
        throw error;
      }
    },

    async findById(id, visibility = { kind: 'admin' }) {
      const [found] = await db
        .select()
        .from(posts)
        .where(and(eq(posts.id, id), visibleTo(visibility)));
      return found;
    },

    async listCursor(params) {
      const { authorId } = params;
      const filters = and(
        visibleTo(params.visibility),
        authorId === undefined ? undefined : eq(posts.authorId, authorId),
        params.status === undefined ? undefined : eq(posts.status, params.status),
      );
      return paginateKeyset(
        params,
        (query) => {
          const keyset = keysetClauses(operators, posts.id, query);
          return db
            .select()
            .from(posts)
            .where(and(filters, keyset.where))
            .orderBy(keyset.orderBy)
            .limit(keyset.limit);
        },
        { key: 'id' },
      );
    },

    async update(id, patch, current) {
      if (current !== undefined && current.id === id) {
        const changes = changesOf(current, patch);
        const [updated] = await db
          .update(posts)
          .set({ ...changes, updatedAt: sql`now()` })
          .where(unchangedSince(current, patch))
          .returning();
        if (updated !== undefined) return updated;
      }
      return db.transaction(async (tx) => {
        const [locked] = await tx.select().from(posts).where(eq(posts.id, id)).for('update');
        if (locked === undefined) return undefined;
        const [updated] = await tx
          .update(posts)
          .set({ ...changesOf(locked, patch), updatedAt: sql`now()` })
          .where(eq(posts.id, id))
          .returning();
        return updated;
      });
    },

    async delete(id) {
      const deleted = await db.delete(posts).where(eq(posts.id, id)).returning({ id: posts.id });
      return deleted.length > 0;
    },

    async setStatus(id, status) {
      const allowedFrom = postStatuses.filter((from) => canTransition(from, status));
      // One conditional UPDATE: two concurrent moves cannot both pass the check.
      const [moved] = await db
        .update(posts)
        .set({ status, updatedAt: sql`now()` })
        .where(and(eq(posts.id, id), inArray(posts.status, allowedFrom)))
        .returning();
      if (moved !== undefined) return moved;
      const [current] = await db.select({ status: posts.status }).from(posts).where(eq(posts.id, id));
      if (current === undefined) return undefined;
      throw invalidTransition(current.status, status);
    },
  };
}
