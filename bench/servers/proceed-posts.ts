/**
 * Proceed as its users write it: `resource()` views, `cursorInput`/`cursorPage` with
 * `paginateKeyset` over the shared data access, `z.uuid()` ids, `authPlugin` with a
 * TokenService, a revocation store and a user loader, `.guard(authenticated)` on the create.
 * With BENCH_MCP=1 the same procedures are MCP tools too (`mcpPlugin`); BENCH_MCP_PARTS=1 adds
 * routes that take a tool call apart (bench/servers/mcp-parts.ts).
 * Every default on (entity tags, request ids, the request log at info), unless BENCH_OFF names
 * some to turn off: `entity-tags`, `request-log`, `request-ids` (comma-separated), so that the
 * cost of each is measured. The app of `proceedjs` never asks for `app.server`, so Node's own http
 * module serves it (docs/deployment.md); BENCH_ADAPTER=fastify asks for it, so that Fastify serves
 * the same app; BENCH_ADAPTER=node makes it with `proceedjs/node`.
 */
import { fileURLToPath } from 'node:url';
import type * as Proceed from 'proceedjs';
import {
  type AuthContext,
  authenticated,
  authPlugin,
  MemoryRevocationStore,
  TokenService,
} from 'proceedjs/auth';
import { cursorInput, cursorPage, paginateKeyset } from 'proceedjs/pagination';
import { resource } from 'proceedjs/resource';
import { z } from 'zod';
import { announce } from './announce.js';
import { postsData, secret, type UserRow, userId } from './posts.js';

// Everything from the one entry the app is made with: `proceedjs/node` loads nothing of Fastify.
const { createApp, NotFoundError, procedure, procedures }: typeof Proceed =
  process.env.BENCH_ADAPTER === 'node' ? await import('proceedjs/node') : await import('proceedjs');

type Ctx = AuthContext<UserRow>;

const Post = resource('Post', {
  public: { id: z.uuid(), title: z.string(), excerpt: z.string() },
  authenticated: {
    content: z.string(),
    authorId: z.uuid(),
    status: z.enum(['draft', 'published', 'archived']),
  },
});

const p = () => procedure<Ctx>();

const postsApi = procedures('posts', {
  listPosts: p()
    .input(cursorInput({ cursor: z.uuid() }))
    .output(cursorPage(Post.public))
    .query(({ input }) => paginateKeyset(input, postsData.readKeyset, { key: 'id' })),
  getPost: p()
    .input(z.object({ id: z.uuid() }))
    .output(Post.public)
    .query(async ({ input }) => {
      const post = await postsData.findPost(input.id);
      if (post === undefined) throw new NotFoundError('No such post');
      return post;
    }),
  createPost: p()
    .guard(authenticated)
    .input(
      z.object({
        title: z.string().min(1).max(200),
        excerpt: z.string().max(500).default(''),
        content: z.string().min(1).max(50_000),
      }),
    )
    .output(Post.authenticated)
    .mutation(({ input, ctx }) => postsData.insertPost({ ...input, authorId: ctx.user.id })),
});

const off = new Set((process.env.BENCH_OFF ?? '').split(',').filter(Boolean));
const tokens = new TokenService({ secret, store: new MemoryRevocationStore() });
export const app = createApp<Ctx>({
  ...(await tracingOf(process.env.BENCH_TRACING)),
  ...(off.has('entity-tags') ? { entityTags: false } : {}),
  ...(off.has('request-log')
    ? { logger: false }
    : process.env.BENCH_LOG_LEVEL === undefined
      ? {}
      : { logger: { level: process.env.BENCH_LOG_LEVEL } }),
  ...(off.has('request-ids') ? { requestIds: false } : {}),
});
await app.register(authPlugin, { tokens, userLoader: (id) => postsData.findUser(id) });
// BENCH_MCP=1: the same procedures as MCP tools too (bench/run.ts, the mcp section).
if (process.env.BENCH_MCP === '1') {
  const { mcpPlugin } = await import('proceedjs/mcp');
  await app.register(mcpPlugin, { collections: ['posts'] });
}
app.mount([postsApi]);
// BENCH_MCP_PARTS=1: routes that take a tool call apart (bench/mcp-parts.ts).
if (process.env.BENCH_MCP_PARTS === '1') (await import('./mcp-parts.js')).addPartRoutes(app);
// As an app that uses a Fastify plugin does: Fastify is loaded and serves it.
if (process.env.BENCH_ADAPTER === 'fastify') void app.server;
export const { accessToken } = await tokens.issuePair(userId);

/**
 * BENCH_TRACING: `api`, `tracing: openTelemetry()` with no SDK started (the API's no-op spans);
 * `sdk`, the SDK as an app starts it (a tracer provider sampling every request, a batch processor,
 * the async-hooks context manager, W3C propagation) exporting to nowhere, so that what is timed
 * is the spans' making, not a collector. Unset: no tracing option at all.
 */
async function tracingOf(mode: string | undefined) {
  if (mode === undefined || mode === '') return {};
  const { openTelemetry } = await import('proceedjs/opentelemetry');
  if (mode === 'sdk') {
    const [
      { context, propagation, trace },
      { AsyncLocalStorageContextManager },
      { W3CTraceContextPropagator },
      sdk,
    ] = await Promise.all([
      import('@opentelemetry/api'),
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/core'),
      import('@opentelemetry/sdk-trace-base'),
    ]);
    const nowhere = {
      export: (_spans: unknown, done: (result: { code: number }) => void) => done({ code: 0 }),
      shutdown: async () => {},
    };
    trace.setGlobalTracerProvider(
      new sdk.BasicTracerProvider({ spanProcessors: [new sdk.BatchSpanProcessor(nowhere)] }),
    );
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  } else if (mode !== 'api') throw new Error(`BENCH_TRACING is api or sdk, not ${mode}`);
  return { tracing: openTelemetry() };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const address = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
  announce({ address, token: accessToken });
  // A clean exit on SIGTERM lets `node --cpu-prof` write its profile (docs/performance.md).
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
}
