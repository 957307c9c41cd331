/**
 * Posts: the queries behind `/api/posts`. Visibility (docs/blog.md) is applied here, in SQL, so
 * a post a caller may not see is absent from lists and `undefined` from `findById` (a 404). Ids
 * are UUIDs: the procedures' schemas refuse anything else before a query runs.
 */
import { and, asc, desc, eq, gt, inArray, lt, or, type SQL, sql } from 'drizzle-orm';
import { NotFoundError, PreconditionFailedError, ProceedError } from 'proceedjs';
import { type CursorPage, type CursorParams, keysetClauses, paginateKeyset } from 'proceedjs/pagination';
import type { OwnerScope } from 'proceedjs/resource';
import { blogErrors } from '../errors.js';
import type { Database } from './connect.js';
import { FOREIGN_KEY_VIOLATION, sqlState } from './errors.js';
import { newId } from './ids.js';
import { type PostStatus, postStatuses, posts } from './schema.js';
import { directStatement } from './statements.js';

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

/**
 * Who is asking: anonymous callers see published posts, users also their own, admins all. Whose posts besides the published ones the caller sees: `Post.scopeOf(ctx)` (resources.ts),
 * from the same `owner` rule that chooses a post's view and guards its writes.
 */
export type Visibility = OwnerScope;

export interface ListPostsParams extends CursorParams {
  authorId?: string | undefined;
  status?: PostStatus | undefined;
}

export interface PostsRepository {
  /** Inserts a post (`draft` unless said otherwise). An author that does not exist is `NotFoundError`. */
  create(input: NewPost): Promise<CreatedPost>;
  /** `undefined` when there is no such post or `visibility` may not see it (default: admin, sees all). */
  findById(id: string, visibility?: Visibility): Promise<Post | undefined>;
  /**
   * What `GET /api/posts/:id` shows of a post and tags it with: its public fields and version
   * (reading every column cost that route a fifth of its time); `undefined` as for `findById`.
   */
  findShownById(id: string, visibility: Visibility): Promise<ShownPost | undefined>;
  /**
   * One cursor page, newest first, of the posts `visibility` may see (rules: proceed/pagination):
   * their public fields only, all a listing shows (reading `content` too cost a third of a page).
   */
  listCursor(params: ListPostsParams, visibility: Visibility): Promise<CursorPage<PostSummary>>;
  /**
   * Changes the given fields; `undefined` when there is no such post. A changed `status` must be
   * an allowed transition (else `INVALID_TRANSITION`); the same status is no change. When
   * `content` changes and the excerpt was derived from the old content, it is derived again.
   * Every change adds one to `version`.
   *
   * Given the post as just read (`current`), the update is one statement that applies only while
   * `current.version` is the stored one. When another write came first, `ifChanged` decides:
   * `'decide again'` (the default) reads the post again, locked, and applies the patch to it;
   * `'fail'` (the caller sent If-Match) throws `PreconditionFailedError` (412) and changes nothing.
   */
  update(
    id: string,
    patch: PostPatch,
    current?: PostAsRead,
    ifChanged?: IfChanged,
  ): Promise<Post | undefined>;
  /**
   * `false` when there was no such post. With `version`, deletes only that version of it; a post
   * at another version throws `PreconditionFailedError` (412).
   */
  delete(id: string, version?: number): Promise<boolean>;
  /** The ids of an author's posts: what goes with them when the author is deleted. */
  idsByAuthor(authorId: string): Promise<string[]>;
  /**
   * Moves a post to `status` (publish, archive…) in one statement; `undefined` when there is no
   * such post; `INVALID_TRANSITION` (409) when the move is not allowed, including to the
   * status it already has. With `version`, moves only that version of it (else 412).
   */
  setStatus(id: string, status: PostStatus, version?: number): Promise<Post | undefined>;
}

/** What a write decided on a read record does when another write changed it first. */
export type IfChanged = 'decide again' | 'fail';

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

/** What a listing shows of a post: its public view. */
export type PostSummary = Pick<Post, 'id' | 'title' | 'excerpt'>;
const summaryColumns = { id: posts.id, title: posts.title, excerpt: posts.excerpt };

/** What a single post's public answer shows, and the version its `ETag` carries. */
export type ShownPost = PostSummary & Pick<Post, 'version'>;
const shownColumns = { ...summaryColumns, version: posts.version };

