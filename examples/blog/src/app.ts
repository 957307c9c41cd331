/**
 * The blog API: posts, users and auth on PGlite or PostgreSQL (docs/blog.md).
 * main.ts is its entry for the CLI; `npm start` at the repository root runs the compiled one.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import {
  authPlugin,
  hashPassword,
  PostgresRevocationStore,
  resolveSecret,
  type ScryptCost,
  TokenService,
  type UserLoader,
  verifyPassword,
} from 'proceedjs/auth';
import { type IdempotencyStore, idempotencyPlugin, PostgresIdempotencyStore } from 'proceedjs/idempotency';
import { mcpPlugin } from 'proceedjs/mcp';
import { metricsPlugin } from 'proceedjs/metrics';
import { type App, createApp, ProceedConfigError } from 'proceedjs/node';
import { docsPlugin } from 'proceedjs/openapi';
import { z } from 'zod';
import type { BlogContext } from './context.js';
import {
  type AttachmentStore,
  type Database,
  type DatabaseLocation,
  describePostgres,
  fileAttachments,
  openDatabase,
  type Repositories,
  repositories,
  type SignedInUser,
  signedInUserSql,
} from './db/index.js';
import { writableDirectory } from './db/writable.js';
import { PostFeed } from './feed.js';
import { logMailer, type Mailer } from './mailer.js';
import { auth, authRateLimit } from './procedures/auth.js';
import { posts } from './procedures/posts.js';
import { users } from './procedures/users.js';
import { connectRedis } from './redis.js';
import { limits } from './resources.js';
import { type AttachmentsLocation, type BlogOptions, type BlogSettings, readSettings } from './settings.js';

export type { BlogOptions } from './settings.js';

/** Every collection of the blog: the typed client's `typeof api`. */
export const api = [auth, users, posts] as const;

/** The admin settings, checked before anything is opened. */
function checkAdmin(admin: BlogSettings['admin']): void {
  if (admin === undefined) return;
  if (!z.email().safeParse(admin.email).success) {
    throw new ProceedConfigError(`ADMIN_EMAIL "${admin.email}" is not an email address`);
  }
  // No longer than the users' inputs allow: the views say no email is.
  if (admin.email.length > limits.email)
    throw new ProceedConfigError(`ADMIN_EMAIL is longer than ${limits.email} characters`);
  if (admin.password.length < 8)
    throw new ProceedConfigError('ADMIN_PASSWORD must have at least 8 characters');
}

/**
 * Makes sure the configured admin exists with the configured password. An account that was
 * anything else before (a user who registered that email, an old password, deactivated) is
 * promoted or re-keyed, and every session it had ends: they were not the admin's.
 */
async function seedAdmin(
  repos: Repositories,
  tokens: TokenService,
  admin: { email: string; password: string },
  passwordCost: ScryptCost,
) {
  const existing = await repos.users.findByEmail(admin.email);
  const upToDate =
    existing?.role === 'admin' &&
    existing.isActive &&
    (await verifyPassword(existing.passwordHash, admin.password));
  if (upToDate) return;
  const ensured = await repos.users.ensureAdmin({
    email: admin.email,
    name: 'Admin',
    passwordHash: await hashPassword(admin.password, passwordCost),
  });
  if (existing !== undefined) await tokens.revokeAllForUser(ensured.id);
}

/** Work that runs after the answer has left; shutdown waits for what is still running. */
function backgroundTasks(log: App['log']) {
  const running = new Set<Promise<void>>();
  return {
    run(task: () => Promise<void>): void {
      const done: Promise<void> = task()
        .catch((error: unknown) => log.error({ err: error }, 'Background task failed'))
        .finally(() => running.delete(done));
      running.add(done);
    },
    async settle(): Promise<void> {
      await Promise.allSettled([...running]);
    },
  };
}

/** Which database the blog runs on, for the start-up log: no password. */
function describeDatabase(location: DatabaseLocation | undefined, database: Database): string {
  switch (location?.kind) {
    case 'postgres':
      return `PostgreSQL ${describePostgres(location.url)}`;
    case 'directory':
      return `PGlite (embedded) in ${location.path}`;
    case 'memory':
      return 'PGlite (embedded) in memory';
    default:
      return `${database.kind === 'pglite' ? 'PGlite (embedded)' : 'PostgreSQL'}, opened by the caller`;
  }
}

