/**
 * The blog API: posts, users and auth on PGlite or PostgreSQL (CONTRACT §1, §4, §5).
 * `proceed start src/app.ts` and `npm start` at the repository root run it.
 */
import { type App, createApp, type EntryContext, type LoggerSetting, ProceedConfigError } from 'proceed';
import {
  authPlugin,
  hashPassword,
  PostgresRevocationStore,
  rateLimitFromEnv,
  resolveSecret,
  TokenService,
  verifyPassword,
} from 'proceed/auth';
import { docsPlugin } from 'proceed/openapi';
import { z } from 'zod';
import type { BlogContext } from './context.js';
import { openDatabase, type Repositories, repositories } from './db/index.js';
import { logMailer, type Mailer } from './mailer.js';
import { auth, rateLimitedAuthRoutes } from './procedures/auth.js';
import { posts } from './procedures/posts.js';
import { users } from './procedures/users.js';

/** Every collection of the blog: the typed client's `typeof api`. */
export const api = [auth, users, posts] as const;

export interface BlogOptions {
  /** Default `DATABASE_URL`, else `./.data/db`. */
  databaseUrl?: string;
  /** Default `JWT_SECRET`. */
  jwtSecret?: string;
  /** Default `NODE_ENV === 'production'`. */
  production?: boolean;
  /** Default `ADMIN_EMAIL` and `ADMIN_PASSWORD`: when both are set, this admin exists at start-up. */
  admin?: { email: string; password: string };
  /** Requests per minute per client IP on the auth routes. Default `AUTH_RATE_LIMIT`, else 10. */
  authRateLimit?: number;
  /** Where reset links go. Default: the log (the token is logged only outside production). */
  mailer?: Mailer;
  logger?: LoggerSetting;
  /** Trust `X-Forwarded-For` from a proxy in front (client IPs for rate limits). Default `TRUST_PROXY`. */
  trustProxy?: boolean | string;
}

function adminFromEnv(): BlogOptions['admin'] {
  const email = process.env.ADMIN_EMAIL;
  const password = process.env.ADMIN_PASSWORD;
  return email !== undefined && email !== '' && password !== undefined && password !== ''
    ? { email, password }
    : undefined;
}

/** `TRUST_PROXY`: `true`, or a comma-separated list of the proxies' addresses or subnets. */
function trustProxyFromEnv(value = process.env.TRUST_PROXY): boolean | string | undefined {
  if (value === undefined || value === '' || value === 'false') return undefined;
  return value === 'true' ? true : value;
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
) {
  if (!z.email().safeParse(admin.email).success) {
    throw new ProceedConfigError(`ADMIN_EMAIL "${admin.email}" is not an email address`);
  }
  if (admin.password.length < 8)
    throw new ProceedConfigError('ADMIN_PASSWORD must have at least 8 characters');
  const existing = await repos.users.findByEmail(admin.email);
  const upToDate =
    existing?.role === 'admin' &&
    existing.isActive &&
    (await verifyPassword(existing.passwordHash, admin.password));
  if (upToDate) return;
  const ensured = await repos.users.ensureAdmin({
    email: admin.email,
    name: 'Admin',
    passwordHash: await hashPassword(admin.password),
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

/**
 * Builds the blog app: opens and migrates the database, seeds the admin, wires auth and docs.
 *
 * @example
 * const app = await createBlogApp({ databaseUrl: 'memory://' });
 * await app.listen({ port: 3030 });
 */
export async function createBlogApp(options: BlogOptions = {}): Promise<App<BlogContext>> {
  const production = options.production ?? process.env.NODE_ENV === 'production';
  const database = await openDatabase(options.databaseUrl ?? process.env.DATABASE_URL);
  try {
    const repos = repositories(database.db);
    const trustProxy = options.trustProxy ?? trustProxyFromEnv();
    const app: App<BlogContext> = createApp<BlogContext>({
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      health: {
        check: async () => {
          await database.ping();
          return true;
        },
      },
      ...(trustProxy === undefined ? {} : { trustProxy }),
      // tokens, mailer and background need the app's logger; they exist before the first request.
      context: () => ({ repos, tokens, mailer, background: background.run }),
    });
    app.onClose(() => database.close());
    const background = backgroundTasks(app.log);
    // Registered after the database's, so it runs first: pending work finishes before the close.
    app.onClose(() => background.settle());

    const secret = resolveSecret({
      secret: options.jwtSecret ?? process.env.JWT_SECRET,
      production,
      logger: { warn: (message) => app.log.warn(message) },
    });
    const store = new PostgresRevocationStore(database);
    await store.ensureSchema();
    const tokens = new TokenService({ secret, store });
    const mailer: Mailer = options.mailer ?? logMailer(app.log, { production });

    const admin = options.admin ?? adminFromEnv();
    if (admin !== undefined) await seedAdmin(repos, tokens, admin);

    await app.register(authPlugin, {
      tokens,
      userLoader: (id: string) => repos.users.findById(id),
      rateLimit: { routes: rateLimitedAuthRoutes, max: options.authRateLimit ?? rateLimitFromEnv() },
    });
    app.mount(api);
    await app.register(docsPlugin, {
      routePrefix: '/api/docs',
      openapi: {
        info: {
          title: 'Proceed blog API',
          version: '1.0.0',
          description: 'Posts, users and auth: the reference application of the Proceed framework.',
        },
      },
    });
    return app;
  } catch (error) {
    await database.close();
    throw error;
  }
}

/**
 * The CLI's entry. `proceed routes`, `openapi` and `manifest` only read the app: without a
 * `DATABASE_URL` they get an in-memory database instead of creating `./.data/db`.
 */
export default (entry?: EntryContext): Promise<App<BlogContext>> =>
  createBlogApp(
    entry?.serve === false && process.env.DATABASE_URL === undefined ? { databaseUrl: 'memory://' } : {},
  );
