/**
 * The HTTP side of auth: reads `Authorization: Bearer <jwt>` on every procedure call, verifies it,
 * loads the user and puts both on the context. A bad token is a 401 `INVALID_TOKEN` on every
 * route, public ones included; no token leaves `ctx.user` undefined for the guards to judge.
 */

import { resolveSecret } from '../config/secret.js';
import type { RequestContext } from '../core/context.js';
import { holdCredentials } from '../core/credentials.js';
import { ProceedConfigError } from '../core/errors.js';
import { optionKeys, refuseUnknownOptions } from '../core/options.js';
import type { RequestInfo } from '../core/request-context.js';
import type { RouteDocumentation } from '../core/steps.js';
import { runtime } from '../http/runtime.js';
import type { App, ContextualPlugin, PluginOptionsKind, UserOf } from '../server/app.js';
import { isDataException } from '../stores/sql.js';
import { type AccessClaims, InvalidTokenError, TokenMalformedError } from './jwt.js';
import { loadersCheckingRevocation, MemoryRevocationStore, type RevocationStore } from './revocation.js';
import { TokenService, verifyAccessLeavingRevocation } from './tokens.js';

type MaybePromise<T> = T | Promise<T>;

/**
 * Loads the user a token names, fresh on every request. Return `null`/`undefined` for a deleted
 * user and a record with `isActive: false` for a deactivated one (both answer 401). Return every
 * field a guard reads (say `role`).
 *
 * @example
 * const userLoader: UserLoader<User> = (id) => db.users.findById(id);
 */
export type UserLoader<User> = (
  userId: string,
  claims: AccessClaims,
) => MaybePromise<User | null | undefined>;

/** What the plugin puts on `ctx.auth` when a valid token came with the request. */
export interface AuthState {
  /** The verified claims of the access token. */
  claims: AccessClaims;
  /** The raw access token. */
  token: string;
  /** The TokenService in use (logout: `ctx.auth.tokens.revoke(ctx.auth.claims)`). */
  tokens: TokenService;
}

/**
 * The context fields the auth plugin adds; put them in the app's context type.
 *
 * @example
 * interface Ctx extends AuthContext<User> { db: Db }
 * const app = createApp<Ctx>({ context: () => ({ db }) });
 */
export interface AuthContext<User> {
  user?: User;
  auth?: AuthState;
}

export interface AuthPluginOptions<User = unknown> {
  /** Loads the signed-in user by id on every authenticated request. */
  userLoader: UserLoader<User>;
  /**
   * The TokenService that issues the app's tokens (share it with the login and refresh handlers).
   * Without it the plugin builds one from `secret` and `store`.
   */
  tokens?: TokenService;
  /** Only without `tokens`: the secret, through `resolveSecret()`. Default `JWT_SECRET`. */
  secret?: string;
  /** Only without `tokens`: the revocation store. Default: in memory. */
  store?: RevocationStore;
  /** Only without `tokens`: the secret policy's production switch. Default `NODE_ENV === 'production'`. */
  production?: boolean;
}

/**
 * The token of an Authorization header: undefined when there is none, an error when there is one
 * that is not a usable bearer token.
 */
export function bearerTokenOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.trim() === '') return undefined;
  const [scheme, token, ...rest] = value.trim().split(/\s+/);
  if (scheme?.toLowerCase() !== 'bearer') throw new InvalidTokenError('authorization scheme must be Bearer');
  if (token === undefined || rest.length > 0) throw new TokenMalformedError();
  return token;
}

function isDeactivated(user: unknown): boolean {
  return typeof user === 'object' && user !== null && (user as { isActive?: unknown }).isActive === false;
}

/**
 * What the auth plugin adds to every procedure route's documentation: each reads a bearer token
 * when one is sent and refuses a bad one. The plugin documents it on its app; pass it to
 * `generateOpenApi({ mounts, documentation })` when generating without an app.
 */
export const authDocumentation: Readonly<RouteDocumentation> = Object.freeze({
  problems: Object.freeze(['INVALID_TOKEN'] as const),
  bearer: 'optional',
});

/**
 * Registers authentication on an app. Register it before `listen`; routes mounted before or after
 * it are all covered. The user type is the app's: declare it with {@link AuthContext} in the
 * context type, and `app.register(authPlugin, …)` on that app checks that `userLoader` returns
 * it (a loader that omits a field the user type requires does not compile).
 *
 * @example
 * const tokens = new TokenService({ secret: resolveSecret({ logger: app.log }) });
 * await app.register(authPlugin, {
 *   tokens,
 *   userLoader: (id) => db.users.findById(id),
 * });
 */
