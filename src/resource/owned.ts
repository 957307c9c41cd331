/**
 * The ownership step (docs/views.md, "Ownership"): loads the record a path names and lets on
 * only its owner and admins, as the resource's `owner` and `admin` rules say.
 */
import { z } from 'zod';
import { ForbiddenError, NotFoundError, ValidationError } from '../core/errors.js';
import type { StandardSchemaV1 } from '../core/schema.js';
import { type Step, step } from '../core/steps.js';
import type { Resource } from './index.js';

type MaybePromise<T> = T | Promise<T>;

export interface OwnedOptions<As extends string, Id> {
  /** The context key the record is put under. Default: the resource's name, first letter lowercased (`post`). */
  as?: As;
  /** The path parameter that names the record. Default `id`. */
  param?: string;
  /** Checks the parameter (a 400 naming it otherwise). Default a UUID. */
  id?: StandardSchemaV1<string, Id>;
  /** The name the 403 gives (`Guard "owner or admin" denied access`). Default `owner or admin`. */
  name?: string;
}

// biome-ignore lint/suspicious/noExplicitAny: a resource of any fields
type AnyResource<N extends string, R, C> = Resource<N, any, any, any, any, R, C>;

/**
 * A step that loads the record the path names and lets on only its owner and admins. `find`
 * answers the record only if the caller may see it at all (the same rule a list filters with):
 * a record it does not answer is a 404 (so a hidden record stays hidden), one the caller may see
 * but does not own is a 403. The path parameter is checked first (400), and the step reads no
 * body: put it before `.input()` and an upload is not read for anyone else. The handler finds the
 * record on `ctx.post` (the `as` option).
 *
 * @example
 * const ownedPost = owned(Post, (ctx: Ctx, id) => ctx.repos.posts.findById(id, Post.scopeOf(ctx)));
 * updatePost: p().guard(authenticated).use(ownedPost).input(…).mutation(({ ctx }) => save(ctx.post))
 */
export function owned<
  N extends string,
  R,
  RC,
  C extends RC,
  T extends R,
  Id = string,
  const As extends string = Uncapitalize<N>,
>(
  resource: AnyResource<N, R, RC>,
  find: (ctx: C, id: Id) => MaybePromise<T | undefined>,
  options: OwnedOptions<As, Id> = {},
): Step<C, { [K in As]: NonNullable<T> }> {
  const as = options.as ?? (`${resource.name.charAt(0).toLowerCase()}${resource.name.slice(1)}` as As);
  const param = options.param ?? 'id';
  const schema = (options.id ?? z.uuid()) as StandardSchemaV1<string, Id>;
  const name = options.name ?? 'owner or admin';
  const missing = `No ${resource.name.toLowerCase()} with this id`;
  return step<C, { [K in As]: NonNullable<T> }>({
    name,
    documents: { problems: ['VALIDATION_FAILED', 'NOT_FOUND', 'FORBIDDEN'] },
    run: async ({ ctx, next }) => {
      const raw = (ctx as { request: { params: Readonly<Record<string, string>> } }).request.params[param];
      let checked = schema['~standard'].validate(raw ?? '');
      if (checked instanceof Promise) checked = await checked;
      if (checked.issues !== undefined)
        throw new ValidationError(checked.issues.map((issue) => ({ path: param, message: issue.message })));
      const record = await find(ctx, checked.value);
      if (record === undefined || record === null) throw new NotFoundError(missing);
      const level = resource.levelOf(record, ctx);
      if (level !== 'owner' && level !== 'admin') throw new ForbiddenError(`Guard "${name}" denied access`);
      return next({ [as]: record } as { [K in As]: NonNullable<T> });
    },
  });
}
