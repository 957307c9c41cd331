import {
  dehydrate,
  hydrate,
  InfiniteQueryObserver,
  MutationObserver,
  QueryClient,
  QueryObserver,
} from '@tanstack/query-core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { z } from 'zod';
import { createClient, routeManifest } from '../client/index.js';
import { eventStream } from '../core/events.js';
import { procedure, procedures } from '../core/procedure.js';
import { webSocket } from '../core/sockets.js';
import { cursorInput, cursorPage } from '../pagination/cursor.js';
import { paginateArray } from '../pagination/index.js';
import { createApp } from '../server/create-app.js';
import { keyRoot, queryUtils } from './index.js';

interface Item {
  id: string;
  title: string;
  at: Date;
}
const items: Item[] = Array.from({ length: 7 }, (_, index) => ({
  id: `item-${String(index).padStart(2, '0')}`,
  title: `Item ${index}`,
  at: new Date(Date.UTC(2026, 0, index + 1)),
}));
const Shown = z.object({ id: z.string(), title: z.string(), at: z.date() });
const aborted: string[] = [];

const itemsApi = procedures('items', {
  listItems: procedure()
    .input(cursorInput({ filters: { title: z.string().optional() } }))
    .output(cursorPage(Shown))
    .query(({ input }) => paginateArray(items, input, { key: 'id' })),
  getItem: procedure()
    .input(z.object({ id: z.string(), since: z.date().optional(), wait: z.boolean().optional() }))
    .output(Shown)
    .query(async ({ input }) => {
      if (input.wait === true) await new Promise((resolve) => setTimeout(resolve, 100));
      const item = items.find(({ id }) => id === input.id);
      if (item === undefined) throw new Error('none');
      return item;
    }),
  createItem: procedure()
    .input(z.object({ title: z.string() }))
    .output(Shown)
    .mutation(({ input }) => {
      const item = { id: `item-${items.length}`, title: input.title, at: new Date(Date.UTC(2026, 1, 1)) };
      items.unshift(item);
      return item;
    }),
  itemEvents: procedure()
    .rest({ method: 'GET', path: '/items/events' })
    .input(z.object({ count: z.number().int() }))
    .output(eventStream(z.object({ n: z.number() })))
    .query(async function* ({ input }) {
      for (let n = 1; n <= input.count; n++) yield { n };
    }),
});

const app = createApp({ logger: false }).mount([itemsApi]);
afterAll(() => app.close());
const calls: string[] = [];
const client = createClient<readonly [typeof itemsApi]>({
  baseUrl: 'http://api.example',
  routes: routeManifest([itemsApi]),
  fetch: (request: RequestInfo | URL, init?: RequestInit) => {
    const sent = new Request(request, init);
    const path = `${new URL(sent.url).pathname}${new URL(sent.url).search}`;
    calls.push(`${sent.method} ${path}`);
    sent.signal.addEventListener('abort', () => aborted.push(path));
    return app.fetch(sent);
  },
});
const queries = queryUtils(client);
let queryClient = new QueryClient();
afterEach(() => {
  queryClient.clear();
  queryClient = new QueryClient();
  calls.length = 0;
});

