/**
 * Resources and their views (docs/views.md). A resource declares each field at one of
 * three cumulative levels; each level yields a view, a Zod object that holds exactly the fields
 * of that level and below. Outputs declared with a view are serialized by a compiled serializer
 * that writes only declared fields, so nothing undeclared can reach the wire.
 *
 * @module proceed/resource
 */
import { z } from 'zod';

/** Visibility levels, lowest first: each includes the ones before it. */
export const levels = ['public', 'authenticated', 'admin'] as const;
export type Level = (typeof levels)[number];

type Shape = z.ZodRawShape;

export interface ResourceFields<P extends Shape, A extends Shape, D extends Shape> {
  public: P;
  authenticated?: A;
  admin?: D;
}

export interface Resource<N extends string, P extends Shape, A extends Shape, D extends Shape> {
  readonly name: N;
  /** The public view: `public` fields. */
  readonly public: z.ZodObject<P>;
  /** The authenticated view: `public` and `authenticated` fields. */
  readonly authenticated: z.ZodObject<P & A>;
  /** The admin view: every field. */
  readonly admin: z.ZodObject<P & A & D>;
  /** The view of a level. */
  view(level: Level): z.ZodObject<P> | z.ZodObject<P & A> | z.ZodObject<P & A & D>;
  /** The level each field is declared at. */
  readonly fieldLevels: Readonly<Record<string, Level>>;
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * Declares a resource. Each view is registered under `{Name}{Level}` (e.g. `PostPublic`), the
 * name of its OpenAPI component.
 *
 * @example
 * const Post = resource('Post', {
 *   public: { id: z.uuid(), title: z.string() },
 *   authenticated: { content: z.string() },
 *   admin: { createdAt: z.date() },
 * });
 * procedure().output(Post.public).query(() => loadPost());
 */
export function resource<
  N extends string,
  P extends Shape,
  A extends Shape = Record<never, never>,
  D extends Shape = Record<never, never>,
>(name: N, fields: ResourceFields<P, A, D>): Resource<N, P, A, D> {
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
  const base = capitalize(name);
  const publicShape = fields.public;
  const authenticatedShape = { ...publicShape, ...fields.authenticated } as P & A;
  const adminShape = { ...authenticatedShape, ...fields.admin } as P & A & D;
  const views = {
    public: z.object(publicShape).meta({ id: `${base}Public` }),
    authenticated: z.object(authenticatedShape).meta({ id: `${base}Authenticated` }),
    admin: z.object(adminShape).meta({ id: `${base}Admin` }),
  };
  return {
    name,
    ...views,
    view: (level) => views[level],
    fieldLevels,
  };
}

/** Whether a caller at `caller` may see a field declared at `field`. */
export function levelIncludes(caller: Level, field: Level): boolean {
  return levels.indexOf(caller) >= levels.indexOf(field);
}
