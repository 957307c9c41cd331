import { asc, desc, gt, lt, type SQL } from 'drizzle-orm';
import { pgTable, uuid } from 'drizzle-orm/pg-core';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  type CursorPage,
  cursorInput,
  type cursorPage,
  keysetClauses,
  type OffsetPage,
  offsetInput,
  type offsetPage,
  paginateArray,
} from './index.js';

describe('pagination types', () => {
  it('types offset input with the app columns and filters', () => {
    const input = offsetInput({
      sortBy: ['name', 'email'] as const,
      filters: { active: z.boolean().optional() },
    });
    expectTypeOf<z.output<typeof input>>().toEqualTypeOf<{
      page: number;
      limit: number;
      sortOrder: 'asc' | 'desc';
      sortBy?: 'name' | 'email' | undefined;
      active?: boolean | undefined;
    }>();
    const unsorted = offsetInput();
    expectTypeOf<keyof z.output<typeof unsorted>>().toEqualTypeOf<'page' | 'limit' | 'sortOrder'>();
  });

  it('types cursor input with its cursor schema and filters', () => {
    const input = cursorInput({ filters: { tag: z.string().optional() } });
    expectTypeOf<z.output<typeof input>>().toEqualTypeOf<{
      cursor?: string | undefined;
      limit: number;
      direction: 'forward' | 'backward';
      tag?: string | undefined;
    }>();
  });

  it('types the envelopes from the item view', () => {
    const Item = z.object({ id: z.string() });
    expectTypeOf<z.output<ReturnType<typeof offsetPage<typeof Item>>>>().toEqualTypeOf<
      OffsetPage<{ id: string }>
    >();
    expectTypeOf<z.output<ReturnType<typeof cursorPage<typeof Item>>>>().toEqualTypeOf<
      CursorPage<{ id: string }>
    >();
  });

  it('returns the page kind that matches the parameters', () => {
    const items = [{ id: 'a', rank: 1 }];
    expectTypeOf(paginateArray(items, { page: 1, limit: 2, sortOrder: 'asc' }, { key: 'id' })).toEqualTypeOf<
      OffsetPage<{ id: string; rank: number }>
    >();
    expectTypeOf(paginateArray(items, { limit: 2 }, { key: 'rank' })).toEqualTypeOf<
      CursorPage<{ id: string; rank: number }>
    >();
    // @ts-expect-error a key must be a property holding a string or number
    paginateArray([{ at: new Date() }], { limit: 2 }, { key: 'at' });
  });

  it('accepts Drizzle operators and columns as they are', () => {
    const posts = pgTable('posts', { id: uuid('id').primaryKey() });
    const clauses = keysetClauses({ lt, gt, asc, desc }, posts.id, {
      cursor: 'x',
      towards: 'older',
      limit: 3,
    });
    expectTypeOf(clauses.where).toEqualTypeOf<SQL | undefined>();
  });
});
