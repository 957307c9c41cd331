import { describe, expectTypeOf, it } from 'vitest';
import { guard } from '../core/guards.js';
import { procedure } from '../core/procedure.js';
import { admin, allOf, anyOf, authenticated, hasRole } from './guards.js';
import type { AuthContext, AuthState } from './plugin.js';

interface User {
  id: string;
  role: 'admin' | 'user';
  isActive: boolean;
}
interface Ctx extends AuthContext<User> {
  db: { ping(): void };
}

const p = () => procedure<Ctx>();
const published = guard({ name: 'published', check: (_ctx: Ctx) => true });

describe('guards narrow ctx.user', () => {
  it('leaves ctx.user optional without a guard', () => {
    p().query(({ ctx }) => {
      expectTypeOf(ctx.user).toEqualTypeOf<User | undefined>();
      expectTypeOf(ctx.auth).toEqualTypeOf<AuthState | undefined>();
      // @ts-expect-error ctx.user may be undefined
      ctx.user.id;
    });
  });

  it('makes ctx.user non-optional after authenticated', () => {
    p()
      .guard(authenticated)
      .query(({ ctx }) => {
        expectTypeOf(ctx.user).toEqualTypeOf<User>();
        expectTypeOf(ctx.db).toEqualTypeOf<{ ping(): void }>();
      });
  });

  it('makes ctx.user non-optional after admin and hasRole', () => {
    p()
      .guard(admin)
      .query(({ ctx }) => expectTypeOf(ctx.user).toEqualTypeOf<User>());
    p()
      .guard(hasRole('user', 'admin'))
      .query(({ ctx }) => expectTypeOf(ctx.user).toEqualTypeOf<User>());
  });

  it('follows the composites: allOf with one user guard, anyOf only when all require one', () => {
    p()
      .guard(allOf(published, admin))
      .query(({ ctx }) => expectTypeOf(ctx.user).toEqualTypeOf<User>());
    p()
      .guard(anyOf(admin, hasRole('user')))
      .query(({ ctx }) => expectTypeOf(ctx.user).toEqualTypeOf<User>());
    p()
      .guard(anyOf(published, admin))
      .query(({ ctx }) => expectTypeOf(ctx.user).toEqualTypeOf<User | undefined>());
  });
});
