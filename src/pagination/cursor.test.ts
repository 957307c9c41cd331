import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCoercer } from '../core/coerce.js';
import { toJsonSchema } from '../core/schema.js';
import {
  cursorInput,
  cursorPage,
  cursorSteps,
  type KeysetQuery,
  keysetClauses,
  paginateKeyset,
} from './cursor.js';

const postsInput = cursorInput({
  cursor: z.uuid(),
  filters: { authorId: z.uuid().optional(), status: z.enum(['draft', 'published', 'archived']).optional() },
});
const fromQuery = (query: Record<string, string>) =>
  postsInput.safeParse(createCoercer(postsInput)({ ...query }));
const uuid = '0190f2a0-0000-7000-8000-000000000001';

describe('cursorInput', () => {
  it('defaults to the newest 20 items, going forward', () => {
    expect(postsInput.parse({})).toEqual({ limit: 20, direction: 'forward' });
  });

  it('takes every parameter from a query string', () => {
    const parsed = fromQuery({
      cursor: uuid,
      limit: '5',
      direction: 'backward',
      status: 'draft',
      authorId: uuid,
    });
    expect(parsed.success && parsed.data).toEqual({
      cursor: uuid,
      limit: 5,
      direction: 'backward',
      status: 'draft',
      authorId: uuid,
    });
  });

  it.each([
    [{ cursor: 'not-a-uuid' }, 'cursor'],
    [{ limit: '0' }, 'limit'],
    [{ limit: '101' }, 'limit'],
    [{ direction: 'sideways' }, 'direction'],
    [{ status: 'deleted' }, 'status'],
  ])('rejects %o at %s', (query, path) => {
    const parsed = fromQuery(query);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path.join('.'))).toEqual([path]);
  });

  it('accepts any non-empty cursor by default', () => {
    const plain = cursorInput();
    expect(plain.parse({ cursor: 'abc' }).cursor).toBe('abc');
    expect(plain.safeParse({ cursor: '' }).success).toBe(false);
  });

  it('refuses a filter named like a pagination parameter', () => {
    expect(() => cursorInput({ filters: { direction: z.string() } })).toThrow('Filter "direction" collides');
  });
});

describe('cursorPage', () => {
  it('requires both cursors, null allowed', () => {
    const schema = cursorPage(z.object({ id: z.string() }));
    expect(schema.safeParse({ data: [], nextCursor: null, prevCursor: null }).success).toBe(true);
    expect(schema.safeParse({ data: [] }).success).toBe(false);
  });

  it('bounds the page and types the cursors as the input does, for the document', () => {
    const schema = cursorPage(z.object({ id: z.uuid() }), { maxLimit: 2, cursor: z.uuid() });
    const json = toJsonSchema(schema, { io: 'output' }) as {
      properties: Record<string, { maxItems?: number; anyOf?: { format?: string }[] }>;
    };
    expect(json.properties.data?.maxItems).toBe(2);
    expect(json.properties.nextCursor?.anyOf?.[0]?.format).toBe('uuid');
    expect(json.properties.prevCursor?.anyOf?.[0]?.format).toBe('uuid');
    expect(() => cursorPage(z.object({}), { maxLimit: 0 })).toThrow(/maxLimit must be an integer ≥ 1/);
  });
});

