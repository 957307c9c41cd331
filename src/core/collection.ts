/** Collections: procedures grouped under a resource name, which names their routes (docs/procedures.md). */
import type { AnyProcedure } from './procedure-types.js';

/** A named group of procedures; the name is the resource's path segment. */
export interface Collection<
  N extends string = string,
  R extends Record<string, AnyProcedure> = Record<string, AnyProcedure>,
> {
  readonly name: N;
  readonly procedures: R;
}

/**
 * Groups procedures under a resource name.
 *
 * @example
 * export const posts = procedures('posts', { listPosts, getPost, createPost, updatePost, deletePost });
 */
export function procedures<N extends string, R extends Record<string, AnyProcedure>>(
  name: N,
  record: R,
): Collection<N, R> {
  for (const [key, value] of Object.entries(record)) {
    if (typeof value !== 'object' || value === null || !('~proceed' in value)) {
      throw new TypeError(
        `procedures('${name}'): "${key}" is not a procedure (finish it with .query() or .mutation())`,
      );
    }
  }
  return Object.freeze({ name, procedures: record });
}
