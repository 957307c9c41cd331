/**
 * TanStack Query options from the typed client (docs/tanstack-query.md): for every procedure,
 * `queryOptions`, `mutationOptions`, `infiniteOptions` for cursor pages, `streamedOptions` for
 * event streams, and keys to invalidate by. It builds options objects, so React, Vue, Solid and
 * Svelte Query take them alike.
 *
 * @module proceed/tanstack-query
 */
import {
  type DataTag,
  experimental_streamedQuery,
  type InfiniteData,
  type QueryFunction,
} from '@tanstack/query-core';
import type { CallOptions } from '../client/index.js';

/** Every key of this module starts with this, then the collection, the procedure and the call. */
export const keyRoot = 'proceed';

type AnyCall = (input?: never, options?: CallOptions) => Promise<unknown>;

/** What a procedure's client function takes as input (undefined in it when it may be left out). */
type InputOf<F> = F extends (input: infer I, options?: CallOptions) => Promise<unknown> ? I : never;
type OutputOf<F> = F extends (...args: never[]) => Promise<infer O> ? O : never;

/** Which kind of cache entry a key is for: the kinds never share an entry. */
export type QueryKind = 'query' | 'infinite' | 'stream';

/** The key of one call of a procedure. */
export type ProcedureKey<C extends string, N extends string, K extends QueryKind, I> = readonly [
  typeof keyRoot,
  C,
  N,
  { kind: K; input: I },
];

/** `{ input }`, which may be left out, or hold no input, when the procedure needs none. */
type InputArgument<I> = undefined extends I ? [options?: { input?: I }] : [options: { input: I }];

/** Where a cursor page starts: after `cursor`, towards older (`forward`) or newer (`backward`) items. */
export type PageParam = { cursor: string; direction: 'forward' | 'backward' } | undefined;

/** A cursor page as `cursorPage()` answers it. */
type CursorPageLike = { data: readonly unknown[]; nextCursor: string | null; prevCursor: string | null };

/** The input of a cursor-paginated procedure less what the pages decide. */
type PagedInput<I> = I extends object ? Omit<I, 'cursor' | 'direction'> : I;

export interface QueryOptions<C extends string, N extends string, I, O> {
  queryKey: DataTag<ProcedureKey<C, N, 'query', I>, O, Error>;
  queryFn: (context: { signal: AbortSignal }) => Promise<O>;
}

export interface MutationOptions<C extends string, N extends string, I, O> {
  mutationKey: readonly [typeof keyRoot, C, N];
  mutationFn: (input: I) => Promise<O>;
}

export interface InfiniteOptions<C extends string, N extends string, I, O> {
  queryKey: DataTag<ProcedureKey<C, N, 'infinite', I>, InfiniteData<O, PageParam>, Error>;
  queryFn: (context: { signal: AbortSignal; pageParam: PageParam }) => Promise<O>;
  initialPageParam: PageParam;
  getNextPageParam: (lastPage: O) => PageParam | null;
  getPreviousPageParam: (firstPage: O, allPages: O[], firstPageParam: PageParam) => PageParam | null;
}

export interface StreamedOptions<C extends string, N extends string, I, E> {
  queryKey: DataTag<ProcedureKey<C, N, 'stream', I>, E[], Error>;
  queryFn: QueryFunction<E[], ProcedureKey<C, N, 'stream', I>>;
}

/** A key that matches calls of a procedure: all of them, those with an input, or of one kind. */
type KeyFilter<I> = { input?: I extends object ? Partial<I> : I; kind?: QueryKind };

/** The options of one procedure. */
export type ProcedureQueries<C extends string, N extends string, F> = {
  /** Matches every cached call of this procedure, or those whose input holds `input`. */
  key(filter?: KeyFilter<InputOf<F>>): readonly unknown[];
} & (OutputOf<F> extends AsyncIterable<unknown>
  ? // An event stream or a socket: a query of one call would cache the open stream itself.
    unknown
  : {
      /** A query of one call. */
      queryOptions(...args: InputArgument<InputOf<F>>): QueryOptions<C, N, InputOf<F>, OutputOf<F>>;
      /** A mutation calling the procedure with the mutation's variables as input. */
      mutationOptions(): MutationOptions<C, N, InputOf<F>, OutputOf<F>>;
    }) &
  (OutputOf<F> extends CursorPageLike
    ? {
        /** An infinite query over the cursor pages, older with `fetchNextPage`, newer with `fetchPreviousPage`. */
        infiniteOptions(
          ...args: InputArgument<PagedInput<InputOf<F>>>
        ): InfiniteOptions<C, N, PagedInput<InputOf<F>>, OutputOf<F>>;
      }
    : unknown) &
  (OutputOf<F> extends AsyncIterable<infer E>
    ? {
        /** A query whose data is the events received so far, growing as they arrive. */
        streamedOptions(
          ...args: [...InputArgument<InputOf<F>>, refetch?: { refetchMode?: 'append' | 'reset' | 'replace' }]
        ): StreamedOptions<C, N, InputOf<F>, E>;
      }
    : unknown);