/** What serving needs: opened in {@link buildBlogApp}, unless the app is only inspected. */
interface BlogServices {
  database: Database;
  context: Pick<BlogContext, 'repos' | 'tokens' | 'mailer' | 'passwordCost' | 'background' | 'feed'>;
  userLoader: UserLoader<SignedInUser>;
  idempotencyKeys: IdempotencyStore;
}

/**
 * Auth, idempotent creates, the routes and the documentation: the same whether the app serves or
 * is only inspected. What the plugins need of the database they ask for once the app serves.
 */
async function wire(app: App<BlogContext>, services: () => BlogServices): Promise<void> {
  await app.register(authPlugin, () => ({
    tokens: services().context.tokens,
    userLoader: services().userLoader,
  }));
  // A create sent again with its Idempotency-Key replays the first answer (docs/blog.md).
  await app.register(idempotencyPlugin, { store: () => services().idempotencyKeys, creates: true });
  // Posts and users as tools for AI agents at /mcp (docs/mcp.md): each caller sees the tools
  // its guards allow (the users' only to admins), each call answers as its REST route would.
  await app.register(mcpPlugin, { collections: ['posts', 'users'], name: 'proceed-blog' });
  app.mount(api);
  await app.register(docsPlugin, {
    routePrefix: '/api/docs',
    openapi: {
      info: {
        title: 'Proceed blog API',
        version: '1.0.0',
        description: 'Posts, users and auth: the reference application of the Proceed framework.',
        license: { name: 'MIT', identifier: 'MIT' },
        // A copy of the blog puts its own team here: linters ask for someone to write to.
        contact: { name: 'Blog API team', email: 'blog-api@example.com' },
      },
      tags: {
        auth: 'Accounts and sessions: register, log in, refresh, log out, password resets',
        users: 'People: public profiles, your own account, and user management for admins',
        posts: 'Posts: drafts, publishing and archiving, attachments, readable by anyone once published',
      },
    },
  });
}

/**
 * The default attachment store: files in the configured directory (or a temporary one, removed
 * when the app closes).
 */
async function attachmentsStore(
  app: App<BlogContext>,
  database: Database,
  location: AttachmentsLocation,
): Promise<AttachmentStore> {
  let directory: string;
  if (location.kind === 'directory') {
    directory = location.path;
    await writableDirectory(directory, 'ATTACHMENTS_DIR');
  } else {
    directory = await mkdtemp(join(tmpdir(), 'proceed-blog-attachments-'));
    app.onClose(() => rm(directory, { recursive: true, force: true }));
  }
  app.log.info(`Attachments: ${directory}${location.kind === 'temporary' ? ' (removed at exit)' : ''}`);
  return fileAttachments(database.db, directory);
}

/**
 * Builds the blog app: checks its settings, opens and migrates the database, seeds the admin,
 * wires auth and docs. Every setting is checked before the database opens, so a refusal (no
 * JWT_SECRET in production, a bad DATABASE_URL) comes at once, not after a database start.
 *
 * @example
 * const app = await createBlogApp({ databaseUrl: 'memory://' });
 * await app.listen({ port: 3030 });
 */
export async function createBlogApp(options: BlogOptions = {}): Promise<App<BlogContext>> {
  const settings = readSettings(options);
  checkAdmin(settings.admin);
  // An inspected app serves nothing and connects to nothing.
  const store =
    settings.redisUrl === undefined || options.inspect === true
      ? undefined
      : await connectRedis(settings.redisUrl);
  const redis = store?.redis;
  try {
    const app = await buildBlogApp(options, settings, redis);
    if (store !== undefined) {
      const policy = settings.rateLimitOnStoreError === 'allow' ? 'unlimited' : 'refused (503)';
      app.log.info(
        `Rate limits: shared in Redis at ${store.where}; while it is unreachable, sign-ins are ${policy}`,
      );
      if (!store.reachable) app.log.warn(`Redis at ${store.where} is not reachable yet; retrying`);
    }
    return app;
  } catch (error) {
    redis?.disconnect();
    throw error;
  }
}