describe('queryOptions', () => {
  it('fetches a call, keyed by collection, procedure and input', async () => {
    const options = queries.items.getItem.queryOptions({ input: { id: 'item-03' } });
    expect(options.queryKey).toEqual([
      keyRoot,
      'items',
      'getItem',
      { kind: 'query', input: { id: 'item-03' } },
    ]);
    const item = await queryClient.fetchQuery(options);
    expect(item).toEqual({ id: 'item-03', title: 'Item 3', at: '2026-01-04T00:00:00.000Z' });
    expect(queryClient.getQueryData(options.queryKey)).toEqual(item);
  });

  it('keys the same input the same whatever the order of its properties', async () => {
    const since = new Date('2026-01-01T00:00:00.000Z');
    await queryClient.fetchQuery(queries.items.getItem.queryOptions({ input: { id: 'item-01', since } }));
    await queryClient.fetchQuery({
      ...queries.items.getItem.queryOptions({ input: { since, id: 'item-01' } }),
      staleTime: Number.POSITIVE_INFINITY,
    });
    expect(calls).toHaveLength(1);
    expect(queryClient.getQueryCache().getAll()).toHaveLength(1);
  });

  it("passes the query's AbortSignal on: a cancelled query ends its request", async () => {
    const options = queries.items.getItem.queryOptions({ input: { id: 'item-02', wait: true } });
    const pending = queryClient.fetchQuery(options).catch((error: unknown) => error);
    await expect.poll(() => calls.length).toBe(1);
    await queryClient.cancelQueries({ queryKey: options.queryKey });
    expect(await pending).toBeInstanceOf(Error);
    expect(aborted).toEqual(['/api/items/item-02?wait=true']);
  });

  it('keeps a query with a date in its input across dehydration and hydration as JSON', async () => {
    const since = new Date('2026-01-01T00:00:00.000Z');
    const options = queries.items.getItem.queryOptions({ input: { id: 'item-04', since } });
    await queryClient.fetchQuery(options);
    const shipped = JSON.parse(JSON.stringify(dehydrate(queryClient)));
    const browser = new QueryClient();
    hydrate(browser, shipped);
    // The page builds its options again, with a Date: the same entry, no request.
    expect(
      browser.getQueryData(queries.items.getItem.queryOptions({ input: { id: 'item-04', since } }).queryKey),
    ).toEqual({ id: 'item-04', title: 'Item 4', at: '2026-01-05T00:00:00.000Z' });
    browser.clear();
  });
});

describe('infiniteOptions', () => {
  it('walks the cursor pages older and newer', async () => {
    const observer = new InfiniteQueryObserver(
      queryClient,
      queries.items.listItems.infiniteOptions({ input: { limit: 3 } }),
    );
    const unsubscribe = observer.subscribe(() => undefined);
    try {
      await expect.poll(() => observer.getCurrentResult().data?.pages.length).toBe(1);
      await observer.fetchNextPage();
      const { data } = observer.getCurrentResult();
      expect(data?.pages.map((page) => page.data.map(({ id }) => id))).toEqual([
        ['item-06', 'item-05', 'item-04'],
        ['item-03', 'item-02', 'item-01'],
      ]);
      expect(data?.pageParams).toEqual([undefined, { cursor: 'item-04', direction: 'forward' }]);
      expect(observer.getCurrentResult().hasNextPage).toBe(true);
      await observer.fetchNextPage();
      expect(observer.getCurrentResult().hasNextPage).toBe(false);
      // The newest page has nothing newer to walk to: new posts come with a refetch.
      expect(observer.getCurrentResult().hasPreviousPage).toBe(false);
      items.push({ id: 'item-99', title: 'Item 99', at: new Date(Date.UTC(2026, 2, 1)) });
      await observer.refetch();
      expect(observer.getCurrentResult().data?.pages.map((page) => page.data.map(({ id }) => id))).toEqual([
        ['item-99', 'item-06', 'item-05'],
        ['item-04', 'item-03', 'item-02'],
        ['item-01', 'item-00'],
      ]);
      expect(calls.slice(-3)).toEqual([
        'GET /api/items?limit=3',
        'GET /api/items?limit=3&cursor=item-05&direction=forward',
        'GET /api/items?limit=3&cursor=item-02&direction=forward',
      ]);
    } finally {
      const added = items.findIndex(({ id }) => id === 'item-99');
      if (added !== -1) items.splice(added, 1);
      unsubscribe();
    }
  });

  it('walks back up to newer pages that a window of maxPages let go', async () => {
    const observer = new InfiniteQueryObserver(queryClient, {
      ...queries.items.listItems.infiniteOptions({ input: { limit: 3 } }),
      maxPages: 2,
    });
    const unsubscribe = observer.subscribe(() => undefined);
    try {
      await expect.poll(() => observer.getCurrentResult().data?.pages.length).toBe(1);
      await observer.fetchNextPage();
      await observer.fetchNextPage();
      const ids = () => observer.getCurrentResult().data?.pages.map((page) => page.data.map(({ id }) => id));
      expect(ids()).toEqual([['item-03', 'item-02', 'item-01'], ['item-00']]);
      expect(observer.getCurrentResult().hasPreviousPage).toBe(true);
      await observer.fetchPreviousPage();
      expect(calls.at(-1)).toBe('GET /api/items?limit=3&cursor=item-03&direction=backward');
      expect(ids()).toEqual([
        ['item-06', 'item-05', 'item-04'],
        ['item-03', 'item-02', 'item-01'],
      ]);
    } finally {
      unsubscribe();
    }
  });

  it('never shares an entry with a query of the same input', async () => {
    const input = { limit: 2 };
    await queryClient.fetchQuery(queries.items.listItems.queryOptions({ input }));
    await queryClient.fetchInfiniteQuery(queries.items.listItems.infiniteOptions({ input }));
    expect(
      queryClient
        .getQueryCache()
        .getAll()
        .map((query) => query.queryKey[3]),
    ).toEqual([
      { kind: 'query', input },
      { kind: 'infinite', input },
    ]);
  });
});

