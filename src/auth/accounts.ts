/**
 * The account procedures: register, login, refresh, logout, me, password change, and password
 * reset by a mailed single-use token, over an app's own user store (docs/accounts.md). One
 * behaviour for every app: the same answers, the same timing rules, the same revocations.
 */
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import {
  ConflictError,
  ForbiddenError,
  ProceedConfigError,
  UnauthenticatedError,
  ValidationError,
} from '../core/errors.js';
import { optionKeys, refuseUnknownOptions } from '../core/options.js';
import type { BaseContext } from '../core/request-context.js';
import type { SchemaInput } from '../core/schema.js';
import { accountLimitSteps, normalEmail } from './account-limits.js';
import type { AccountOptions, AccountUser, PasswordResetOptions } from './account-options.js';
import { authenticated } from './guards.js';
import { InvalidTokenError } from './jwt.js';
import { costOf, hashPassword, needsRehash, type ScryptCost, verifyPasswordOrDummy } from './password.js';
import { changePassword } from './password-change.js';
import type { AuthContext } from './plugin.js';
import type { TokenPair } from './tokens.js';

export { type AccountLimit, accountRateLimit, failedAttemptLimit, resetMailLimit } from './account-limits.js';
export type {
  AccountOptions,
  AccountStore,
  AccountUser,
  PasswordResetOptions,
  ResetTokenStore,
} from './account-options.js';

const accountOptionKeys = optionKeys<AccountOptions<never, AccountUser, z.ZodRawShape, z.ZodType>>()(
  'procedure',
  'users',
  'tokens',
  'view',
  'profile',
  'rateLimit',
  'failedAttempts',
  'onRegistered',
  'passwordReset',
  'path',
  'passwordCost',
);
const resetOptionKeys = optionKeys<PasswordResetOptions<never, AccountUser>>()(
  'store',
  'send',
  'background',
  'lifetime',
  'mailLimit',
);

/** The longest token the procedures read or write. */
const tokenLength = 4096;
/** A signed JWT in compact form: three base64url parts. */
const compactJwt = /^[\w-]+\.[\w-]+\.[\w-]+$/;
/** Long enough for passphrases, short enough that hashing cannot be used to burn CPU. */
const newPassword = z.string().min(8, 'Use at least 8 characters').max(256);
const email = z.email().max(254);
/** Answers that carry tokens must not be cached (RFC 6749 §5.1). */
const noStore = { 'cache-control': 'no-store' };
/** A user id no account has: an unknown email reads its generation as a known one would. */
const noSuchUser = '00000000-0000-7000-8000-000000000000';
const success = z.object({ success: z.literal(true) });
const succeeded = { success: true as const };

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const isActive = (user: AccountUser | undefined) => user !== undefined && user.isActive !== false;
const badCredentials = () => new UnauthenticatedError('Invalid email or password');

function withoutPasswordHash<U extends { passwordHash: string }>(user: U): Omit<U, 'passwordHash'> {
  const { passwordHash: _, ...rest } = user;
  return rest;
}

/**
 * The account procedures, to put in a collection: pick the ones the app serves.
 *
 * @example
 * const { register, login, refresh, logout, me, changePassword } = accountProcedures({
 *   procedure: p,
 *   users: (ctx) => ctx.users,
 *   tokens: (ctx) => ctx.tokens,
 *   view: User.authenticated,
 *   profile: { name: z.string().trim().min(1).max(100) },
 * });
 * export const auth = procedures('auth', { register, login, refresh, logout, me, changePassword });
 */
export function accountProcedures<
  Ctx extends BaseContext & AuthContext<unknown>,
  User extends AccountUser,
  View extends z.ZodType,
  Profile extends z.ZodRawShape = Record<never, never>,
>(
  options: AccountOptions<Ctx, User, Profile, View> & { passwordReset: PasswordResetOptions<Ctx, User> },
): AccountProcedures<Ctx, User, Profile, View>;
export function accountProcedures<
  Ctx extends BaseContext & AuthContext<unknown>,
  User extends AccountUser,
  View extends z.ZodType,
  Profile extends z.ZodRawShape = Record<never, never>,
>(
  options: AccountOptions<Ctx, User, Profile, View> & { passwordReset?: undefined },
): Omit<AccountProcedures<Ctx, User, Profile, View>, 'forgotPassword' | 'resetPassword'>;
export function accountProcedures<
  Ctx extends BaseContext & AuthContext<unknown>,
  User extends AccountUser,
  View extends z.ZodType,
  Profile extends z.ZodRawShape = Record<never, never>,
