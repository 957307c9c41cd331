import { type InfiniteData, QueryClient } from '@tanstack/query-core';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../client/index.js';
import { eventStream } from '../core/events.js';
import { procedure, procedures } from '../core/procedure.js';
import { webSocket } from '../core/sockets.js';
import { cursorInput, cursorPage } from '../pagination/cursor.js';
import { type PageParam, queryUtils } from './index.js';

const Post = z.object({ id: z.string(), title: z.string(), at: z.date() });
const posts = procedures('posts', {
  listPosts: procedure()
    .input(cursorInput({ filters: { tag: z.string().optional() } }))
    .output(cursorPage(Post))
    .query(() => ({ data: [], nextCursor: null, prevCursor: null })),
  getPost: procedure()
    .input(z.object({ id: z.string() }))
    .output(Post)
    .query(() => ({ id: '1', title: 't', at: new Date() })),
  createPost: procedure()
    .input(z.object({ title: z.string() }))
    .output(Post)
    .mutation(() => ({ id: '1', title: 't', at: new Date() })),
  postEvents: procedure()
    .rest({ method: 'GET', path: '/posts/events' })
    .output(eventStream(Post))
    .query(async function* () {}),
  livePosts: procedure()
    .rest({ method: 'GET', path: '/posts/live' })
    .output(webSocket({ receive: z.object({ follow: z.string() }), send: Post }))
    .query(async function* () {}),
});
const queries = queryUtils(createClient<readonly [typeof posts]>({ baseUrl: 'http://x' }));
const queryClient = new QueryClient();
type WirePost = { id: string; title: string; at: string };

describe('queryUtils types', () => {
  it("types an infinite query's pages as the procedure's output", async () => {
    const data = await queryClient.fetchInfiniteQuery(
      queries.posts.listPosts.infiniteOptions({ input: { tag: 'x' } }),
    );
    expectTypeOf(data).toEqualTypeOf<
      InfiniteData<{ data: WirePost[]; nextCursor: string | null; prevCursor: string | null }, PageParam>
    >();
    expectTypeOf(data.pages[1]?.data[0]).toEqualTypeOf<WirePost | undefined>();
  });

  it('types a query, its cached data and a mutation', async () => {
    const options = queries.posts.getPost.queryOptions({ input: { id: '1' } });
    expectTypeOf(await queryClient.fetchQuery(options)).toEqualTypeOf<WirePost>();
    expectTypeOf(queryClient.getQueryData(options.queryKey)).toEqualTypeOf<WirePost | undefined>();
    expectTypeOf(queries.posts.createPost.mutationOptions().mutationFn)
      .parameter(0)
      .toEqualTypeOf<{ title: string }>();
    expectTypeOf(await queryClient.fetchQuery(queries.posts.postEvents.streamedOptions())).toEqualTypeOf<
      WirePost[]
    >();
    // A socket the page only reads: its messages so far.
    expectTypeOf(await queryClient.fetchQuery(queries.posts.livePosts.streamedOptions())).toEqualTypeOf<
      WirePost[]
    >();
  });

  it('refuses a wrong input, offers pages and streams only where they exist, and no query of a stream', () => {
    // @ts-expect-error: id must be a string
    queries.posts.getPost.queryOptions({ input: { id: 1 } });
    // @ts-expect-error: getPost needs its input
    queries.posts.getPost.queryOptions();
    // @ts-expect-error: not a cursor page
    queries.posts.getPost.infiniteOptions;
    // @ts-expect-error: not an event stream
    queries.posts.getPost.streamedOptions;
    // @ts-expect-error: a query would cache the open stream, not its events
    queries.posts.postEvents.queryOptions;
    // @ts-expect-error: nor a socket's
    queries.posts.livePosts.mutationOptions;
    // @ts-expect-error: the pages choose the cursor
    queries.posts.listPosts.infiniteOptions({ input: { cursor: 'x' } });
    // @ts-expect-error: no such procedure
    queries.posts.listUsers;
  });
});
