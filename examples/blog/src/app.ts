/**
 * The blog API: posts, users and auth on PGlite or PostgreSQL (CONTRACT §1, §4, §5).
 * `proceed start src/app.ts` and `npm start` at the repository root run it.
 */
import { type App, createApp, type LoggerSetting } from 'proceed';
import {
  authPlugin,
  hashPassword,
  PostgresRevocationStore,
  rateLimitFromEnv,
  resolveSecret,
  TokenService,
} from 'proceed/auth';
import { docsPlugin } from 'proceed/openapi';
import type { BlogContext } from './context.js';
import { openDatabase, repositories } from './db/index.js';
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
}

function adminFromEnv(): BlogOptions['admin'] {
  const email = process.env.ADMIN_EMAIL;
  const password = process.env.ADMIN_PASSWORD;
  return email !== undefined && email !== '' && password !== undefined && password !== ''
    ? { email, password }
    : undefined;
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
    const app: App<BlogContext> = createApp<BlogContext>({
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      health: {
        check: async () => {
          await database.ping();
          return true;
        },
      },
      // tokens and mailer need the app's logger; they exist before the first request.
      context: () => ({ repos, tokens, mailer }),
    });
    app.onClose(() => database.close());

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
    if (admin !== undefined) {
      await repos.users.ensureAdmin({
        email: admin.email,
        name: 'Admin',
        passwordHash: await hashPassword(admin.password),
      });
    }

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

export default (): Promise<App<BlogContext>> => createBlogApp();
