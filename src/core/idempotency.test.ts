/** Which routes replay by Idempotency-Key: the one rule the run time and the OpenAPI document share. */
import { describe, expect, it } from 'vitest';
import { replaysByKey } from './idempotency.js';
import { procedure, procedures } from './procedure.js';
import { planRoutes } from './routes.js';

describe('replaysByKey', () => {
  const routes = planRoutes([
    procedures('posts', {
      createPost: procedure().mutation(() => ({ id: '1' })),
      publishPost: procedure()
        .rest({ method: 'POST', path: '/posts/:id/publish' })
        .idempotent()
        .mutation(() => ({ ok: true })),
      archivePost: procedure()
        .rest({ method: 'POST', path: '/posts/:id/archive' })
        .mutation(() => ({ ok: true })),
    }),
  ]);
  const byName = (name: string) => {
    const route = routes.find((each) => each.name === name);
    if (route === undefined) throw new Error(`no route ${name}`);
    return route;
  };

  it('takes .idempotent() procedures always, create* ones only when the store replays creates', () => {
    expect(replaysByKey(byName('publishPost'), false)).toBe(true);
    expect(replaysByKey(byName('createPost'), false)).toBe(false);
    expect(replaysByKey(byName('createPost'), true)).toBe(true);
    expect(replaysByKey(byName('archivePost'), true)).toBe(false);
  });
});
