/**
 * A React page on the blog through `proceedjs/tanstack-query`, as an app would write it: the feed
 * as an infinite query that loads older posts when its end scrolls into view, and a form that
 * publishes a post and invalidates the posts' queries. tanstack-query.browser.test.ts bundles it
 * and drives it in Chromium; the page reads the blog's origin, the page size and a signed-in
 * user's token from the JSON in `#config` that the test's HTML carries.
 */
import {
  QueryClient,
  QueryClientProvider,
  useInfiniteQuery,
  useMutation,
  useQueryClient,
} from '@tanstack/react-query';
import { createClient } from 'proceedjs/client';
import { queryUtils } from 'proceedjs/tanstack-query';
import { type FormEvent, StrictMode, useEffect, useRef, useState } from 'react';
import { createRoot } from 'react-dom/client';
import type { api } from '../../src/app.js';

export interface PageConfig {
  api: string;
  limit: number;
  token: string;
}

const config = JSON.parse(document.getElementById('config')?.textContent ?? 'null') as PageConfig;
const queries = queryUtils(createClient<typeof api>({ baseUrl: config.api, token: config.token }));

function Feed() {
  const feed = useInfiniteQuery(queries.posts.listPosts.infiniteOptions({ input: { limit: config.limit } }));
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = feed;
  const end = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const element = end.current;
    if (element === null || !hasNextPage || isFetchingNextPage) return;
    const observer = new IntersectionObserver((entries) => {
      // The default would cancel a page on its way and ask for it again.
      if (entries.some((entry) => entry.isIntersecting)) void fetchNextPage({ cancelRefetch: false });
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [hasNextPage, isFetchingNextPage, fetchNextPage]);

  return (
    <section>
      {feed.error === null ? null : <p role="alert">{feed.error.message}</p>}
      <ul id="posts">
        {feed.data?.pages.flatMap((page) =>
          page.data.map((post) => (
            <li key={post.id} className="post">
              {post.title}
            </li>
          )),
        )}
      </ul>
      <div ref={end} id="end" />
      {isFetchingNextPage ? <p>Loading older posts…</p> : null}
    </section>
  );
}

function NewPost() {
  const queryClient = useQueryClient();
  const [title, setTitle] = useState('');
  const create = useMutation({
    ...queries.posts.createPost.mutationOptions(),
    // Returned, so the mutation stays pending until the lists have been fetched again.
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queries.posts.key() }),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    create.mutate({ title, content: `${title}, written in the browser.`, status: 'published' });
  };
  return (
    <form onSubmit={submit}>
      <label>
        Title <input name="title" value={title} onChange={(event) => setTitle(event.target.value)} />
      </label>
      <button type="submit" disabled={create.isPending}>
        Publish
      </button>
      {create.error === null ? null : <p role="alert">{create.error.message}</p>}
    </form>
  );
}

const root = document.getElementById('root');
if (root === null) throw new Error('The page has no #root');
createRoot(root).render(
  <StrictMode>
    <QueryClientProvider client={new QueryClient()}>
      <main>
        <h1>Posts</h1>
        <NewPost />
        <Feed />
      </main>
    </QueryClientProvider>
  </StrictMode>,
);
