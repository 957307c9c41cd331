/**
 * Guards: named checks on a call's context that run before its input is read, and what a guard
 * needs from the signed-in user (docs/auth.md, "Guards").
 */
import { optionKeys, refuseUnknownOptions } from './options.js';

type MaybePromise<T> = T | Promise<T>;

/**
 * A named check on the context. A failing guard answers 401 when no user is signed in and, when
 * one is, 403 naming the guard, unless it `failsWith: 'UNAUTHENTICATED'` (a guard that only asks
 * for a signed-in caller). The server and the OpenAPI generator both read `failsWith`.
 */
export interface Guard<TCtx = never> {
  readonly name: string;
  /** Guards run before input validation: they see the context, never the input. */
  check(ctx: TCtx): MaybePromise<boolean>;
  /** Passes only for a signed-in caller: ctx.user becomes non-optional after it. */
  readonly requiresUser?: boolean;
  /** What refusing a signed-in caller answers. Default `FORBIDDEN` (403). */
  readonly failsWith?: GuardFailure;
  /** The fields of `ctx.user` the check reads; a loaded user must have them. */
  readonly reads?: readonly string[];
  /** The roles it lets in, any one of them (`hasRole`, `admin`): OpenAPI names them. */
  readonly roles?: readonly string[];
}

/** `FORBIDDEN`: a signed-in caller it refuses gets 403. `UNAUTHENTICATED`: it only checks sign-in. */
export type GuardFailure = 'FORBIDDEN' | 'UNAUTHENTICATED';

interface GuardDefinition<TCtx> {
  name: string;
  check: (ctx: TCtx) => MaybePromise<boolean>;
  failsWith?: GuardFailure;
  requiresUser?: boolean;
  /**
   * The fields of `ctx.user` the check reads (`hasRole` reads `role`). A signed-in user without
   * one of them is the user loader's mistake: a 500 whose log line names the guard, the field and
   * the loader, rather than a 403 that blames the caller (docs/auth.md).
   */
  reads?: readonly UserField<TCtx>[];
  /**
   * The roles the check lets in, any one of them (`hasRole('editor', 'admin')`): the document
   * names them in the route's security requirement (docs/openapi.md, "Security"). Only a guard
   * that lets a user in by role says so: any other check is named in `x-proceed-guards` alone.
   */
  roles?: readonly string[];
}

/** The field names of a context's user; any string when the context declares no user type. */
export type UserField<TCtx> =
  unknown extends UserOf<TCtx> ? string : keyof NonNullable<UserOf<TCtx>> & string;

/** The user a context type carries (`unknown` when it declares none). */
export type UserOf<TCtx> = TCtx extends { user?: infer User } ? User : unknown;

const guardKeys = optionKeys<GuardDefinition<unknown>>()(
  'name',
  'check',
  'failsWith',
  'requiresUser',
  'reads',
  'roles',
);

/** A guard that passes only for a signed-in caller. */
export interface UserGuard<TCtx = never> extends Guard<TCtx> {
  readonly requiresUser: true;
}

/**
 * Defines a guard.
 *
 * @example
 * const editor = guard({ name: 'editor', requiresUser: true, check: (ctx: Ctx) => ctx.user?.role === 'editor' });
 */
export function guard<TCtx>(definition: GuardDefinition<TCtx> & { requiresUser: true }): UserGuard<TCtx>;
export function guard<TCtx>(definition: GuardDefinition<TCtx> & { requiresUser?: false }): Guard<TCtx>;
export function guard<TCtx>(definition: GuardDefinition<TCtx> & { requiresUser?: boolean }): Guard<TCtx> {
  refuseUnknownOptions(
    typeof definition?.name === 'string' ? `guard "${definition.name}"` : 'guard()',
    definition,
    guardKeys,
    { required: true },
  );
  if (
    definition.reads !== undefined &&
    (!Array.isArray(definition.reads) || definition.reads.some((field) => typeof field !== 'string'))
  )
    throw new TypeError(`guard "${definition.name}": reads is a list of user field names`);
  if (definition.name.trim() === '') throw new TypeError('A guard needs a name');
  if (
    definition.roles !== undefined &&
    (!Array.isArray(definition.roles) ||
      definition.roles.length === 0 ||
      definition.roles.some((role) => typeof role !== 'string' || role === ''))
  )
    throw new TypeError(`guard "${definition.name}": roles is a list of one role name or more`);
  if (definition.failsWith !== undefined && !['FORBIDDEN', 'UNAUTHENTICATED'].includes(definition.failsWith))
    throw new TypeError(`guard "${definition.name}": failsWith is FORBIDDEN or UNAUTHENTICATED`);
  return Object.freeze({ ...definition });
}

/**
 * The first field a guard `reads` that a signed-in user lacks: absent from the object, which is
 * the loader's mistake (a field that is `null` was loaded, and is the check's to judge).
 */
export function missingUserField(guard: Guard<never>, user: unknown): string | undefined {
  if (guard.reads === undefined || typeof user !== 'object' || user === null) return undefined;
  return guard.reads.find((field) => !(field in user));
}

/** Thrown by a guard (or a composite) that finds a field it reads missing from `ctx.user`. */
export class MissingUserFieldError extends Error {
  override readonly name = 'MissingUserFieldError';
  constructor(
    readonly guard: string,
    readonly field: string,
  ) {
    super(`Guard "${guard}" reads user.${field}, which the loaded user does not have`);
  }
}

/**
 * The roles that pass every one of `guards` that names roles: those in all their lists (a
 * caller has one role, which each must let in). Undefined when none names roles, or no role
 * passes them all.
 */
export function rolesPassingAll(guards: readonly Guard<never>[]): readonly string[] | undefined {
  let roles: string[] | undefined;
  for (const { roles: own } of guards)
    if (own !== undefined)
      roles = roles === undefined ? [...new Set(own)] : roles.filter((role) => own.includes(role));
  return roles === undefined || roles.length === 0 ? undefined : roles;
}

/** Whether a guard can refuse a signed-in caller with 403. */
export function canForbid(guard: Guard<never>): boolean {
  return guard.failsWith !== 'UNAUTHENTICATED';
}

/** The context after a user-requiring guard: `user` is present. */
export type WithUser<TCtx> = TCtx extends { user?: infer U }
  ? Omit<TCtx, 'user'> & { user: NonNullable<U> }
  : TCtx;

/** The context after a list of guards: with `user` when one of them requires it. */
export type AfterGuards<TCtx, G extends readonly Guard<never>[]> = [
  Extract<G[number], { requiresUser: true }>,
] extends [never]
  ? TCtx
  : WithUser<TCtx>;
