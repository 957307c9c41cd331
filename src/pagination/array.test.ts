import { describe, expect, it } from 'vitest';
import { paginateArray } from './array.js';
import { describePaginationSource, type Filters, idOf, type Row } from './pagination.cases.js';

describePaginationSource('an array (paginateArray)', async () => {
  let rows: Row[] = [];
  const matching = (filters: Filters) =>
    rows.filter((row) => filters.tag === undefined || row.tag === filters.tag);
  return {
    async reset(next) {
      rows = [...next];
    },
    async insert(more) {
      rows.push(...more);
    },
    async remove(id) {
      rows = rows.filter((row) => row.id !== id);
    },
    async cursor(params) {
      return paginateArray(matching(params), params, { key: 'id' });
    },
    async offset(params) {
      return paginateArray(matching(params), params, { key: 'id' });
    },
    async close() {},
  };
});

describe('paginateArray', () => {
  it('orders cursor pages by the key, whatever the order of the array', () => {
    const shuffled = [3, 1, 4, 2].map((n) => ({ id: idOf(n) }));
    expect(paginateArray(shuffled, { limit: 2, direction: 'forward' }, { key: 'id' })).toEqual({
      data: [{ id: idOf(4) }, { id: idOf(3) }],
      nextCursor: idOf(3),
      prevCursor: idOf(4),
    });
  });

  it('compares numeric keys as numbers, not as text', () => {
    const items = [1, 2, 9, 10, 11].map((n) => ({ n }));
    const page = paginateArray(items, { cursor: '10', limit: 2 }, { key: 'n' });
    expect(page).toEqual({ data: [{ n: 9 }, { n: 2 }], nextCursor: '2', prevCursor: '9' });
    expect(paginateArray(items, { cursor: 'x', limit: 2 }, { key: 'n' }).data).toEqual([]);
  });

  it('accepts a key function', () => {
    const items = ['a', 'c', 'b'].map((code) => ({ code }));
    const page = paginateArray(
      items,
      { limit: 5, direction: 'backward', cursor: 'a' },
      { key: (item) => item.code },
    );
    expect(page).toEqual({ data: [{ code: 'c' }, { code: 'b' }], nextCursor: 'b', prevCursor: 'c' });
  });

  it('refuses a page whose item lacks the cursor key, rather than a cursor "undefined" that leads back to page one', () => {
    const items = [{ id: 1 }, { id: 2 }, { title: 'no id' }] as Array<{ id?: number }>;
    expect(() => paginateArray(items, { limit: 5 }, { key: 'id' as never })).toThrow(
      /The cursor key "id" gave undefined for an item of the page: every item needs the key/,
    );
  });

  it('sorts dates and puts absent values last', () => {
    const items = [
      { id: 1, at: new Date('2024-03-01') },
      { id: 2, at: null },
      { id: 3, at: new Date('2024-01-01') },
    ];
    const page = paginateArray(items, { page: 1, limit: 3, sortBy: 'at', sortOrder: 'asc' }, { key: 'id' });
    expect(page.data.map((item) => item.id)).toEqual([3, 1, 2]);
  });

  it('trusts an array found newest first while its length and ends stay, and checks it again when they change', () => {
    const page = (items: { id: number }[]) =>
      paginateArray(items, { cursor: '4', limit: 2, direction: 'forward' }, { key: 'id' }).data.map(
        (item) => item.id,
      );
    const items = [5, 4, 3, 2, 1].map((id) => ({ id }));
    expect(page(items)).toEqual([3, 2]);
    // Grown out of order: the length changed, so it is checked again and sorted into a copy.
    items.push({ id: 9 });
    expect(page(items)).toEqual([3, 2]);
    expect(items.map((item) => item.id)).toEqual([5, 4, 3, 2, 1, 9]);
    // A new end item, same length: checked again too.
    items[5] = { id: 0 };
    expect(page(items)).toEqual([3, 2]);
  });

  it('keeps what it found per key: an array in order of one key is checked again for another', () => {
    const items = [
      { id: 3, score: 2 },
      { id: 2, score: 8 },
      { id: 1, score: 3 },
    ];
    const byId = paginateArray(items, { limit: 2, direction: 'forward' }, { key: 'id' });
    expect(byId.data.map((item) => item.id)).toEqual([3, 2]);
    const byScore = paginateArray(items, { limit: 2, direction: 'forward' }, { key: 'score' });
    expect(byScore.data.map((item) => item.score)).toEqual([8, 3]);
  });

  it('does not reorder the array it was given', () => {
    const items = [{ id: 'b' }, { id: 'a' }];
    paginateArray(items, { page: 1, limit: 2, sortBy: 'id', sortOrder: 'desc' }, { key: 'id' });
    paginateArray(items, { limit: 2 }, { key: 'id' });
    expect(items).toEqual([{ id: 'b' }, { id: 'a' }]);
  });
});