>(
  options: AccountOptions<Ctx, User, Profile, View>,
): Omit<AccountProcedures<Ctx, User, Profile, View>, 'forgotPassword' | 'resetPassword'> &
  Partial<Pick<AccountProcedures<Ctx, User, Profile, View>, 'forgotPassword' | 'resetPassword'>>;
export function accountProcedures(
  options: AccountOptions<BaseContext & AuthContext<unknown>, AccountUser, z.ZodRawShape, z.ZodType>,
): object {
  return buildAccountProcedures(options);
}

/** Every account procedure, `forgotPassword` and `resetPassword` included. */
export type AccountProcedures<
  Ctx extends BaseContext & AuthContext<unknown>,
  User extends AccountUser,
  Profile extends z.ZodRawShape,
  View extends z.ZodType,
> = ReturnType<typeof buildAccountProcedures<Ctx, User, Profile, View>>;

function buildAccountProcedures<
  Ctx extends BaseContext & AuthContext<unknown>,
  User extends AccountUser,
  Profile extends z.ZodRawShape,
  View extends z.ZodType,
>(options: AccountOptions<Ctx, User, Profile, View>) {
  refuseUnknownOptions('accountProcedures', options, accountOptionKeys, { required: true });
  for (const name of ['procedure', 'users', 'tokens'] as const) {
    if (typeof options[name] !== 'function')
      throw new ProceedConfigError(`accountProcedures needs ${name}: a function of the context`);
  }
  if (options.view === undefined) throw new ProceedConfigError('accountProcedures needs the user view');
  const reset: PasswordResetOptions<Ctx, User> | undefined = options.passwordReset;
  if (reset !== undefined) {
    refuseUnknownOptions('accountProcedures passwordReset', reset, resetOptionKeys, { required: true });
    for (const name of ['store', 'send', 'background'] as const) {
      if (typeof reset[name] !== 'function')
        throw new ProceedConfigError(`accountProcedures passwordReset needs ${name}: a function`);
    }
  }
  const resetLifetime = reset?.lifetime ?? 60 * 60 * 1000;
  if (!Number.isInteger(resetLifetime) || resetLifetime <= 0)
    throw new ProceedConfigError('accountProcedures passwordReset.lifetime must be a positive number of ms');
  const costSetting = options.passwordCost ?? {};
  const checkedCost = (setting: ScryptCost): Required<ScryptCost> => {
    try {
      return costOf(setting);
    } catch (error) {
      throw new ProceedConfigError(`accountProcedures passwordCost: ${(error as Error).message}`);
    }
  };
  const fixedCost = typeof costSetting === 'function' ? undefined : checkedCost(costSetting);
  const costIn = (ctx: Ctx): Required<ScryptCost> =>
    fixedCost ?? checkedCost((costSetting as (ctx: Ctx) => ScryptCost)(ctx));
  const { users, tokens, procedure } = options;
  const base = (options.path ?? '/auth').replace(/\/$/, '');
  const limits = accountLimitSteps({
    rateLimit: options.rateLimit,
    failedAttempts: options.failedAttempts,
    mailLimit: reset?.mailLimit,
  });
  const Session = z.object({
    user: options.view,
    accessToken: z.string().max(tokenLength).regex(compactJwt),
    refreshToken: z.string().max(tokenLength).regex(compactJwt),
    tokenType: z.literal('Bearer'),
    expiresIn: z.number().int().describe('Lifetime of the access token, in seconds'),
  });
  const session = (user: object, pair: TokenPair) => ({ user: user as z.input<View>, ...pair });
  const Registration = z.object({
    email,
    password: newPassword,
    ...options.profile,
  }) as unknown as z.ZodObject<{ email: typeof email; password: typeof newPassword } & Profile>;

  const account = {
    register: procedure()
      .rest({ method: 'POST', path: `${base}/register`, status: 201 })
      .use(limits.perAddress)
      .headers(noStore)
      .meta({
        summary: 'Create an account and sign in',
        description:
          'Creates a user and answers with the user and a token pair. An email that is taken, in any case, is 409. Rate-limited per client IP.',
        errors: ['CONFLICT'],
      })
      .input(Registration)
      .output(Session)
      .mutation(async ({ input, ctx }) => {
        const { password, ...profile } = input as { password: string; email: string } & Record<
          string,
          unknown
        >;
        const created = await users(ctx).create({
          ...(profile as unknown as z.infer<z.ZodObject<Profile>>),
          email: normalEmail(profile.email),
          passwordHash: await hashPassword(password, costIn(ctx)),
        });
        if (created === undefined) throw new ConflictError('An account with this email exists');
        await options.onRegistered?.(ctx, created);
        return session(created, await tokens(ctx).issuePair(created.id));
      }),

    login: procedure()
      .rest({ method: 'POST', path: `${base}/login` })
      .use(limits.perAddress)
      .use(limits.loginFailures)
      .headers(noStore)
      .meta({
        summary: 'Sign in with email and password',
        description:
          'Answers a token pair. A wrong email and a wrong password get the same 401, in the same time; a deactivated account gets 403. Rate-limited per client IP, and per account after failed passwords (429 for that account, the right password included, until the window ends).',
        errors: ['UNAUTHENTICATED', 'FORBIDDEN'],
      })
      .input(z.object({ email: z.string().min(1).max(254), password: z.string().min(1).max(256) }))
      .output(Session)
      .mutation(async ({ input, ctx }) => {
        const store = users(ctx);
        const service = tokens(ctx);
        const address = normalEmail(input.email);
        // The user's revocation generation is read before the password hash that is checked: a
        // reset that lands from then on moves it past this login's, so it revokes this login too.
        // An unknown email takes the same reads and the same hash as a wrong password, so the
        // answer's timing does not tell whether an account exists.
        const candidate = await store.findByEmail(address);
        const generation = await service.userGeneration(candidate?.id ?? noSuchUser);
        const found = await store.findByEmail(address);
        const cost = costIn(ctx);
        const matches = await verifyPasswordOrDummy(found?.passwordHash, input.password, cost);
        if (found === undefined || found.id !== candidate?.id || !matches) throw badCredentials();
        if (!isActive(found)) throw new ForbiddenError('This account is deactivated');
        if (store.replacePasswordHash !== undefined && needsRehash(found.passwordHash, cost))
          await store.replacePasswordHash(
            found.id,
            found.passwordHash,
            await hashPassword(input.password, cost),
          );
        return session(withoutPasswordHash(found), await service.issuePair(found.id, { generation }));
      }),

    refresh: procedure()
      .rest({ method: 'POST', path: `${base}/refresh` })
      .use(limits.perAddress)
      .headers(noStore)
      .meta({
        summary: 'Trade a refresh token for a new pair (single use)',
        description:
          'A refresh token works once. Sending a used one again ends every session of that login (the token was stolen, or this is a replay). A deleted or deactivated user cannot refresh.',
        errors: ['INVALID_TOKEN'],
      })
      .input(z.object({ refreshToken: z.string().min(1).max(tokenLength) }))
      .output(Session)
      .mutation(async ({ input, ctx }) => {
        let owner: User | undefined;
        const pair = await tokens(ctx).refresh(input.refreshToken, {
          allowUser: async (id) => {
            owner = await users(ctx).findById(id);
            return isActive(owner);
          },
        });
        if (owner === undefined) throw new InvalidTokenError('user not found');
        return session(owner, pair);
      }),

    logout: procedure()
      .rest({ method: 'POST', path: `${base}/logout` })
      .meta({
        summary: 'Revoke this access token and its refresh family',
        description:
          'Signs out this login: its access token and every refresh token it produced stop working.',
      })
      .guard(authenticated)
      .output(success)
      .mutation(async ({ ctx }) => {
        if (ctx.auth !== undefined) await tokens(ctx as unknown as Ctx).revoke(ctx.auth.claims);
        return succeeded;
      }),

    me: procedure()
      .rest({ method: 'GET', path: `${base}/me` })
      // The user's own data: no cache keeps it for the next person at the browser.
      .headers(noStore)
      .meta({
        summary: 'The signed-in user',
        description: 'The user the bearer token belongs to, in the authenticated view.',
      })
      .guard(authenticated)
      .output(options.view)
      .query(({ ctx }) => ctx.user as SchemaInput<View>),

    changePassword: procedure()
      .rest({ method: 'POST', path: `${base}/change-password` })
      .use(limits.perAddress)
      .use(limits.changeFailures)
      .headers(noStore)
      .meta({
        summary: 'Change the password; signs out every other session',
        description:
          'Needs the current password (a wrong one is 400 on `currentPassword`). Every session of the user ends, unused reset links stop working, and the answer is a new token pair for this one. A password reset or a deactivation that lands during the change wins: the answer is 401 and the caller signs in again.',
      })
      .guard(authenticated)
      .input(z.object({ currentPassword: z.string().min(1).max(256), newPassword }))
      .output(Session)
      .mutation(async ({ input, ctx: guarded }) => {
        // The guard only made `user` non-optional: this is the app's context.
        const ctx = guarded as unknown as Ctx;
        const store = users(ctx);
        const service = tokens(ctx);
        const signedIn = ctx.auth === undefined ? undefined : await store.findById(ctx.auth.claims.sub);
        if (signedIn === undefined || !isActive(signedIn)) throw new InvalidTokenError('user not found');
        const pair = await changePassword({
          user: signedIn,
          email: normalEmail(signedIn.email),
          currentPassword: input.currentPassword,
          newPassword: input.newPassword,
          users: store,
          tokens: service,
          resets: reset?.store(ctx),
          cost: costIn(ctx),
        });
        return session(signedIn, pair);
      }),
  };
  const resets = reset && {
    forgotPassword: procedure()
      .rest({ method: 'POST', path: `${base}/forgot-password`, status: 202 })
      .use(limits.perAddress)
      .use(limits.resetMails)
      .meta({
        summary: 'Send a password-reset link; the answer is the same whether or not the email exists',
        description: `202 whether or not the email has an account, so the answer does not tell; past the limit of requests for one address, 429 for any address. The link holds a single-use token valid for ${describeLifetime(resetLifetime)}.`,
      })
      .input(z.object({ email }))
      .output(success)
      .mutation(async ({ input, ctx }) => {
        const user = await users(ctx).findByEmail(normalEmail(input.email));
        // The answer leaves before the token is stored and mailed, so its timing is the same
        // whether or not the email belongs to an account: the task begins a timer's turn later,
        // whatever `background` does with it (one that runs it at once would still send the
        // store's first query before the answer).
        if (user !== undefined && isActive(user)) {
          reset.background(ctx, async () => {
            await new Promise<void>((resolve) => setTimeout(resolve, 0));
            const store = reset.store(ctx);
            await store.prune?.();
            const token = randomBytes(32).toString('base64url');
            const expiresAt = new Date(Date.now() + resetLifetime);
            await store.create({ tokenHash: sha256(token), userId: user.id, expiresAt });
            await reset.send(ctx, { user: withoutPasswordHash(user) as unknown as User, token, expiresAt });
          });
        }
        return succeeded;
      }),

    // Not rate-limited: a reset token is 256 random bits, so guessing one is hopeless, and the
    // blog's contract limits the four routes that take what a person can guess or repeat.
    resetPassword: procedure()
      .rest({ method: 'POST', path: `${base}/reset-password` })
      .meta({
        summary: 'Set a new password with a reset token; signs out every session',
        description: `The token works once and expires after ${describeLifetime(resetLifetime)}. Every session of the user ends.`,
      })
      .input(z.object({ token: z.string().min(1).max(256), password: newPassword }))
      .output(success)
      .mutation(async ({ input, ctx }) => {
        const store = reset.store(ctx);
        const userId = await store.consume(sha256(input.token));
        // A user deactivated since the link was sent gets no new password from it.
        if (userId === undefined || !isActive(await users(ctx).findById(userId))) {
          throw new ValidationError([
            { path: 'token', message: 'The reset token is unknown, used or expired' },
          ]);
        }
        await users(ctx).setPassword(userId, await hashPassword(input.password, costIn(ctx)));
        await store.invalidateForUser(userId);
        await tokens(ctx).revokeAllForUser(userId);
        return succeeded;
      }),
  };
  // `forgotPassword` and `resetPassword` are there only when `passwordReset` was given.
  return { ...account, ...resets } as typeof account & NonNullable<typeof resets>;
}

function describeLifetime(ms: number): string {
  if (ms % 3_600_000 === 0) return ms === 3_600_000 ? 'an hour' : `${ms / 3_600_000} hours`;
  if (ms % 60_000 === 0) return `${ms / 60_000} minutes`;
  return `${ms / 1000} seconds`;
}
