/**
 * The one pagination suite every source must pass (arrays, Drizzle over PGlite and PostgreSQL,
 * plain SQL). Each test file calls {@link describePaginationSource} with its own source.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CursorPage, CursorParams } from './cursor.js';
import type { OffsetPage, OffsetParams } from './offset.js';

export type Tag = 'a' | 'b';

export interface Row {
  id: string;
  tag: Tag;
  name: string;
  score: number;
}

export interface Filters {
  tag?: Tag | undefined;
}

/** A data source under test. Rows are given in creation order (ascending ids). */
export interface PaginationSource {
  reset(rows: readonly Row[]): Promise<void>;
  insert(rows: readonly Row[]): Promise<void>;
  remove(id: string): Promise<void>;
  cursor(params: CursorParams & Filters): Promise<CursorPage<Row>>;
  offset(params: OffsetParams & Filters): Promise<OffsetPage<Row>>;
  close(): Promise<void>;
}

/** A valid UUIDv7 whose order is `n`'s order, so arrays and PostgreSQL's uuid type agree. */
export function idOf(n: number): string {
  return `00000000-0000-7000-8000-${n.toString(16).padStart(12, '0')}`;
}

const names = ['delta', 'alpha', 'charlie', 'bravo', 'alpha', 'echo'];

export function rowOf(n: number): Row {
  return {
    id: idOf(n),
    tag: n % 3 === 0 ? 'b' : 'a',
    name: names[n % names.length] as string,
    score: (n * 7) % 10,
  };
}

/** Rows 1..count in creation order. */
export function rowsUpTo(count: number, from = 1): Row[] {
  return Array.from({ length: count }, (_, index) => rowOf(from + index));
}

const ids = (page: { data: readonly Row[] }) => page.data.map((row) => row.id);
const range = (from: number, to: number) => {
  const step = from <= to ? 1 : -1;
  return Array.from({ length: Math.abs(to - from) + 1 }, (_, index) => idOf(from + index * step));
};

/** The cursor contract stated plainly, against which every source is checked. */
export function cursorModel(rows: readonly Row[], params: CursorParams & Filters): CursorPage<Row> {
  const matching = rows.filter((row) => params.tag === undefined || row.tag === params.tag);
  const newestFirst = [...matching].sort((a, b) => (a.id < b.id ? 1 : -1));
  const { cursor, limit } = params;
  let data: Row[];
  if (params.direction === 'backward') {
    const newer = cursor === undefined ? newestFirst : newestFirst.filter((row) => row.id > cursor);
    data = newer.slice(Math.max(0, newer.length - limit));
  } else {
    const older = cursor === undefined ? newestFirst : newestFirst.filter((row) => row.id < cursor);
    data = older.slice(0, limit);
  }
  const first = data[0];
  const last = data.at(-1);
  const moreAfterLast = last !== undefined && newestFirst.some((row) => row.id < last.id);
  return {
    data,
    nextCursor: moreAfterLast && last !== undefined ? last.id : null,
    prevCursor: first === undefined ? null : first.id,
  };
}