export const authPlugin: ContextualPlugin<AuthPluginOptionsFor> = registerAuth;

/**
 * `authPlugin`'s options on an app whose context is `ctx`: the loader returns its user. Given as
 * a function, they are asked for once the app gets ready to serve, and never when it is only
 * inspected (`proceed routes/openapi/manifest`): an app opens its database and makes its
 * TokenService after registering the plugin, and only when it serves (docs/auth.md, "Inspecting
 * without services").
 */
export interface AuthPluginOptionsFor extends PluginOptionsKind {
  readonly options:
    | AuthPluginOptions<UserOf<this['ctx']>>
    | (() => MaybePromise<AuthPluginOptions<UserOf<this['ctx']>>>);
}

const authOptionKeys = optionKeys<AuthPluginOptions>()(
  'userLoader',
  'tokens',
  'secret',
  'store',
  'production',
);

type SignIn = (ctx: RequestContext, token: string) => Promise<void>;

async function registerAuth(
  app: App,
  options: AuthPluginOptions | (() => MaybePromise<AuthPluginOptions>),
): Promise<void> {
  let signIn: SignIn | undefined;
  if (typeof options === 'function') {
    if (!app.inspected) {
      app.onReady(async () => {
        signIn = signInWith(app, await options());
      });
    }
  } else {
    signIn = signInWith(app, options);
  }
  // Not async itself: a request without a token (every public read) awaits nothing here.
  app.extendContext((ctx) => {
    const token = bearerTokenOf(ctx.request.header('authorization')) ?? socketToken(ctx.request);
    if (token === undefined) return undefined;
    if (signIn === undefined) throw new ProceedConfigError('authPlugin: this app was built to be inspected');
    return signIn(ctx, token);
  });

  app.document(authDocumentation);
  const loader = typeof options === 'function' ? undefined : options.userLoader;
  app.providesUser(
    `authPlugin's userLoader${loader === undefined || loader.name === '' || loader.name === 'userLoader' ? '' : ` (${loader.name})`}`,
  );
}

/** Checks the options and answers what signs a request in. */
function signInWith(app: App, options: AuthPluginOptions): SignIn {
  if (typeof options === 'object' && options !== null && 'rateLimit' in options) {
    throw new ProceedConfigError(
      'authPlugin no longer takes rateLimit: put a rateLimit({ name, max }) step on the procedures to limit (docs/auth.md#rate-limiting)',
    );
  }
  refuseUnknownOptions('authPlugin', options, authOptionKeys, { required: true });
  if (typeof options?.userLoader !== 'function') {
    throw new ProceedConfigError('authPlugin needs a userLoader: (userId) => user | undefined');
  }
  if (
    options.tokens !== undefined &&
    (options.secret !== undefined || options.store !== undefined || options.production !== undefined)
  ) {
    // `production` beside `tokens` was ignored: the TokenService's secret was checked when it was made.
    throw new ProceedConfigError('authPlugin: pass either tokens or secret/store/production, not both');
  }
  // `tokens: {}` was taken, and every request with a token was a 500 (a TokenService of another
  // copy of the package without acceptedUntil, every socket and stream opened).
  if (
    options.tokens !== undefined &&
    (typeof options.tokens?.verifyAccess !== 'function' ||
      typeof options.tokens?.acceptedUntil !== 'function' ||
      typeof options.tokens?.store !== 'object')
  )
    throw new ProceedConfigError('authPlugin: tokens is a TokenService (new TokenService({ secret }))');
  if (options.production !== undefined && typeof options.production !== 'boolean')
    throw new ProceedConfigError(
      `authPlugin: production is true or false (got ${JSON.stringify(options.production)})`,
    );
  const tokens = options.tokens ?? buildTokenService(app, options);
  refuseStoreOfOneWorker(tokens.store);
  const { userLoader } = options;
  // A loader that checks revocation in its own statement saves the request a round trip.
  const checkedIn = loadersCheckingRevocation.get(userLoader);
  if (checkedIn !== undefined && checkedIn !== tokens.store) {
    throw new ProceedConfigError(
      "authPlugin: the userLoader checks revocations in another store than the TokenService's: make it with that store's userLoader()",
    );
  }
  // A TokenService whose verifyAccess was overridden (more checks) keeps them: no shortcut then.
  const leavesRevocation =
    checkedIn !== undefined && tokens.verifyAccess === TokenService.prototype.verifyAccess;

  return async (ctx, token) => {
    const claims = !leavesRevocation
      ? await tokens.verifyAccess(token)
      : tokens[verifyAccessLeavingRevocation](token);
    let user: unknown;
    try {
      user = await userLoader(claims.sub, claims);
    } catch (error) {
      // The loader's only input is the token: a database that cannot read its claims as data
      // (a sub that is no uuid for a uuid column) was sent a token no user can have.
      if (!isDataException(error)) throw error;
      app.log.warn(
        { err: error, requestId: ctx.request.id },
        "The user loader could not read a signed token's claims",
      );
      throw new TokenMalformedError(error);
    }
    if (user === null || user === undefined) throw new InvalidTokenError('user not found');
    if (isDeactivated(user)) throw new InvalidTokenError('user is deactivated');
    ctx.user = user;
    ctx.auth = { claims, token, tokens } satisfies AuthState;
    // A socket lives on after its handshake: it ends when the token expires or stops holding. A
    // stream's holder is what its per-client limit counts.
    if (ctx.request.opensSocket === true || ctx.request.opensStream === true)
      holdCredentials(ctx, {
        holder: claims.sub,
        expiresAt: tokens.acceptedUntil(claims),
        stillHold: () => stillHolds(tokens, userLoader, token, ctx as AuthContext<unknown>),
        // A logout here checks them at once, where the runtime lets its request act on them.
        ...(runtime.sharesRequestObjects
          ? { revocations: (listener: () => void) => tokens.revocations.listen(claims.sub, listener) }
          : {}),
      });
  };
}