describe('paginateKeyset', () => {
  it('reads limit + 1 items going forward, and nothing more', async () => {
    const queries: KeysetQuery[] = [];
    await paginateKeyset(
      { cursor: 'm', limit: 3, direction: 'forward' },
      async (query) => {
        queries.push(query);
        return [];
      },
      { key: (item: { id: string }) => item.id },
    );
    expect(queries).toEqual([{ cursor: 'm', towards: 'older', limit: 4 }]);
  });

  it('at the boundary: exactly limit rows end the listing, limit + 1 rows leave a next cursor on the last shown', async () => {
    const rows = (count: number) => Array.from({ length: count }, (_, at) => ({ id: `r${9 - at}` }));
    const page = (count: number) =>
      paginateKeyset({ limit: 3, direction: 'forward' }, async () => rows(count), { key: 'id' });
    await expect(page(3)).resolves.toEqual({
      data: rows(3),
      nextCursor: null,
      prevCursor: 'r9',
    });
    await expect(page(4)).resolves.toEqual({
      data: rows(3),
      nextCursor: 'r7',
      prevCursor: 'r9',
    });
    await expect(page(0)).resolves.toEqual({ data: [], nextCursor: null, prevCursor: null });
  });

  it('reads the newer items, then asks whether anything is older than the page, going backward', async () => {
    const queries: KeysetQuery[] = [];
    const page = await paginateKeyset(
      { cursor: 'm', limit: 2, direction: 'backward' },
      async (query) => {
        queries.push(query);
        return query.towards === 'newer' ? [{ id: 'n' }, { id: 'o' }] : [];
      },
      { key: 'id' },
    );
    expect(queries).toEqual([
      { cursor: 'm', towards: 'newer', limit: 2 },
      { cursor: 'n', towards: 'older', limit: 1 },
    ]);
    expect(page).toEqual({ data: [{ id: 'o' }, { id: 'n' }], nextCursor: null, prevCursor: 'o' });
  });

  it.each(['forward', 'backward'] as const)(
    'rejects the page, not throws, when the source throws (%s)',
    async (direction) => {
      const failure = new Error('no connection');
      const read = () => {
        throw failure;
      };
      let page: Promise<unknown> | undefined;
      expect(() => {
        page = paginateKeyset({ cursor: 'm', limit: 2, direction }, read, { key: 'id' });
      }).not.toThrow();
      await expect(page).rejects.toBe(failure);
    },
  );

  it('takes a source that answers with any thenable', async () => {
    const thenable = {
      // biome-ignore lint/suspicious/noThenProperty: a driver's result that is not a native promise
      then: (resolve: (rows: { id: string }[]) => void) => resolve([{ id: 'a' }]),
    };
    const page = await paginateKeyset(
      { limit: 2, direction: 'forward' },
      () => thenable as unknown as Promise<{ id: string }[]>,
      { key: 'id' },
    );
    expect(page).toEqual({ data: [{ id: 'a' }], nextCursor: null, prevCursor: 'a' });
  });

  it('does not ask about older items for the oldest page (backward without a cursor)', () => {
    const steps = cursorSteps<{ id: string }>({ limit: 2, direction: 'backward' }, (item) => item.id);
    expect(steps.next().value).toEqual({ cursor: undefined, towards: 'newer', limit: 2 });
    const result = steps.next([{ id: 'a' }]);
    expect(result).toEqual({ done: true, value: { data: [{ id: 'a' }], nextCursor: null, prevCursor: 'a' } });
  });
});

describe('keysetClauses', () => {
  const operators = {
    lt: (column: string, value: string) => `${column} < ${value}`,
    gt: (column: string, value: string) => `${column} > ${value}`,
    asc: (column: string) => `${column} asc`,
    desc: (column: string) => `${column} desc`,
  };

  it('builds id < cursor, newest first, for older items', () => {
    expect(keysetClauses(operators, 'id', { cursor: 'c', towards: 'older', limit: 21 })).toEqual({
      where: 'id < c',
      orderBy: 'id desc',
      limit: 21,
    });
  });

  it('builds id > cursor, oldest first, for newer items, and no condition without a cursor', () => {
    expect(keysetClauses(operators, 'id', { cursor: 'c', towards: 'newer', limit: 5 })).toEqual({
      where: 'id > c',
      orderBy: 'id asc',
      limit: 5,
    });
    expect(
      keysetClauses(operators, 'id', { cursor: undefined, towards: 'older', limit: 5 }).where,
    ).toBeUndefined();
  });
});