/** What a create gives back: the post without its timestamps, which its answer never shows. */
export type CreatedPost = Omit<Post, 'createdAt' | 'updatedAt'>;
/** What an update needs of the post as last read, a created one included. */
export type PostAsRead = Pick<Post, 'id' | 'version' | 'status' | 'content' | 'excerpt'>;
/** The columns a create returns, under their own names (`author_id` is renamed by the repository). */
const createdColumns = {
  id: posts.id,
  author_id: posts.authorId,
  title: posts.title,
  content: posts.content,
  excerpt: posts.excerpt,
  status: posts.status,
  version: posts.version,
};
type CreatedRow = Omit<CreatedPost, 'authorId'> & { author_id: string };

const firstRow = <Row>(rows: Row[]): Row | undefined => rows[0];

function visibleTo(visibility: Visibility): SQL | undefined {
  switch (visibility.kind) {
    case 'admin':
      return undefined;
    case 'owner':
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
function changesOf(current: PostAsRead, patch: PostPatch): Partial<Post> {
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

/**
 * The posts repository over a Drizzle database (PGlite or PostgreSQL).
 *
 * @example
 * const posts = postsRepository(database);
 * const post = await posts.create({ authorId: user.id, title: 'Hello', content: 'First post' });
 * const page = await posts.listCursor({ limit: 20, direction: 'forward' }, { kind: 'anonymous' });
 */
export function postsRepository(database: Pick<Database, 'db' | 'query' | 'prepared'>): PostsRepository {
  const { db } = database;
  // The reads of a post and of the feed, the most frequent requests: prepared once per connection
  // instead of built per request, and run by the driver (docs/performance.md, "The blog by hand").
  // The status these statements filter on is written into them, not bound on every run: one
  // parameter less to send and for the driver to serialize per read.
  const isPublished = sql`${posts.status} = 'published'`;
  const shownWhere = (name: string, where: SQL | undefined) =>
    directStatement<ShownPost>(
      database,
      name,
      shownColumns,
      db.select(shownColumns).from(posts).where(where),
    );
  const publishedShownById = shownWhere(
    'posts_published_shown_by_id',
    and(eq(posts.id, sql.placeholder('id')), isPublished),
  );
  const userShownById = shownWhere(
    'posts_user_shown_by_id',
    and(eq(posts.id, sql.placeholder('id')), or(isPublished, eq(posts.authorId, sql.placeholder('userId')))),
  );
  const anyShownById = shownWhere('posts_any_shown_by_id', eq(posts.id, sql.placeholder('id')));
  /** The unfiltered feed of what `visible` lets a reader see: its first page, and a page before a cursor. */
  const feedOf = (name: string, visible: SQL | undefined) => {
    const page = (suffix: string, where: SQL | undefined) =>
      directStatement<PostSummary>(
        database,
        `posts_${name}_${suffix}`,
        summaryColumns,
        db
          .select(summaryColumns)
          .from(posts)
          .where(where)
          .orderBy(desc(posts.id))
          .limit(sql.placeholder('limit')),
      );
    return {
      first: page('feed', visible),
      before: page('feed_before', and(visible, lt(posts.id, sql.placeholder('cursor')))),
    };
  };
  const publishedFeed = feedOf('published', isPublished);
  // A signed-in reader's feed: published posts and their own.
  const userFeed = feedOf('user', or(isPublished, eq(posts.authorId, sql.placeholder('userId'))));
  // Written by Drizzle once and run by the driver, as the reads are; it returns only what the
  // create answers with (docs/performance.md, "The blog by hand").
  const insert = directStatement<CreatedRow>(
    database,
    'posts_create',
    createdColumns,
    db
      .insert(posts)
      .values({
        id: sql.placeholder('id'),
        authorId: sql.placeholder('authorId'),
        title: sql.placeholder('title'),
        content: sql.placeholder('content'),
        excerpt: sql.placeholder('excerpt'),
        status: sql.placeholder('status'),
      })
      .returning(createdColumns),
  );
  const repository: PostsRepository = {
    async create(input) {
      try {
        const [created] = await insert({
          id: newId(),
          authorId: input.authorId,
          title: input.title,
          content: input.content,
          excerpt: input.excerpt ?? deriveExcerpt(input.content),
          status: input.status ?? 'draft',
        });
        const { author_id: authorId, ...rest } = created as CreatedRow;
        return { ...rest, authorId };
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

    // The driver's promise, continued once: no async function's own promise per read, the most
    // frequent of the blog (docs/performance.md, "The blog by hand").
    findShownById(id, visibility) {
      switch (visibility.kind) {
        case 'anonymous':
          return publishedShownById({ id }).then(firstRow);
        case 'owner':
          return userShownById({ id, userId: visibility.userId }).then(firstRow);
        case 'admin':
          return anyShownById({ id }).then(firstRow);
      }
    },

    // paginateKeyset's own promise, not an async function's wrapping it.
    listCursor(params, visibility) {
      const { authorId } = params;
      const unfiltered = authorId === undefined && params.status === undefined;
      // Built only when used: the plain feed's prepared statements need none.
      const filters = () =>
        and(
          visibleTo(visibility),
          authorId === undefined ? undefined : eq(posts.authorId, authorId),
          params.status === undefined ? undefined : eq(posts.status, params.status),
        );
      return paginateKeyset(
        params,
        (query) => {
          if (unfiltered && query.towards === 'older') {
            const { cursor, limit } = query;
            if (visibility.kind === 'anonymous') {
              return cursor === undefined
                ? publishedFeed.first({ limit })
                : publishedFeed.before({ cursor, limit });
            }
            if (visibility.kind === 'owner') {
              const { userId } = visibility;
              return cursor === undefined
                ? userFeed.first({ userId, limit })
                : userFeed.before({ userId, cursor, limit });
            }
          }
          const keyset = keysetClauses(operators, posts.id, query);
          return db
            .select(summaryColumns)
            .from(posts)
            .where(and(filters(), keyset.where))
            .orderBy(keyset.orderBy)
            .limit(keyset.limit);
        },
        { key: 'id' },
      );
    },

    async update(id, patch, current, ifChanged = 'decide again') {
      if (current !== undefined && current.id === id) {
        const [updated] = await db
          .update(posts)
          .set({ ...changesOf(current, patch), updatedAt: sql`now()`, version: current.version + 1 })
          .where(and(eq(posts.id, id), eq(posts.version, current.version)))
          .returning();
        if (updated !== undefined) return updated;
        if (ifChanged === 'fail') return stillThere(id);
      }
      return db.transaction(async (tx) => {
        const [locked] = await tx.select().from(posts).where(eq(posts.id, id)).for('update');
        if (locked === undefined) return undefined;
        const [updated] = await tx
          .update(posts)
          .set({ ...changesOf(locked, patch), updatedAt: sql`now()`, version: locked.version + 1 })
          .where(eq(posts.id, id))
          .returning();
        return updated;
      });
    },

    async delete(id, version) {
      const deleted = await db
        .delete(posts)
        .where(and(eq(posts.id, id), version === undefined ? undefined : eq(posts.version, version)))
        .returning({ id: posts.id });
      if (deleted.length > 0) return true;
      if (version !== undefined) await stillThere(id);
      return false;
    },

    async idsByAuthor(authorId) {
      const rows = await db.select({ id: posts.id }).from(posts).where(eq(posts.authorId, authorId));
      return rows.map((row) => row.id);
    },

    async setStatus(id, status, version) {
      const allowedFrom = postStatuses.filter((from) => canTransition(from, status));
      // One conditional UPDATE: two concurrent moves cannot both pass the check.
      const [moved] = await db
        .update(posts)
        .set({ status, updatedAt: sql`now()`, version: sql`${posts.version} + 1` })
        .where(
          and(
            eq(posts.id, id),
            inArray(posts.status, allowedFrom),
            version === undefined ? undefined : eq(posts.version, version),
          ),
        )
        .returning();
      if (moved !== undefined) return moved;
      const [current] = await db
        .select({ status: posts.status, version: posts.version })
        .from(posts)
        .where(eq(posts.id, id));
      if (current === undefined) return undefined;
      if (version !== undefined && current.version !== version) throw new PreconditionFailedError();
      throw invalidTransition(current.status, status);
    },
  };

  /** After a write conditional on a version found nothing: 404 if the post is gone, else 412. */
  async function stillThere(id: string): Promise<undefined> {
    const [found] = await db.select({ id: posts.id }).from(posts).where(eq(posts.id, id));
    if (found === undefined) return undefined;
    throw new PreconditionFailedError();
  }
  return repository;
}
