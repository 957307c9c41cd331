/**
 * The data and requests of the "what users would pick instead" bench (bench/run.ts): the same
 * posts, user and create body for every contender, so that their answers can be compared byte for
 * byte before any timing.
 */
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

export const secret = 'a-benchmark-secret-of-at-least-32-bytes!';
export const userId = '0190a4f2-0000-7000-8000-000000000001';
export const users = new Map([[userId, { id: userId, role: 'user' as const, isActive: true }]]);

/** A UUIDv7-shaped key whose order is `n`'s: newest first means the highest `n` first. */
export const postId = (n: number) => `01950000-0000-7000-8000-${String(n).padStart(12, '0')}`;

/** 1,000 posts, newest first (descending ids), as a keyset listing reads them. */
export const posts: PostRow[] = Array.from({ length: 1000 }, (_, index) => {
  const n = 1000 - index;
  return {
    id: postId(n),
    title: `Post number ${n}`,
    excerpt: `What post ${n} is about, in a sentence.`,
    content: `The body of post ${n}. `.repeat(20),
    authorId: userId,
    status: 'published',
    passwordHash: 'scrypt$never$leaves',
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)),
  };
});
export const postsById = new Map(posts.map((post) => [post.id, post]));

/** Ids of created posts count up from here, so two servers answer their first create alike. */
export const firstCreatedId = 2_000_000;

export const getPath = `/api/posts/${postId(500)}`;
export const listPath = `/api/posts?limit=20&cursor=${postId(700)}`;
/** About 1 KB of JSON. */
export const createBody = JSON.stringify({
  title: 'Measured side by side',
  excerpt: 'Alternating rounds, medians and spread.',
  content: 'A paragraph long enough to make the body a kilobyte. '.repeat(17),
});
