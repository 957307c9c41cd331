/**
 * The app. `npm run dev`, `npm start` and the CLI's `routes`, `openapi` and `manifest` call this
 * module's default export; the tests call {@link buildApp}.
 */
import { type App, createApp, type EntryContext, ProceedConfigError } from 'proceedjs';
import {
  authPlugin,
  PostgresRevocationStore,
  rateLimitFromEnv,
  resolveSecret,
  type ScryptCost,
  TokenService,
  type UserLoader,
} from 'proceedjs/auth';
import { mcpPlugin } from 'proceedjs/mcp';
import { docsPlugin } from 'proceedjs/openapi';
import { z } from 'zod';
import { auth, authRateLimit } from './auth.js';
import type { AppContext, SignedInUser } from './context.js';
import { type Database, isPostgres, openDatabase } from './db.js';
import { notesProcedures } from './notes.js';

/** Every collection the app serves: the typed client's `typeof api` (proceedjs/client). */
export const api = [auth, notesProcedures] as const;

export interface AppOptions {
  /** Default: `DATABASE_URL`, else PGlite in `.data/db` (src/db.ts). */
  databaseUrl?: string;
  /** A database opened by the caller (the tests), who closes it; instead of `databaseUrl`. */
  database?: Database;
  /** How many processes serve the app (`proceed start --workers N`). */
  workers?: number;
  /**
   * How much work a password's hash takes (Proceed's docs/accounts.md). Default: Proceed's, at
   * OWASP's minimum, about a quarter of a second a hash; the tests take a cheap one.
   */
  passwordCost?: ScryptCost;
}

export default function main(entry?: EntryContext): Promise<App<AppContext>> {
  return buildApp({ workers: entry?.workers ?? 1 });
}

/** What serving needs: opened in {@link buildApp}, unless the app is only read. */
interface Services {
  database: Database;
  context: Pick<AppContext, 'db' | 'tokens' | 'passwordCost'>;
  userLoader: UserLoader<SignedInUser>;
}

/**
 * Builds the app: its routes, docs and auth, then (unless `proceed routes`, `openapi` or
 * `manifest` only reads it) opens and migrates the database.
 *
 * @example
 * const app = await buildApp({ databaseUrl: 'memory://' });
 */
export async function buildApp(options: AppOptions = {}): Promise<App<AppContext>> {
  let services!: Services;
  const app = createApp<AppContext>({
    // AUTH_RATE_LIMIT changes how many sign-in attempts a client may make a minute (default 10).
    rateLimit: { limits: { [authRateLimit.name]: { max: rateLimitFromEnv() } } },
    // GET /api/health answers 503 while the database does not.
    health: {
      check: async () => {
        await services.database.sql.query('SELECT 1');
        return true;
      },
    },
    context: () => services.context,
  });
  app.mount(api);
  await app.register(docsPlugin, {
    routePrefix: '/api/docs',
    openapi: { info: { title: '{{title}}', version: '0.1.0' } },
  });
  // The notes as tools for AI agents at /mcp: each caller sees and gets what its REST calls would.
  await app.register(mcpPlugin, { collections: ['notes'], name: '{{name}}' });
  // Its tokens and users come from the database: asked for once the app serves.
  await app.register(authPlugin, () => ({
    tokens: services.context.tokens,
    userLoader: services.userLoader,
  }));
  if (app.inspected) return app;

  const workers = options.workers ?? 1;
  if (
    workers > 1 &&
    options.database === undefined &&
    !isPostgres(options.databaseUrl ?? process.env.DATABASE_URL)
  )
    throw new ProceedConfigError(
      '--workers needs PostgreSQL (DATABASE_URL=postgres://…): PGlite is one process',
    );
  // JWT_SECRET: required in production; in development a random one, with a warning.
  const secret = resolveSecret({ workers, logger: app.log });
  const database =
    options.database ??
    (await openDatabase(options.databaseUrl, {
      // One JSON line in the app's log, not a line of plain text among them.
      onPoolError: (error) => app.log.warn({ err: error }, 'PostgreSQL connection error'),
    }));
  if (options.database === undefined) app.onClose(() => database.close());
  // Logouts and used refresh tokens, kept in the same database (table proceed_revocations).
  const store = new PostgresRevocationStore(database.sql);
  await store.ensureSchema();
  services = {
    database,
    context: {
      db: database.db,
      tokens: new TokenService({ secret, store, userId: z.uuid() }),
      passwordCost: options.passwordCost ?? {},
    },
    // The signed-in user and whether the token was revoked, in one query per request.
    userLoader: store.userLoader<SignedInUser>('SELECT id, email, name, role FROM users WHERE id = $1'),
  };
  return app;
}