describe('mutations and keys', () => {
  it('creates through mutationOptions, and a collection key invalidates every query of it', async () => {
    await queryClient.fetchQuery(queries.items.getItem.queryOptions({ input: { id: 'item-00' } }));
    await queryClient.fetchInfiniteQuery(queries.items.listItems.infiniteOptions({ input: { limit: 2 } }));
    const created = await new MutationObserver(
      queryClient,
      queries.items.createItem.mutationOptions(),
    ).mutate({
      title: 'Fresh',
    });
    expect(created.title).toBe('Fresh');
    await queryClient.invalidateQueries({ queryKey: queries.items.listItems.key() });
    const states = queryClient
      .getQueryCache()
      .getAll()
      .map((query) => [query.queryKey[2], query.state.isInvalidated]);
    expect(states).toEqual([
      ['getItem', false],
      ['listItems', true],
    ]);
    await queryClient.invalidateQueries({ queryKey: queries.items.key() });
    expect(
      queryClient
        .getQueryCache()
        .getAll()
        .every((query) => query.state.isInvalidated),
    ).toBe(true);
    expect(queries.key()).toEqual([keyRoot]);
    expect(queries.items.getItem.key({ input: { id: 'item-00' } })).toEqual([
      keyRoot,
      'items',
      'getItem',
      { input: { id: 'item-00' } },
    ]);
  });
});

describe('streamedOptions', () => {
  it("collects an event stream's events as its data, as they arrive", async () => {
    const options = queries.items.itemEvents.streamedOptions({ input: { count: 3 } });
    const observer = new QueryObserver(queryClient, options);
    const unsubscribe = observer.subscribe(() => undefined);
    try {
      // The handler yields three and returns: the stream ends with its end event, and the query
      // settles with the three (a dropped connection would have been reconnected, and grown).
      await expect.poll(() => observer.getCurrentResult().fetchStatus).toBe('idle');
      expect(observer.getCurrentResult().data).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
      expect(observer.getCurrentResult().status).toBe('success');
    } finally {
      unsubscribe();
      await queryClient.cancelQueries({ queryKey: options.queryKey });
    }
  });
});

describe('streamedOptions of a socket procedure', () => {
  it("collects the socket's messages as its data, and the query's cancel closes the socket", async () => {
    let closed = 0;
    const ticks = procedures('ticks', {
      tickSocket: procedure()
        .rest({ method: 'GET', path: '/ticks/socket' })
        .output(webSocket({ receive: z.object({}), send: z.object({ n: z.number() }) }))
        .query(async ({ send, signal }) => {
          for (let n = 1; n <= 3; n++) await send({ n });
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
          closed++;
        }),
    });
    const live = createApp({ logger: false }).mount([ticks]);
    const baseUrl = await live.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
    try {
      const socketQueries = queryUtils(
        createClient<readonly [typeof ticks]>({ baseUrl, routes: routeManifest([ticks]), WebSocket }),
      );
      const options = socketQueries.ticks.tickSocket.streamedOptions();
      const observer = new QueryObserver(queryClient, options);
      const unsubscribe = observer.subscribe(() => undefined);
      await expect.poll(() => observer.getCurrentResult().data).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
      unsubscribe();
      await queryClient.cancelQueries({ queryKey: options.queryKey });
      await expect.poll(() => closed).toBe(1);
    } finally {
      await live.close();
    }
  });
});
