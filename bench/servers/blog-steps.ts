/**
 * Steps from a minimal Proceed app to the blog, each serving the blog's feed from the blog's
 * PostgreSQL database (DATABASE_URL, seeded by bench/servers/blog.ts: start that one first), for
 * `npm run bench:duel` (DUEL_SCENARIOS=feed): which part of the blog costs what
 * (docs/performance.md, "The blog by hand"). BLOG_STEP:
 * - `minimal`: the same input, view and statement as the blog's feed, on plain `pg`;
 * - `repositories`: the blog's repositories and posts procedures on a bare `createApp`;
 * - `auth`: that with `authPlugin` and the blog's one-statement user loader;
 * - `plugins`: that with the health check, rate limit, idempotency and docs plugins and every
 *   collection of the blog.
 * The blog itself is bench/servers/blog.ts. BENCH_OFF turns defaults off, as in
 * bench/servers/proceed-posts.ts: `entity-tags`, `request-log`, `request-ids`, `compression`
 * (comma-separated).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type App, createApp, procedure, procedures } from 'proceedjs';
import {
  authPlugin,
  PostgresRevocationStore,
  type TokenService,
  TokenService as Tokens,
} from 'proceedjs/auth';
import { idempotencyPlugin, PostgresIdempotencyStore } from 'proceedjs/idempotency';
import { docsPlugin } from 'proceedjs/openapi';
import { cursorInput, cursorPage, type KeysetQuery, paginateKeyset } from 'proceedjs/pagination';
import { resource } from 'proceedjs/resource';
import { z } from 'zod';
import { announce } from './announce.js';

// The compiled blog, as bench/servers/blog.ts runs it (`npm run build` first).
const compiled = (path: string) => new URL(`../../examples/blog/dist/${path}`, import.meta.url).href;
const [
  { fileAttachments, openDatabase, repositories, signedInUserSql },
  { auth, authRateLimit },
  { posts },
  { users },
] = (await Promise.all([
  import(compiled('db/index.js')),
  import(compiled('procedures/auth.js')),
  import(compiled('procedures/posts.js')),
  import(compiled('procedures/users.js')),
])) as [
  typeof import('../../examples/blog/src/db/index.js'),
  typeof import('../../examples/blog/src/procedures/auth.js'),
  typeof import('../../examples/blog/src/procedures/posts.js'),
  typeof import('../../examples/blog/src/procedures/users.js'),
];

const databaseUrl = process.env.DATABASE_URL;
if (databaseUrl === undefined) throw new Error('bench/servers/blog-steps.ts runs on DATABASE_URL');
const step = process.env.BLOG_STEP ?? 'minimal';
const steps = ['minimal', 'repositories', 'auth', 'plugins'];
if (!steps.includes(step)) throw new Error(`BLOG_STEP is one of ${steps.join(', ')}, not ${step}`);
const off = new Set((process.env.BENCH_OFF ?? '').split(',').filter(Boolean));
const logger = off.has('request-log') ? false : { level: 'warn' };
const defaultsOff = {
  ...(off.has('entity-tags') ? { entityTags: false as const } : {}),
  ...(off.has('request-ids') ? { requestIds: false as const } : {}),
  ...(off.has('compression') ? { compression: false as const } : {}),
};
const statuses = ['draft', 'published', 'archived'] as const;

/** The blog's feed, written as a small app writes it: a pool, one statement per direction. */
function minimalApp(): App {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const Post = resource('Post', {
    public: { id: z.uuid(), title: z.string(), excerpt: z.string() },
    authenticated: { content: z.string(), authorId: z.uuid(), status: z.enum(statuses) },
  });
  const columns = "SELECT id, title, excerpt FROM posts WHERE status = 'published'";
  const read = ({ cursor, towards, limit }: KeysetQuery) => {
    const older = towards === 'older';
    const where = cursor === undefined ? '' : ` AND id ${older ? '<' : '>'} $2`;
    const text = `${columns}${where} ORDER BY id ${older ? 'DESC' : 'ASC'} LIMIT $1`;
    const name = `steps_feed_${towards}${cursor === undefined ? '' : '_from'}`;
    const values = cursor === undefined ? [limit] : [limit, cursor];
    return pool
      .query<{ id: string; title: string; excerpt: string }>({ name, text, values })
      .then((result) => result.rows);
  };
  const feed = procedures('posts', {
    listPosts: procedure()
      .input(
        cursorInput({
          cursor: z.uuid(),
          filters: { authorId: z.uuid().optional(), status: z.enum(statuses).optional() },
        }),
      )
      .output(cursorPage(Post.public))
      .query(({ input }) => paginateKeyset(input, read, { key: 'id' })),
  });
  return createApp({ logger, ...defaultsOff }).mount([feed]);
}

async function blogStep(): Promise<App> {
  const database = await openDatabase(databaseUrl);
  const services: { repos: ReturnType<typeof repositories>; tokens?: TokenService } = {
    // No route of these steps reads or writes attachments.
    repos: repositories(database, {
      attachments: fileAttachments(database.db, mkdtempSync(join(tmpdir(), 'bench-attachments-'))),
    }),
  };
  const withPlugins = step === 'plugins';
  const app = createApp({
    logger,
    ...defaultsOff,
    context: () => services,
    ...(step === 'repositories' ? { userFromContext: true } : {}),
    ...(withPlugins
      ? {
          health: { check: () => database.ping().then(() => true) },
          rateLimit: { limits: { [authRateLimit.name]: { max: authRateLimit.max } } },
        }
      : {}),
  });
  if (step !== 'repositories') {
    const store = new PostgresRevocationStore(database);
    await store.ensureSchema();
    const tokens = new Tokens({
      secret: process.env.JWT_SECRET ?? 'a bench secret of at least thirty-two characters',
      store,
      userId: z.uuid(),
    });
    services.tokens = tokens;
    await app.register(authPlugin, { tokens, userLoader: store.userLoader(signedInUserSql) });
  }
  if (withPlugins)
    await app.register(idempotencyPlugin, { store: new PostgresIdempotencyStore(database), creates: true });
  app.mount(withPlugins ? [auth, users, posts] : [posts]);
  if (withPlugins)
    await app.register(docsPlugin, {
      routePrefix: '/api/docs',
      openapi: { info: { title: 'steps', version: '1' } },
    });
  return app as unknown as App;
}

const app = step === 'minimal' ? minimalApp() : await blogStep();
const address = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false });
announce({ address });
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
