import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { resource } from '../resource/index.js';
import { guard } from './guards.js';
import { procedure } from './procedure.js';
import type { BaseContext } from './request-context.js';
import { type MiddlewareNext, rateLimit, step } from './steps.js';

interface User {
  id: string;
  role: 'admin' | 'user';
}
interface Ctx {
  db: { name: string };
  user?: User;
}

const signedIn = guard({ name: 'signedIn', requiresUser: true, check: (ctx: Ctx) => ctx.user !== undefined });
const open = guard({ name: 'open', check: () => true });

const Post = resource('Post', {
  public: { id: z.string(), title: z.string() },
  admin: { createdAt: z.date() },
});

describe('procedure inference', () => {
  it('infers input from the schema, after transforms and defaults', () => {
    procedure<Ctx>()
      .input(z.object({ limit: z.number().default(20), q: z.string().transform((q) => q.length) }))
      .query(({ input }) => {
        expectTypeOf(input).toEqualTypeOf<{ limit: number; q: number }>();
        return null;
      });
  });

  it('keeps the client input type (before defaults and transforms)', () => {
    const listed = procedure<Ctx>()
      .input(z.object({ limit: z.number().default(20) }))
      .query(() => null);
    expectTypeOf<NonNullable<(typeof listed)['~types']>['clientInput']>().toEqualTypeOf<{
      limit?: number | undefined;
    }>();
  });

  it('gives handlers the app context with the request', () => {
    procedure<Ctx>().query(({ ctx }) => {
      expectTypeOf(ctx.db).toEqualTypeOf<{ name: string }>();
      expectTypeOf(ctx.request).toEqualTypeOf<BaseContext['request']>();
      expectTypeOf(ctx.user).toEqualTypeOf<User | undefined>();
      return null;
    });
  });

  it('makes ctx.user non-optional after a user guard, not after another guard', () => {
    procedure<Ctx>()
      .guard(signedIn)
      .query(({ ctx }) => {
        expectTypeOf(ctx.user).toEqualTypeOf<User>();
        return null;
      });
    procedure<Ctx>()
      .guard(open)
      .query(({ ctx }) => {
        expectTypeOf(ctx.user).toEqualTypeOf<User | undefined>();
        return null;
      });
  });

  it('adds what a middleware passes to next()', () => {
    procedure<Ctx>()
      .use(async ({ next }) => next({ started: 1 }))
      .query(({ ctx }) => {
        expectTypeOf(ctx.started).toEqualTypeOf<number>();
        return null;
      });
  });

  it('checks the handler result against the declared output', () => {
    procedure<Ctx>()
      .output(Post.admin)
      .query(() => ({ id: '1', title: 't', createdAt: new Date() }));
    procedure<Ctx>()
      .output(Post.admin)
      // @ts-expect-error createdAt is missing
      .query(() => ({ id: '1', title: 't' }));
    const inferred = procedure<Ctx>().query(() => ({ n: 1 }));
    expectTypeOf<NonNullable<(typeof inferred)['~types']>['output']>().toEqualTypeOf<{ n: number }>();
  });

  it('lets the output be chosen per request from keys of the choices', () => {
    procedure<Ctx>()
      .output({ public: Post.public, admin: Post.admin }, (ctx) =>
        ctx.user?.role === 'admin' ? 'admin' : 'public',
      )
      .query(() => ({ id: '1', title: 't', createdAt: new Date() }));
    procedure<Ctx>()
      // @ts-expect-error 'secret' is not one of the choices
      .output({ public: Post.public }, () => 'secret')
      .query(() => ({ id: '1', title: 't' }));
  });

  it('refuses a guard written for another context', () => {
    const other = guard({ name: 'other', check: (ctx: { tenant: string }) => ctx.tenant === 'x' });
    // @ts-expect-error Ctx has no tenant
    procedure<Ctx>().guard(other);
  });
});