/**
 * Whether a socket's token still holds: signed, unexpired, not revoked, its user there and
 * active. A refusal of the token is false; a store or loader that fails rejects (checked later).
 * When it holds, `ctx.user` becomes the user as loaded now, which the route's guards are asked
 * about next and the handler reads from then on (a role changed since the handshake).
 */
async function stillHolds(
  tokens: TokenService,
  userLoader: UserLoader<unknown>,
  token: string,
  ctx: AuthContext<unknown>,
): Promise<boolean> {
  let claims: AccessClaims;
  try {
    claims = await tokens.verifyAccess(token);
  } catch (error) {
    if (error instanceof InvalidTokenError) return false;
    throw error;
  }
  const user = await userLoader(claims.sub, claims);
  if (user === null || user === undefined || isDeactivated(user)) return false;
  ctx.user = user;
  return true;
}

/**
 * A WebSocket's handshake to a socket procedure may carry its token as the `access_token` query
 * parameter: a browser's `WebSocket` sets no header (docs/sockets.md, "Authentication"). Any
 * other request must send it in `Authorization`, where it is kept out of URLs and logs: an
 * `Upgrade` header on a request to another route makes no query token count.
 */
function socketToken(request: RequestInfo): string | undefined {
  if (request.opensSocket !== true) return undefined;
  const query = request.url.indexOf('?');
  if (query < 0) return undefined;
  const token = new URLSearchParams(request.url.slice(query + 1)).get('access_token');
  return token === null || token === '' ? undefined : token;
}

/**
 * Under `proceed start --workers N` (which tells each worker N in `PROCEED_WORKERS`), a store in
 * one process's memory would let a logout, a user-wide revocation or a refresh token's reuse
 * count in the worker that saw it only: a stolen refresh token could be spent once per worker.
 */
function refuseStoreOfOneWorker(store: unknown): void {
  const workers = Number(
    (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.PROCEED_WORKERS,
  );
  if (workers > 1 && store instanceof MemoryRevocationStore)
    throw new ProceedConfigError(
      `authPlugin: the revocation store is in memory, and ${workers} workers would each keep one of their own (a logout, a revoked user, a reused refresh token would count in one worker only): pass a PostgresRevocationStore or a RedisRevocationStore (docs/auth.md, "Stores")`,
    );
}

function buildTokenService(app: App, options: AuthPluginOptions): TokenService {
  const production = options.production ?? process.env.NODE_ENV === 'production';
  const secret = resolveSecret({
    secret: options.secret ?? process.env.JWT_SECRET,
    production,
    logger: { warn: (message) => app.log.warn(message) },
  });
  return new TokenService(options.store === undefined ? { secret } : { secret, store: options.store });
}