async function buildBlogApp(
  options: BlogOptions,
  settings: BlogSettings,
  redis: Redis | undefined,
): Promise<App<BlogContext>> {
  const { production, admin, trustProxy } = settings;

  // What handlers get; in place before the app listens, so before the first request.
  let services!: BlogServices;
  const app: App<BlogContext> = createApp<BlogContext>({
    ...(options.inspect === undefined ? {} : { inspect: options.inspect }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    // Loaded only when traced: an untraced blog loads no OpenTelemetry.
    ...(options.telemetry === undefined
      ? {}
      : { tracing: (await import('proceedjs/opentelemetry')).openTelemetry() }),
    health: {
      check: async () => {
        await services.database.ping();
        return true;
      },
    },
    ...(trustProxy === undefined ? {} : { trustProxy }),
    ...(settings.cors === undefined ? {} : { cors: settings.cors }),
    // AUTH_RATE_LIMIT sets the sign-in routes' limit (the rule is declared on those procedures).
    rateLimit: {
      limits: { [authRateLimit.name]: { max: settings.authRateLimit } },
      ...(redis === undefined ? {} : { redis, onStoreError: settings.rateLimitOnStoreError }),
    },
    context: () => services.context,
  });
  // Registered first, so it runs last: the spans of everything that closes after are sent too.
  const { telemetry } = options;
  if (telemetry !== undefined) app.onClose(() => telemetry.shutdown());
  if (redis !== undefined) {
    // Registered first, so it runs last: after the database and the pending work.
    app.onClose(() => redis.disconnect());
  }
  await wire(app, () => services);
  // Read by proceed routes/openapi/manifest: no secret, no database.
  if (app.inspected) return app;

  const secret = resolveSecret({
    secret: settings.jwtSecret,
    production,
    workers: settings.workers,
    logger: { warn: (message) => app.log.warn(message) },
  });

  const database =
    options.database ??
    (await openDatabase(settings.database, {
      // One JSON line in the app's log, not a line of plain text among them.
      onPoolError: (error) => app.log.warn({ err: error }, 'PostgreSQL connection error'),
    }));
  app.log.info(
    `Database: ${describeDatabase(options.database === undefined ? settings.database : undefined, database)}`,
  );
  // Allowed (a demo, one small instance), but rarely meant: said where an operator looks.
  if (production && database.kind === 'pglite')
    app.log.warn(
      'NODE_ENV=production on the embedded database (PGlite): one process, its data on this machine only (in a container: gone with it, unless on a volume). Set DATABASE_URL=postgres://… for production (docs/deployment.md).',
    );
  try {
    if (settings.metricsPort !== undefined) {
      await app.register(metricsPlugin, {
        port: settings.metricsPort,
        ...(database.poolStats === undefined ? {} : { pool: database.poolStats }),
      });
    }
    const attachments = options.attachments ?? (await attachmentsStore(app, database, settings.attachments));
    const repos = repositories(database, { attachments });
    app.onClose(() => database.close());
    const background = backgroundTasks(app.log);
    // Registered after the database's, so it runs first: pending work finishes before the close.
    app.onClose(() => background.settle());

    const store = new PostgresRevocationStore(database);
    await store.ensureSchema();
    // A token naming anything but a uuid is refused before it reaches a query.
    const tokens = new TokenService({ secret, store, userId: z.uuid() });
    const mailer: Mailer = options.mailer ?? logMailer({ production });

    const passwordCost = settings.passwordCost ?? {};
    if (admin !== undefined) await seedAdmin(repos, tokens, admin, passwordCost);
    const feed = await PostFeed.start(database, app.log);
    // Registered after the database's, so it runs before it: the listening connection goes first.
    app.onClose(() => feed.close());
    services = {
      database,
      context: { repos, tokens, mailer, passwordCost, background: background.run, feed },
      // The user and the token's revocation in one statement: one round trip per signed-in request.
      userLoader: store.userLoader<SignedInUser>(signedInUserSql),
      idempotencyKeys: new PostgresIdempotencyStore(database),
    };
    return app;
  } catch (error) {
    await database.close();
    throw error;
  }
}
