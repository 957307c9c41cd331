/**
 * Resources and their views (docs/views.md). A resource declares each field at one of four
 * cumulative levels; each level yields a view, a Zod object that holds exactly the fields
 * of that level and below. Outputs declared with a view are serialized by a compiled serializer
 * that writes only declared fields, so nothing undeclared can reach the wire. A resource that
 * says who owns a record also has a view chosen per record (`perRecord`).
 *
 * @module proceed/resource
 */
import { z } from 'zod';
import { ForbiddenError, NotFoundError, ValidationError } from '../core/errors.js';
import { closestName, refuseUnknownOptions } from '../core/options.js';
import { recordViewSchema } from '../core/record-views.js';
import type { StandardSchemaV1 } from '../core/schema.js';
import { type Step, step } from '../core/steps.js';

/** Visibility levels, lowest first: each includes the ones before it. */
export const levels = ['public', 'authenticated', 'owner', 'admin'] as const;
export type Level = (typeof levels)[number];

type Shape = z.ZodRawShape;

export interface ResourceFields<P extends Shape, A extends Shape, O extends Shape, D extends Shape> {
  public: P;
  authenticated?: A;
  /** Shown to the record's owner (as `owner` in the options says) and to admins. */
  owner?: O;
  admin?: D;
}

/**
 * Who sees which view of a record, for {@link Resource.perRecord}: admins the admin view, the
 * record's owner the owner view, other signed-in callers (`ctx.user` set) the authenticated
 * view, everyone else the public view.
 */
export interface ResourceOptions<R, C> {
  /**
   * Who owns a record: the name of the field that holds its owner's user id (`'authorId'`: the
   * caller owns the records whose field equals `ctx.user.id`, and {@link Resource.scopeOf} gives
   * lists the same rule), or a function of the record as the handler returned it (every column).
   */
  owner?: ((record: R, ctx: C) => boolean) | (keyof R & string);
  /** Whether the caller sees every field of every record. Default: nobody. */
  admin?: (ctx: C) => boolean;
}

export interface Resource<
  N extends string,
  P extends Shape,
  A extends Shape,
  O extends Shape,
  D extends Shape,
  R = Record<string, unknown>,
  C = unknown,
> {
  readonly name: N;
  /** The public view: `public` fields. */
  readonly public: z.ZodObject<P>;
  /** The authenticated view: `public` and `authenticated` fields. */
  readonly authenticated: z.ZodObject<P & A>;
  /** The owner's view: the authenticated view and `owner` fields. */
  readonly owner: z.ZodObject<P & A & O>;
  /** The admin view: every field. */
  readonly admin: z.ZodObject<P & A & O & D>;
  /**
   * Each record in the view its caller may see of it (see {@link ResourceOptions}), chosen per
   * record: at the top of an output, in an object's field or in an array, so per item in lists
   * (`cursorPage(Note.perRecord)`). OpenAPI documents it as `anyOf` the views; the typed client
   * types it as their union.
   */
  readonly perRecord: z.ZodType<
    | z.output<z.ZodObject<P>>
    | z.output<z.ZodObject<P & A>>
    | z.output<z.ZodObject<P & A & O>>
    | z.output<z.ZodObject<P & A & O & D>>,
    | z.input<z.ZodObject<P>>
    | z.input<z.ZodObject<P & A>>
    | z.input<z.ZodObject<P & A & O>>
    | z.input<z.ZodObject<P & A & O & D>>
  >;
  /** The view of a level. */
  view(
    level: Level,
  ): z.ZodObject<P> | z.ZodObject<P & A> | z.ZodObject<P & A & O> | z.ZodObject<P & A & O & D>;
  /** The level each field is declared at. */
  readonly fieldLevels: Readonly<Record<string, Level>>;
  /** The level `ctx`'s caller sees `record` at, as {@link Resource.perRecord} chooses it. */
  levelOf(record: R, ctx: C): Level;
  /** The field that holds a record's owner, when `owner` named one. */
  readonly ownerField: (keyof R & string) | undefined;
  /**
   * Which records the caller owns, for a list's query: all of them (an admin), those whose owner
   * field is `userId` (a signed-in caller), or none (anonymous). Filter with the column of
   * {@link Resource.ownerField}, and a list and `levelOf` cannot disagree (docs/views.md,
   * "Ownership").
   */
  scopeOf(ctx: C): OwnerScope;
}

/** What {@link Resource.scopeOf} answers. */
export type OwnerScope = { kind: 'admin' } | { kind: 'owner'; userId: string } | { kind: 'anonymous' };

const userIdOf = (ctx: unknown): string | undefined => {
  const user = typeof ctx === 'object' && ctx !== null ? (ctx as { user?: unknown }).user : undefined;
  const id = typeof user === 'object' && user !== null ? (user as { id?: unknown }).id : undefined;
  return typeof id === 'string' ? id : undefined;
};

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

const signedIn = (ctx: unknown) =>
  typeof ctx === 'object' && ctx !== null && (ctx as { user?: unknown }).user !== undefined;