/** The options of a collection's procedures, by name. */
export type CollectionQueries<C extends string, CC> = {
  readonly [N in keyof CC & string]: ProcedureQueries<C, N, CC[N]>;
} & {
  /** Matches every cached call of this collection's procedures. */
  key(): readonly [typeof keyRoot, C];
};

/** TanStack Query options for a typed client's every procedure (see {@link queryUtils}). */
export type QueryUtils<CL> = {
  readonly [C in Exclude<keyof CL, '$isProblem'> & string]: CollectionQueries<C, CL[C]>;
} & {
  /** Matches every cached call made through these options. */
  key(): readonly [typeof keyRoot];
};

function inputOf(options: { input?: unknown } | undefined): unknown {
  return options?.input;
}

function procedureQueries(collection: string, name: string, call: AnyCall): Record<string, unknown> {
  const run = (input: unknown, signal?: AbortSignal) =>
    (call as (input: unknown, options?: CallOptions) => Promise<unknown>)(
      input,
      signal === undefined ? undefined : { signal },
    );
  const keyOf = (kind: QueryKind, input: unknown) =>
    [keyRoot, collection, name, input === undefined ? { kind } : { kind, input }] as const;
  return {
    key(filter?: { input?: unknown; kind?: QueryKind }) {
      if (filter === undefined || (filter.input === undefined && filter.kind === undefined))
        return [keyRoot, collection, name];
      const match: Record<string, unknown> = {};
      if (filter.kind !== undefined) match.kind = filter.kind;
      if (filter.input !== undefined) match.input = filter.input;
      return [keyRoot, collection, name, match];
    },
    queryOptions(options?: { input?: unknown }) {
      const input = inputOf(options);
      return {
        queryKey: keyOf('query', input),
        queryFn: ({ signal }: { signal: AbortSignal }) => run(input, signal),
      };
    },
    mutationOptions() {
      return { mutationKey: [keyRoot, collection, name], mutationFn: (input: unknown) => run(input) };
    },
    infiniteOptions(options?: { input?: unknown }) {
      const input = inputOf(options);
      return {
        queryKey: keyOf('infinite', input),
        queryFn: ({ signal, pageParam }: { signal: AbortSignal; pageParam: PageParam }) =>
          run({ ...(input as object | undefined), ...pageParam }, signal),
        initialPageParam: undefined,
        // An empty page, or a page with nothing older, ends the list that way.
        getNextPageParam: (last: CursorPageLike) =>
          last.nextCursor === null ? null : { cursor: last.nextCursor, direction: 'forward' },
        // Back up towards newer pages only below the newest one (a window `maxPages` moved down):
        // from the newest page an empty page would be prepended, and every refetch, which starts
        // from the first page's cursor, would then end at it with an empty list. Posts newer than
        // the newest page come with a refetch, which asks for the newest page again.
        getPreviousPageParam: (first: CursorPageLike, _pages: unknown, firstParam: PageParam) =>
          firstParam === undefined || first.prevCursor === null
            ? null
            : { cursor: first.prevCursor, direction: 'backward' },
      };
    },
    streamedOptions(
      options?: { input?: unknown },
      refetch?: { refetchMode?: 'append' | 'reset' | 'replace' },
    ) {
      const input = inputOf(options);
      return {
        queryKey: keyOf('stream', input),
        queryFn: experimental_streamedQuery({
          streamFn: ({ signal }) => run(input, signal) as Promise<AsyncIterable<unknown>>,
          ...(refetch?.refetchMode === undefined ? {} : { refetchMode: refetch.refetchMode }),
        }),
      };
    },
  };
}

/**
 * TanStack Query options for every procedure of a typed client: keys from the collection, the
 * procedure and the input, so they cannot drift from what is called.
 *
 * @example
 * const api = createClient<typeof blogApi>({ baseUrl });
 * const queries = queryUtils(api);
 * useQuery(queries.posts.getPost.queryOptions({ input: { id } }));
 * useInfiniteQuery(queries.posts.listPosts.infiniteOptions({ input: { limit: 20 } }));
 * useMutation({ ...queries.posts.createPost.mutationOptions(), onSuccess: () =>
 *   queryClient.invalidateQueries({ queryKey: queries.posts.listPosts.key() }) });
 */
export function queryUtils<CL extends object>(client: CL): QueryUtils<CL> {
  const collections = new Map<string, unknown>();
  return new Proxy({} as QueryUtils<CL>, {
    get(_target, collection) {
      if (collection === 'key') return () => [keyRoot];
      if (typeof collection !== 'string') return undefined;
      const known = collections.get(collection);
      if (known !== undefined) return known;
      const procedures = new Map<string, unknown>();
      const queries = new Proxy(
        {},
        {
          get(_inner, name) {
            if (name === 'key') return () => [keyRoot, collection];
            if (typeof name !== 'string') return undefined;
            const existing = procedures.get(name);
            if (existing !== undefined) return existing;
            const call = (client as Record<string, Record<string, AnyCall>>)[collection]?.[name];
            if (typeof call !== 'function') return undefined;
            const made = procedureQueries(collection, name, call);
            procedures.set(name, made);
            return made;
          },
        },
      );
      collections.set(collection, queries);
      return queries;
    },
  });
}
