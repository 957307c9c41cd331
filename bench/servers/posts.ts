/**
 * The data and the data access of the "what users would pick instead" bench (bench/run.ts). Every
 * contender reads and writes through {@link postsData} and nothing else: no contender has a
 * search, a sort or a lookup of its own, so a difference in speed is the framework's, not the
 * algorithm's. The functions are asynchronous, as a database's are. With BENCH_DATA_TRACE naming
 * a file, each call appends its name there: the bench checks that before it times anything.
 */
import { appendFileSync } from 'node:fs';

export interface PostRow {
  id: string;
  title: string;
  excerpt: string;
  content: string;
  authorId: string;
  status: 'draft' | 'published' | 'archived';
  /** More than any view shows, as a database row has: it must never reach an answer. */
  passwordHash: string;
  createdAt: Date;
}

export interface UserRow {
  id: string;
  role: 'user';
  isActive: boolean;
}

export const secret = 'a-benchmark-secret-of-at-least-32-bytes!';
export const userId = '0190a4f2-0000-7000-8000-000000000001';

/** A UUIDv7-shaped key whose order is `n`'s: newest first means the highest `n` first. */
export const postId = (n: number) => `01950000-0000-7000-8000-${String(n).padStart(12, '0')}`;

/**
 * 10,000 posts of about a kilobyte each, newest first (descending ids), as a keyset listing reads
 * them: a heap the size of a small app's working set, which every collection of the garbage
 * collector's old generation walks.
 */
const count = Number(process.env.BENCH_POSTS ?? 10_000);
const posts: PostRow[] = Array.from({ length: count }, (_, index) => {
  const n = count - index;
  return {
    id: postId(n),
    title: `Post number ${n}`,
    excerpt: `What post ${n} is about, in a sentence.`,
    content: `The body of post ${n}. `.repeat(42),
    authorId: userId,
    status: 'published',
    passwordHash: 'scrypt$never$leaves',
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)),
  };
});
const postsById = new Map(posts.map((post) => [post.id, post]));
const users = new Map<string, UserRow>([[userId, { id: userId, role: 'user', isActive: true }]]);

/** Ids of created posts count up from here, so two servers answer their first create alike. */
let nextCreated = 2_000_000;

/** The index of the first post older than `cursor` (ids descend): a bisection. */
function firstOlderThan(cursor: string): number {
  let low = 0;
  let high = posts.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((posts[middle] as PostRow).id < cursor) high = middle;
    else low = middle + 1;
  }
  return low;
}

const trace = process.env.BENCH_DATA_TRACE;
const traced = (name: string) => {
  if (trace !== undefined) appendFileSync(trace, `${name}\n`);
};

/** What a keyset read asks for: the shape of `KeysetQuery` in `proceedjs/pagination`. */
export interface KeysetRead {
  cursor: string | undefined;
  towards: 'older' | 'newer';
  limit: number;
}

export const postsData = {
  /** The post with this id. */
  async findPost(id: string): Promise<PostRow | undefined> {
    traced('findPost');
    return postsById.get(id);
  },
  /**
   * Posts older than `cursor` newest first, or newer than it oldest first, at most `limit`: what
   * `WHERE id < $1 ORDER BY id DESC LIMIT $2` reads from an index.
   */
  async readKeyset({ cursor, towards, limit }: KeysetRead): Promise<PostRow[]> {
    traced('readKeyset');
    if (towards === 'older') {
      const start = cursor === undefined ? 0 : firstOlderThan(cursor);
      return posts.slice(start, start + limit);
    }
    const end =
      cursor === undefined ? posts.length : firstOlderThan(cursor) - (postsById.has(cursor) ? 1 : 0);
    return posts.slice(Math.max(0, end - limit), end).reverse();
  },
  /** The user with this id. */
  async findUser(id: string): Promise<UserRow | undefined> {
    traced('findUser');
    return users.get(id);
  },
  /** Stores a new post and returns its row. */
  async insertPost(fields: Pick<PostRow, 'title' | 'excerpt' | 'content' | 'authorId'>): Promise<PostRow> {
    traced('insertPost');
    return {
      id: postId(nextCreated++),
      ...fields,
      status: 'draft',
      passwordHash: '',
      createdAt: new Date(0),
    };
  },
};

/** The data calls each scenario must make, in order: what the bench checks before timing. */
export const expectedCalls = {
  get: ['findPost'],
  list: ['readKeyset'],
  create: ['findUser', 'insertPost'],
} as const;

export const getPath = `/api/posts/${postId(500)}`;
export const listPath = `/api/posts?limit=20&cursor=${postId(700)}`;
/** About 1 KB of JSON. */
export const createBody = JSON.stringify({
  title: 'Measured side by side',
  excerpt: 'Alternating rounds, medians and spread.',
  content: 'A paragraph long enough to make the body a kilobyte. '.repeat(17),
});