/**
 * Declares a resource. Each view is registered under `{Name}{Level}` (e.g. `PostPublic`), the
 * name of its OpenAPI component.
 *
 * @example
 * const Post = resource('Post', {
 *   public: { id: z.uuid(), title: z.string() },
 *   authenticated: { content: z.string() },
 *   owner: { notes: z.string() },
 *   admin: { createdAt: z.date() },
 * }, {
 *   owner: (post: PostRow, ctx: Ctx) => post.authorId === ctx.user?.id,
 *   admin: (ctx: Ctx) => ctx.user?.role === 'admin',
 * });
 * procedure().output(Post.public).query(() => loadPost());
 * procedure<Ctx>().output(cursorPage(Post.perRecord)).query(listPosts); // each post in its caller's view
 */
export function resource<
  N extends string,
  P extends Shape,
  A extends Shape = Record<never, never>,
  O extends Shape = Record<never, never>,
  D extends Shape = Record<never, never>,
  R = Record<string, unknown>,
  C = unknown,
>(
  name: N,
  fields: ResourceFields<P, A, O, D>,
  options: ResourceOptions<R, C> = {},
): Resource<N, P, A, O, D, R, C> {
  // A level of another name (`moderator`, `admn`) was no view at all, and its fields in none.
  for (const key of Object.keys(fields)) {
    if ((levels as readonly string[]).includes(key)) continue;
    const meant = closestName(key, levels);
    throw new TypeError(
      `Resource ${name}: "${key}" is no view level${meant === undefined ? '' : ` (did you mean "${meant}"?)`}: the levels are ${levels.join(', ')}, each seeing the fields of those before it (docs/views.md)`,
    );
  }
  refuseUnknownOptions(`resource('${name}')`, options, ['owner', 'admin']);
  const fieldLevels: Record<string, Level> = {};
  for (const level of levels) {
    for (const key of Object.keys(fields[level] ?? {})) {
      if (fieldLevels[key] !== undefined) {
        throw new TypeError(
          `Resource ${name}: field "${key}" is declared at both ${fieldLevels[key]} and ${level}`,
        );
      }
      fieldLevels[key] = level;
    }
  }
  const ownerFields = Object.keys(fields.owner ?? {});
  if (ownerFields.length > 0 && options.owner === undefined)
    throw new TypeError(
      `Resource ${name}: owner fields (${ownerFields.join(', ')}) need an owner: resource(name, fields, { owner: (record, ctx) => … })`,
    );
  const base = capitalize(name);
  const publicShape = fields.public;
  const authenticatedShape = { ...publicShape, ...fields.authenticated } as P & A;
  const ownerShape = { ...authenticatedShape, ...fields.owner } as P & A & O;
  const adminShape = { ...ownerShape, ...fields.admin } as P & A & O & D;
  const views = {
    public: z.object(publicShape).meta({ id: `${base}Public` }),
    authenticated: z.object(authenticatedShape).meta({ id: `${base}Authenticated` }),
    owner: z.object(ownerShape).meta({ id: `${base}Owner` }),
    admin: z.object(adminShape).meta({ id: `${base}Admin` }),
  };
  const { admin } = options;
  const ownerField = typeof options.owner === 'string' ? options.owner : undefined;
  if (options.owner !== undefined && ownerField === undefined && typeof options.owner !== 'function')
    throw new TypeError(
      `Resource ${name}: owner must be a field name or a function (record, ctx) => boolean`,
    );
  const owner =
    ownerField === undefined
      ? (options.owner as ((record: R, ctx: C) => boolean) | undefined)
      : (record: R, ctx: C) => {
          const userId = userIdOf(ctx);
          return userId !== undefined && (record as Record<string, unknown>)[ownerField] === userId;
        };
  const levelOf = (record: R, ctx: C): Level => {
    if (admin?.(ctx) === true) return 'admin';
    if (owner?.(record, ctx) === true) return 'owner';
    return signedIn(ctx) ? 'authenticated' : 'public';
  };
  // A level that adds no field shows what the level below it shows: one view for both.
  const distinct = levels.filter(
    (level) => level === 'public' || Object.keys(fields[level] ?? {}).length > 0,
  );
  const shownAt = (level: Level): Level =>
    distinct.filter((candidate) => levelIncludes(level, candidate)).at(-1) ?? 'public';
  let perRecord: Resource<N, P, A, O, D, R, C>['perRecord'] | undefined;
  return {
    name,
    ...views,
    // Built on first use: most resources never choose per record.
    get perRecord() {
      perRecord ??= recordViewSchema(
        distinct.map((level) => ({ name: level, schema: views[level] })) as never,
        (record, ctx) => shownAt(levelOf(record as R, ctx as C)),
      ) as never;
      return perRecord as Resource<N, P, A, O, D, R, C>['perRecord'];
    },
    view: (level) => views[level],
    fieldLevels,
    levelOf,
    ownerField,
    scopeOf: (ctx) => {
      if (admin?.(ctx) === true) return { kind: 'admin' };
      const userId = userIdOf(ctx);
      return userId === undefined ? { kind: 'anonymous' } : { kind: 'owner', userId };
    },
  };
}

/** Whether a caller at `caller` may see a field declared at `field`. */
export function levelIncludes(caller: Level, field: Level): boolean {
  return levels.indexOf(caller) >= levels.indexOf(field);
}

// The ownership step (docs/views.md, "Ownership"): loads the record a path names and lets on
// only its owner and admins, as the resource's `owner` and `admin` rules say.

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
    documents: {
      problems: ['VALIDATION_FAILED', 'NOT_FOUND', 'FORBIDDEN'],
      pathParams: [param],
      pathParamSchemas: { [param]: schema },
    },
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