describe('middleware and steps', () => {
  it('gives a middleware placed after .input() the validated input, and nothing before', () => {
    procedure<Ctx>()
      .use(async ({ input, next }) => {
        expectTypeOf(input).toEqualTypeOf<undefined>();
        return next();
      })
      .input(z.object({ id: z.uuid(), n: z.coerce.number() }))
      .use(async ({ input, next }) => {
        expectTypeOf(input).toEqualTypeOf<{ id: string; n: number }>();
        return next({ loaded: { id: input.id } });
      })
      .query(({ ctx }) => {
        expectTypeOf(ctx.loaded).toEqualTypeOf<{ id: string }>();
        return null;
      });
  });

  it('flows what a step adds into the handler’s context', () => {
    const tenant = step({
      name: 'tenant',
      documents: { problems: ['NOT_FOUND'] },
      run: async ({ next }: { ctx: Ctx; input: unknown; next: MiddlewareNext }) => next({ tenant: 'acme' }),
    });
    procedure<Ctx>()
      .use(tenant)
      .use(rateLimit({ name: 'reads', max: 5 }))
      .query(({ ctx }) => {
        expectTypeOf(ctx.tenant).toEqualTypeOf<string>();
        return null;
      });
  });

  it('gives a versioned procedure ctx.precondition and holds its handler to what read takes', () => {
    type Row = { id: string; title: string; version: number };
    const row: Row = { id: 'a', title: 't', version: 1 };
    procedure<Ctx>()
      .output(Post.public)
      .versioned((post: Row) => post.version)
      .mutation(({ ctx }) => {
        expectTypeOf(ctx.precondition.check).parameter(0).toEqualTypeOf<string | number>();
        expectTypeOf(ctx.precondition.sent).toEqualTypeOf<boolean>();
        return row;
      });
    procedure<Ctx>()
      .versioned((post: Row) => post.version)
      // @ts-expect-error: the result has no version for read to take
      .query(() => ({ id: 'a', title: 't' }));
    // @ts-expect-error: no precondition without .versioned()
    procedure<Ctx>().mutation(({ ctx }) => ctx.precondition);
  });
});

describe('response control', () => {
  it('gives handlers `response` to set headers and cookies, with typed options', () => {
    procedure().mutation(({ response }) => {
      expectTypeOf(response.header('x-note', 'yes')).toEqualTypeOf<typeof response>();
      response.cookie('session', 'id', { signed: true, sameSite: 'strict', maxAge: 60 });
      // @ts-expect-error sameSite is strict, lax or none
      response.cookie('session', 'id', { sameSite: 'loose' });
      // @ts-expect-error a header value is a string
      response.header('x-count', 1);
      return { ok: true };
    });
  });

  it('reads cookies from the request in the context', () => {
    procedure<Ctx & BaseContext>().query(({ ctx }) => {
      expectTypeOf(ctx.request.cookie('session', { signed: true })).toEqualTypeOf<string | undefined>();
      return null;
    });
  });
});

describe('statuses a handler chooses among', () => {
  it('takes only the statuses the procedure declares', () => {
    procedure()
      .rest({ method: 'PUT', path: '/bookmarks/:id', status: [200, 201] })
      .mutation(({ response }) => {
        response.status(201);
        response.status(200);
        // @ts-expect-error 204 is not declared: an undeclared status fails to compile
        response.status(204);
        return { ok: true };
      });
    procedure().mutation(({ response }) => {
      // @ts-expect-error one status, nothing to choose
      response.status(200);
      return null;
    });
  });

  it('lets a handler that may answer 204 return nothing, and no other', () => {
    procedure()
      .rest({ status: [200, 204] })
      .output(z.object({ id: z.string() }))
      .mutation(({ response }) => {
        response.status(204);
        return undefined;
      });
    procedure()
      .rest({ status: [200, 201] })
      .output(z.object({ id: z.string() }))
      // @ts-expect-error 204 is not declared: the output is due
      .mutation(() => undefined);
  });

  it('refuses a method without a path', () => {
    // @ts-expect-error method and path come together
    procedure().rest({ method: 'GET' });
  });
});
