/**
 * The blog's size limits (docs/blog.md): the inputs accept no more, so the views say so too, as
 * what the blog stores went through those inputs (or settings.ts, for the admin it creates). A
 * module of its own: settings.ts reads it before anything heavy loads.
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
