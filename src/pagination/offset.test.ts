import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCoercer } from '../core/coerce.js';
import { toJsonSchema } from '../core/schema.js';
import { offsetInput, offsetPage, offsetResult, offsetWindow } from './offset.js';

const usersInput = offsetInput({
  sortBy: ['name', 'email', 'createdAt', 'updatedAt'] as const,
  filters: {
    search: z.string().optional(),
    isActive: z.boolean().optional(),
    createdAfter: z.date().optional(),
  },
});

/** What the framework does with a query string: coerce from the schema, then validate. */
const fromQuery = (query: Record<string, string>) =>
  usersInput.safeParse(createCoercer(usersInput)({ ...query }));

describe('offsetInput', () => {
  it('fills the defaults docs/pagination.md gives', () => {
    expect(usersInput.parse({})).toEqual({ page: 1, limit: 20, sortOrder: 'asc' });
  });

  it('takes every parameter from a query string', () => {
    const parsed = fromQuery({
      page: '3',
      limit: '50',
      sortBy: 'email',
      sortOrder: 'desc',
      search: '50%_off',
      isActive: 'false',
      createdAfter: '2024-05-01T00:00:00Z',
    });
    expect(parsed.success && parsed.data).toEqual({
      page: 3,
      limit: 50,
      sortBy: 'email',
      sortOrder: 'desc',
      search: '50%_off',
      isActive: false,
      createdAfter: new Date('2024-05-01T00:00:00Z'),
    });
  });

  it.each([
    [{ page: '0' }, 'page'],
    [{ page: '1.5' }, 'page'],
    [{ page: 'two' }, 'page'],
    [{ limit: '0' }, 'limit'],
    [{ limit: '101' }, 'limit'],
    [{ sortBy: 'password_hash' }, 'sortBy'],
    [{ sortOrder: 'up' }, 'sortOrder'],
    [{ isActive: 'yes' }, 'isActive'],
  ])('rejects %o at %s', (query, path) => {
    const parsed = fromQuery(query);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path.join('.'))).toEqual([path]);
  });

  it('applies an app cap and its own default', () => {
    const small = offsetInput({ maxLimit: 500, defaultLimit: 50 });
    expect(small.parse({})).toEqual({ page: 1, limit: 50, sortOrder: 'asc' });
    expect(small.safeParse({ limit: 500 }).success).toBe(true);
    expect(small.safeParse({ limit: 501 }).success).toBe(false);
    expect(offsetInput({ maxLimit: 10 }).parse({}).limit).toBe(10);
  });

  it('has no sortBy parameter unless the app lists its columns', () => {
    expect(Object.keys(offsetInput().shape)).toEqual(['page', 'limit', 'sortOrder']);
  });

  it('refuses settings that cannot work, when the schema is built', () => {
    expect(() => offsetInput({ maxLimit: 0 })).toThrow('maxLimit must be an integer ≥ 1');
    expect(() => offsetInput({ defaultLimit: 200 })).toThrow(
      'defaultLimit must be an integer between 1 and maxLimit (100)',
    );
    expect(() => offsetInput({ filters: { page: z.string() } })).toThrow('Filter "page" collides');
    expect(() => offsetInput({ sortBy: [] as unknown as readonly ['x'] })).toThrow(
      'sortBy needs at least one column',
    );
  });

  it('describes integers, bounds and defaults in its JSON Schema (OpenAPI parameters)', () => {
    const json = toJsonSchema(usersInput, { io: 'input' }) as {
      properties: Record<string, Record<string, unknown>>;
    };
    expect(json.properties.page).toMatchObject({ type: 'integer', minimum: 1, default: 1 });
    expect(json.properties.limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
    expect(json.properties.sortBy).toMatchObject({ enum: ['name', 'email', 'createdAt', 'updatedAt'] });
    expect(json.properties.sortOrder).toMatchObject({ enum: ['asc', 'desc'], default: 'asc' });
  });
});

describe('offsetResult', () => {
  it.each([
    [0, 20, 0],
    [1, 20, 1],
    [20, 20, 1],
    [21, 20, 2],
    [42, 10, 5],
  ])('total %i with limit %i makes %i pages', (total, limit, totalPages) => {
    expect(offsetResult([], total, { page: 1, limit }).meta).toEqual({ page: 1, limit, total, totalPages });
  });

  it('keeps the items and the requested page, even past the end', () => {
    expect(offsetResult(['a'], 30, { page: 2, limit: 10 })).toEqual({
      data: ['a'],
      meta: { page: 2, limit: 10, total: 30, totalPages: 3 },
    });
    expect(offsetResult([], 30, { page: 9, limit: 10 }).meta.page).toBe(9);
  });
});

describe('offsetWindow', () => {
  it('skips (page - 1) * limit items', () => {
    expect(offsetWindow({ page: 1, limit: 20 })).toEqual({ limit: 20, offset: 0 });
    expect(offsetWindow({ page: 4, limit: 25 })).toEqual({ limit: 25, offset: 75 });
  });
});

describe('offsetPage', () => {
  const User = z.object({ id: z.string(), name: z.string() }).meta({ id: 'UserPublic' });
  const schema = offsetPage(User);

  it('accepts a page and strips what the item view does not declare', () => {
    const page = offsetResult([{ id: '1', name: 'Ada', passwordHash: 'x' }], 1, { page: 1, limit: 20 });
    expect(schema.parse(page)).toEqual({
      data: [{ id: '1', name: 'Ada' }],
      meta: { page: 1, limit: 20, total: 1, totalPages: 1 },
    });
  });

  it('holds maxLimit items at most when given the input’s maxLimit, and says so', () => {
    const bounded = offsetPage(User, { maxLimit: 1 });
    const two = offsetResult(
      [
        { id: '1', name: 'Ada' },
        { id: '2', name: 'Grace' },
      ],
      2,
      { page: 1, limit: 2 },
    );
    expect(bounded.safeParse(two).success).toBe(false);
    expect(schema.safeParse(two).success).toBe(true);
    expect(toJsonSchema(bounded, { io: 'output' }).properties).toMatchObject({ data: { maxItems: 1 } });
  });

  it('keeps the item view as a named component', () => {
    const json = toJsonSchema(schema, { io: 'output', named: true });
    expect(JSON.stringify(json)).toContain('UserPublic');
    expect(json).toMatchObject({ required: ['data', 'meta'] });
  });
});
