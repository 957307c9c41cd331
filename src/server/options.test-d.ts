import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { guard } from '../core/guards.js';
import { procedure, procedures } from '../core/procedure.js';
import { idempotencyPlugin } from '../idempotency/plugin.js';
import { metricsPlugin } from '../metrics/plugin.js';
import { createApp } from './create-app.js';

const things = procedures('things', { listThings: procedure().query(() => []) });

describe('misspelt options are compile errors', () => {
  it('on createApp and its nested options, and on mount', () => {
    // @ts-expect-error contxt is not an option
    createApp({ contxt: () => ({}) });
    // @ts-expect-error origin is not a cors option (origins is)
    createApp({ cors: { origin: ['https://a.example'] } });
    // @ts-expect-error prefx is not a mount option
    createApp().mount([things], { prefx: '/v1' });
    expectTypeOf(createApp).parameter(0).toMatchTypeOf<{ userFromContext?: boolean } | undefined>();
  });

  it('on guard() and .rest()', () => {
    // @ts-expect-error requireUser is not a guard option (requiresUser is)
    guard({ name: 'x', requireUser: true, check: () => true });
    guard({ name: 'x', requiresUser: true, reads: ['role'], check: () => true });
    procedure()
      .input(z.object({ id: z.string() }))
      // @ts-expect-error stauts is not a .rest() option
      .rest({ method: 'POST', path: '/x/:id', stauts: 202 });
  });

  it('on every plugin registered through app.register', async () => {
    const app = createApp();
    // @ts-expect-error hots is not a metricsPlugin option
    await app.register(metricsPlugin, { port: 0, hots: '127.0.0.1' });
    // @ts-expect-error store is required
    await app.register(idempotencyPlugin, { creates: true });
  });
});

describe('what a guard reads', () => {
  it('is a field of the context’s user', () => {
    type Ctx = { user?: { id: string; role: string } };
    guard({ name: 'admin', reads: ['role'], check: (ctx: Ctx) => ctx.user?.role === 'admin' });
    // @ts-expect-error rol is not a field of the user
    guard({ name: 'admin', reads: ['rol'], check: (ctx: Ctx) => ctx.user?.role === 'admin' });
    // A context without a user type takes any name.
    guard({ name: 'scoped', reads: ['scopes'], check: (ctx: { user?: unknown }) => ctx.user !== undefined });
  });
});
