/**
 * Ready-made guards and guard composition. A guard's name is what a 403 answer names
 * (`Guard "admin" denied access`), so composites get names that say what they require.
 */
import {
  canForbid,
  type Guard,
  guard,
  MissingUserFieldError,
  missingUserField,
  rolesPassingAll,
  type UserGuard,
} from '../core/guards.js';

/** The context the role guards read: a user with a role. */
export interface RoleContext {
  user?: { role?: string | undefined } | null | undefined;
}

/**
 * Passes when a user is signed in (the auth plugin set `ctx.user`). After it, `ctx.user` is
 * non-optional in the handler's type.
 *
 * @example
 * const createPost = procedure<Ctx>().guard(authenticated).mutation(({ ctx }) => ctx.user.id);
 */
export const authenticated: UserGuard<{ user?: unknown }> = guard({
  name: 'authenticated',
  requiresUser: true,
  failsWith: 'UNAUTHENTICATED',
  check: (ctx: { user?: unknown }) => ctx.user !== undefined && ctx.user !== null,
});

function roleGuard(name: string, roles: readonly string[]): UserGuard<RoleContext> {
  if (roles.length === 0) throw new TypeError('hasRole() needs at least one role');
  const allowed = new Set(roles);
  return guard({
    name,
    requiresUser: true,
    reads: ['role'],
    roles,
    check: (ctx: RoleContext) => {
      const role = ctx.user?.role;
      return typeof role === 'string' && allowed.has(role);
    },
  });
}

/**
 * Passes when the signed-in user's `role` is one of `roles`. Named `role:a|b`. The user loader
 * must return `role` (docs/auth.md: a role change applies at the next request).
 *
 * @example
 * const publish = procedure<Ctx>().guard(hasRole('editor', 'admin')).mutation(...);
 * // 403: Guard "role:editor|admin" denied access
 */
export function hasRole(...roles: string[]): UserGuard<RoleContext> {
  return roleGuard(`role:${roles.join('|')}`, roles);
}

/**
 * Passes when the signed-in user's role is `admin`. Named `admin`.
 *
 * @example
 * const deleteUser = procedure<Ctx>().guard(admin).mutation(...);
 */
export const admin: UserGuard<RoleContext> = roleGuard('admin', ['admin']);

type ContextOf<G> = G extends Guard<infer C> ? C : never;
type Intersection<U> = (U extends unknown ? (value: U) => void : never) extends (value: infer I) => void
  ? I
  : never;
/** The context a composite needs: what every member needs. */
type ComposedContext<G extends readonly Guard<never>[]> = Intersection<ContextOf<G[number]>>;

type AllOf<G extends readonly Guard<never>[]> = [Extract<G[number], { requiresUser: true }>] extends [never]
  ? Guard<ComposedContext<G>>
  : UserGuard<ComposedContext<G>>;

type AnyOf<G extends readonly Guard<never>[]> = [Exclude<G[number], { requiresUser: true }>] extends [never]
  ? UserGuard<ComposedContext<G>>
  : Guard<ComposedContext<G>>;

function nameOf(guards: readonly Guard<never>[], joiner: string): string {
  if (guards.length === 0) throw new TypeError('A composite guard needs at least one guard');
  return guards
    .map((member) => (/ (and|or) /.test(member.name) ? `(${member.name})` : member.name))
    .join(joiner);
}

function compose(
  name: string,
  members: readonly Guard<never>[],
  requiresUser: boolean,
  check: (ctx: never) => Promise<boolean>,
  hoistReads: boolean,
): Guard<never> {
  // Refuses a signed-in caller with 403 when any member can.
  const failsWith = members.some(canForbid) ? 'FORBIDDEN' : 'UNAUTHENTICATED';
  const reads = hoistReads ? [...new Set(members.flatMap((member) => member.reads ?? []))] : [];
  // Of all: the roles every member lets in. Of any: each member's, when every member names some
  // (one that names none lets a caller in whatever the role).
  const roles = hoistReads
    ? rolesPassingAll(members)
    : members.every((member) => member.roles !== undefined)
      ? [...new Set(members.flatMap((member) => member.roles ?? []))]
      : undefined;
  const declared = { ...(reads.length > 0 ? { reads } : {}), ...(roles === undefined ? {} : { roles }) };
  return requiresUser
    ? guard({ name, requiresUser: true, failsWith, check, ...declared })
    : guard({ name, failsWith, check, ...declared });
}

/**
 * Passes when every guard passes (checked in order, stopping at the first failure). Named
 * `a and b`. Requires a user when any member does.
 *
 * @example
 * const moderate = allOf(authenticated, hasRole('moderator')); // "authenticated and role:moderator"
 */
export function allOf<const G extends readonly Guard<never>[]>(...guards: G): AllOf<G> {
  const name = nameOf(guards, ' and ');
  const requiresUser = guards.some((member) => member.requiresUser === true);
  // Every member must pass, so every field any member reads must be there.
  return compose(
    name,
    guards,
    requiresUser,
    async (ctx) => {
      for (const member of guards) if (!(await member.check(ctx))) return false;
      return true;
    },
    true,
  ) as AllOf<G>;
}

/**
 * Passes when at least one guard passes (checked in order, stopping at the first success). Named
 * `a or b`. Requires a user only when every member does.
 *
 * @example
 * const authorOrAdmin = anyOf(isAuthor, admin); // 403: Guard "author or admin" denied access
 */
export function anyOf<const G extends readonly Guard<never>[]>(...guards: G): AnyOf<G> {
  const name = nameOf(guards, ' or ');
  const requiresUser = guards.every((member) => member.requiresUser === true);
  // One member passing is enough: a member whose fields are missing is skipped, and only when no
  // other member passes is that the loader's mistake (a 500 naming the member).
  return compose(
    name,
    guards,
    requiresUser,
    async (ctx) => {
      let skipped: MissingUserFieldError | undefined;
      for (const member of guards) {
        const missing = missingUserField(member, (ctx as { user?: unknown }).user);
        if (missing !== undefined) skipped ??= new MissingUserFieldError(member.name, missing);
        else if (await member.check(ctx)) return true;
      }
      if (skipped !== undefined) throw skipped;
      return false;
    },
    false,
  ) as AnyOf<G>;
}