export function describePaginationSource(name: string, open: () => Promise<PaginationSource>): void {
  describe(`pagination over ${name}`, () => {
    let source: PaginationSource;
    beforeAll(async () => {
      source = await open();
    });
    afterAll(async () => {
      await source?.close();
    });

    const forward = (params: Partial<CursorParams> & Filters = {}) =>
      source.cursor({ limit: 10, direction: 'forward', ...params });
    const backward = (params: Partial<CursorParams> & Filters = {}) =>
      source.cursor({ limit: 10, direction: 'backward', ...params });

    describe('cursor', () => {
      it('starts at the newest item and points both ways from the page', async () => {
        await source.reset(rowsUpTo(50));
        const page = await forward();
        expect(ids(page)).toEqual(range(50, 41));
        expect(page.nextCursor).toBe(idOf(41));
        expect(page.prevCursor).toBe(idOf(50));
      });

      it('walks forward over every item once, with no empty trailing page', async () => {
        await source.reset(rowsUpTo(50));
        const seen: string[] = [];
        let page = await forward();
        let pages = 1;
        seen.push(...ids(page));
        while (page.nextCursor !== null) {
          page = await forward({ cursor: page.nextCursor });
          pages++;
          seen.push(...ids(page));
        }
        expect(pages).toBe(5);
        expect(seen).toEqual(range(50, 1));
      });

      it('walks backward from the oldest page to the newest', async () => {
        await source.reset(rowsUpTo(25));
        let page = await backward();
        expect(ids(page)).toEqual(range(10, 1));
        expect(page.nextCursor).toBeNull();
        expect(page.prevCursor).toBe(idOf(10));
        const seen = [...ids(page)];
        for (;;) {
          const previous = page;
          page = await backward({ cursor: previous.prevCursor as string });
          if (page.data.length === 0) break;
          expect(page.nextCursor).toBe(page.data.at(-1)?.id);
          seen.unshift(...ids(page));
        }
        expect(page).toEqual({ data: [], nextCursor: null, prevCursor: null });
        expect(seen).toEqual(range(25, 1));
      });

      it('returns, going backward from a page, exactly the page before it', async () => {
        await source.reset(rowsUpTo(47));
        const pages = [await forward({ limit: 7 })];
        for (let page = pages[0]; page?.nextCursor; ) {
          page = await forward({ limit: 7, cursor: page.nextCursor });
          pages.push(page);
        }
        for (let index = pages.length - 1; index > 0; index--) {
          const back = await backward({ limit: 7, cursor: pages[index]?.prevCursor as string });
          expect(back).toEqual(pages[index - 1]);
        }
      });

      it('answers a backward step from the first page with an empty page', async () => {
        await source.reset(rowsUpTo(5));
        const first = await forward();
        expect(first.nextCursor).toBeNull();
        expect(await backward({ cursor: first.prevCursor as string })).toEqual({
          data: [],
          nextCursor: null,
          prevCursor: null,
        });
      });

      it('keeps working when the cursor item was deleted', async () => {
        await source.reset(rowsUpTo(50));
        await source.remove(idOf(30));
        const after = await forward({ cursor: idOf(30) });
        expect(ids(after)).toEqual(range(29, 20));
        expect(after.nextCursor).toBe(idOf(20));
        const before = await backward({ cursor: idOf(30) });
        expect(ids(before)).toEqual(range(40, 31));
        expect(before.nextCursor).toBe(idOf(31));
        expect(before.prevCursor).toBe(idOf(40));
      });

      it('says nothing follows a backward page when the deleted cursor was the oldest item', async () => {
        await source.reset(rowsUpTo(15));
        await source.remove(idOf(1));
        const page = await backward({ cursor: idOf(1) });
        expect(ids(page)).toEqual(range(11, 2));
        expect(page.nextCursor).toBeNull();
      });

      it('applies filters before the cursor, even when the cursor item does not match them', async () => {
        await source.reset(rowsUpTo(30));
        const page = await forward({ tag: 'b', limit: 3, cursor: idOf(25) });
        expect(ids(page)).toEqual([idOf(24), idOf(21), idOf(18)]);
        expect(page.nextCursor).toBe(idOf(18));
        const last = await forward({ tag: 'b', limit: 3, cursor: idOf(9) });
        expect(ids(last)).toEqual([idOf(6), idOf(3)]);
        expect(last.nextCursor).toBeNull();
        const back = await backward({ tag: 'b', limit: 2, cursor: idOf(4) });
        expect(ids(back)).toEqual([idOf(9), idOf(6)]);
        expect(back.nextCursor).toBe(idOf(6));
      });

      it('neither repeats nor skips an item when items are inserted during a forward walk', async () => {
        await source.reset(rowsUpTo(30));
        let page = await forward();
        const seen = [...ids(page)];
        let next = 31;
        while (page.nextCursor !== null) {
          await source.insert(rowsUpTo(3, next));
          next += 3;
          page = await forward({ cursor: page.nextCursor });
          seen.push(...ids(page));
        }
        expect(seen).toEqual(range(30, 1));
      });

      it('shows items inserted during a backward walk once, at the newest end', async () => {
        await source.reset(rowsUpTo(30));
        let page = await backward();
        const seen = [...ids(page)];
        await source.insert(rowsUpTo(4, 31));
        for (;;) {
          page = await backward({ cursor: page.prevCursor as string });
          if (page.data.length === 0) break;
          seen.unshift(...ids(page));
        }
        expect(seen).toEqual(range(34, 1));
      });

      it('handles a limit larger than the listing, a limit of 1 and an empty listing', async () => {
        await source.reset(rowsUpTo(3));
        const all = await forward({ limit: 100 });
        expect(all).toEqual({ data: rowsUpTo(3).reverse(), nextCursor: null, prevCursor: idOf(3) });
        const one = await forward({ limit: 1, cursor: idOf(3) });
        expect(one).toEqual({ data: [rowOf(2)], nextCursor: idOf(2), prevCursor: idOf(2) });
        await source.reset([]);
        const empty = { data: [], nextCursor: null, prevCursor: null };
        expect(await forward()).toEqual(empty);
        expect(await backward()).toEqual(empty);
        expect(await backward({ cursor: idOf(7) })).toEqual(empty);
      });

      it('matches the stated rules for any listing, cursor, limit, direction and filter', async () => {
        const scenario = fc.record({
          present: fc.uniqueArray(fc.integer({ min: 1, max: 40 }), { maxLength: 25 }),
          cursor: fc.option(fc.integer({ min: 0, max: 41 }), { nil: undefined }),
          limit: fc.integer({ min: 1, max: 8 }),
          direction: fc.constantFrom('forward' as const, 'backward' as const),
          tag: fc.constantFrom(undefined, 'a' as const, 'b' as const),
        });
        await fc.assert(
          fc.asyncProperty(scenario, async ({ present, cursor, limit, direction, tag }) => {
            const rows = [...present].sort((a, b) => a - b).map(rowOf);
            await source.reset(rows);
            const params = { cursor: cursor === undefined ? undefined : idOf(cursor), limit, direction, tag };
            expect(await source.cursor(params)).toEqual(cursorModel(rows, params));
          }),
          { numRuns: 40 },
        );
      });
    });

    describe('offset', () => {
      const page = (params: Partial<OffsetParams> & Filters = {}) =>
        source.offset({ page: 1, limit: 10, sortOrder: 'asc', ...params });

      it('lists in creation order by default, with meta', async () => {
        await source.reset(rowsUpTo(25));
        const first = await page();
        expect(ids(first)).toEqual(range(1, 10));
        expect(first.meta).toEqual({ page: 1, limit: 10, total: 25, totalPages: 3 });
        const third = await page({ page: 3 });
        expect(ids(third)).toEqual(range(21, 25));
        const reversed = await page({ sortOrder: 'desc' });
        expect(ids(reversed)).toEqual(range(25, 16));
      });

      it('sorts by a column with the key as the tie-breaker, in both orders', async () => {
        await source.reset(rowsUpTo(12));
        const rows = rowsUpTo(12);
        const byName = [...rows].sort((a, b) =>
          a.name === b.name ? (a.id < b.id ? -1 : 1) : a.name < b.name ? -1 : 1,
        );
        expect((await page({ sortBy: 'name', limit: 12 })).data).toEqual(byName);
        expect((await page({ sortBy: 'name', sortOrder: 'desc', limit: 12 })).data).toEqual(
          [...byName].reverse(),
        );
        const byScore = [...rows].sort((a, b) => a.score - b.score || (a.id < b.id ? -1 : 1));
        expect((await page({ sortBy: 'score', limit: 12 })).data).toEqual(byScore);
      });

      it('covers every item exactly once across pages of a sorted listing', async () => {
        await source.reset(rowsUpTo(23));
        const seen: string[] = [];
        for (let number = 1; number <= 5; number++)
          seen.push(...ids(await page({ page: number, limit: 5, sortBy: 'name' })));
        expect(new Set(seen).size).toBe(23);
        expect(seen).toHaveLength(23);
      });

      it('counts only filtered items and answers past the end with an empty page', async () => {
        await source.reset(rowsUpTo(30));
        const filtered = await page({ tag: 'b', limit: 4 });
        expect(filtered.meta).toEqual({ page: 1, limit: 4, total: 10, totalPages: 3 });
        expect(filtered.data.every((row) => row.tag === 'b')).toBe(true);
        const past = await page({ tag: 'b', page: 9, limit: 4 });
        expect(past).toEqual({ data: [], meta: { page: 9, limit: 4, total: 10, totalPages: 3 } });
      });

      it('reports zero pages for an empty listing', async () => {
        await source.reset([]);
        expect(await page()).toEqual({ data: [], meta: { page: 1, limit: 10, total: 0, totalPages: 0 } });
      });
    });
  });
}
