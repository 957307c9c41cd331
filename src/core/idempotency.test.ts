/** Which routes replay by Idempotency-Key: the one rule the run time and the OpenAPI document share. */
import { describe, expect, it } from 'vitest';
import { MemoryIdempotencyStore, replaysByKey } from './idempotency.js';
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

describe("a store's pruneInterval", () => {
  it('is an integer of ms a timer keeps: NaN never pruned, and the store grew without bound', () => {
    for (const pruneInterval of [Number.NaN, 0, -1, 1.5, 2 ** 31])
      expect(() => new MemoryIdempotencyStore({ pruneInterval })).toThrow(
        /^MemoryIdempotencyStore: pruneInterval must be an integer number of ms from 1 to 2147483647/,
      );
    expect(() => new MemoryIdempotencyStore({ pruneInterval: 1000 })).not.toThrow();
  });
});
