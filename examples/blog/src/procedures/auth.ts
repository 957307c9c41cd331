/** /api/auth/*: registration, login, token refresh, logout, the caller, password reset (docs/blog.md). */
import { createHash, randomBytes } from 'node:crypto';
import { ForbiddenError, procedures, rateLimit, UnauthenticatedError, ValidationError } from 'proceedjs';
import {
  authenticated,
  hashPassword,
  InvalidTokenError,
  type TokenPair,
  verifyPasswordOrDummy,
} from 'proceedjs/auth';
import { z } from 'zod';
import { blogProcedure } from '../context.js';
import type { User as UserRecord } from '../db/index.js';
import { limits, Success, User } from '../resources.js';

/** Long enough for passphrases, short enough that hashing cannot be used to burn CPU. */
const password = z.string().min(8, 'Use at least 8 characters').max(256);
const email = z.email().max(limits.email);
/** The longest token the blog reads or writes. */
const tokenLength = 4096;
/** A signed JWT in compact form: three base64url parts. */
const compactJwt = /^[\w-]+\.[\w-]+\.[\w-]+$/;

const Session = z.object({
  user: User.authenticated,
  // Far longer than any token the blog signs (its claims are a few ids and numbers).
  accessToken: z.string().max(tokenLength).regex(compactJwt),
  refreshToken: z.string().max(tokenLength).regex(compactJwt),
  tokenType: z.literal('Bearer'),
  expiresIn: z.number().int().describe('Lifetime of the access token, in seconds'),
});

const resetLifetimeMs = 60 * 60 * 1000;

/**
 * The routes that take a password, a refresh token or an email from anyone are limited per client
 * IP: 10 a minute per route unless AUTH_RATE_LIMIT says otherwise (app.ts passes it by name).
 */
export const authRateLimit = { name: 'auth', max: 10, window: 60_000 } as const;
const limited = rateLimit(authRateLimit);

/** Answers that carry tokens must not be cached (RFC 6749 §5.1). */
const noStore = { 'cache-control': 'no-store' };

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const session = (user: UserRecord, pair: TokenPair) => ({ user, ...pair });

/**
 * One answer for an unknown email and a wrong password, so neither can be told from the other.
 * UnauthenticatedError carries `WWW-Authenticate: Bearer`, which every 401 must (RFC 9110).
 */
/** A user id no account has: an unknown email reads its generation as a known one would. */
const noSuchUser = '00000000-0000-7000-8000-000000000000';

const badCredentials = () => new UnauthenticatedError('Invalid email or password');

export const auth = procedures('auth', {
  register: blogProcedure()
    .rest({ method: 'POST', path: '/auth/register', status: 201 })
    .use(limited)
    .headers(noStore)
    .meta({
      summary: 'Create an account and sign in',
      description:
        'Creates a user with the `user` role and answers with the user and a token pair. An email that is taken, in any case, is 409. Rate-limited per client IP.',
    })
    .input(z.object({ email, password, name: z.string().trim().min(1).max(limits.name) }))
    .output(Session)
    .mutation(async ({ input, ctx }) => {
      const user = await ctx.repos.users.create({
        email: input.email,
        name: input.name,
        passwordHash: await hashPassword(input.password),
        role: 'user',
      });
      return session(user, await ctx.tokens.issuePair(user.id));
    }),

  login: blogProcedure()
    .rest({ method: 'POST', path: '/auth/login' })
    .use(limited)
    .headers(noStore)
    .meta({
      summary: 'Sign in with email and password',
      description:
        'Answers a token pair. A wrong email and a wrong password get the same 401, in the same time; a deactivated account gets 403. Rate-limited per client IP.',
      errors: ['UNAUTHENTICATED', 'FORBIDDEN'],
    })
    .input(z.object({ email: z.string().min(1).max(limits.email), password: z.string().min(1).max(256) }))
    .output(Session)
    .mutation(async ({ input, ctx }) => {
      // The user's revocation generation is read before the password hash that is checked: a
      // reset that lands from then on moves it past this login's, so it revokes this login too.
      // An unknown email takes the same three reads and the same hash as a wrong password, so
      // the answer's timing does not tell whether an account exists.
      const candidate = await ctx.repos.users.findByEmail(input.email);
      const generation = await ctx.tokens.userGeneration(candidate?.id ?? noSuchUser);
      const found = await ctx.repos.users.findByEmail(input.email);
      const matches = await verifyPasswordOrDummy(found?.passwordHash, input.password);
      if (found === undefined || found.id !== candidate?.id || !matches) throw badCredentials();
      if (!found.isActive) throw new ForbiddenError('This account is deactivated');
      const { passwordHash: _, ...user } = found;
      return session(user, await ctx.tokens.issuePair(user.id, { generation }));
    }),

  refresh: blogProcedure()
    .rest({ method: 'POST', path: '/auth/refresh' })
    .use(limited)
    .headers(noStore)
    .meta({
      summary: 'Trade a refresh token for a new pair (single use)',
      description:
        'A refresh token works once. Sending a used one again ends every session of that login (the token was stolen, or this is a replay).',
      errors: ['INVALID_TOKEN'],
    })
    .input(z.object({ refreshToken: z.string().min(1).max(tokenLength) }))
    .output(Session)
    .mutation(async ({ input, ctx }) => {
      let owner: UserRecord | undefined;
      const pair = await ctx.tokens.refresh(input.refreshToken, {
        allowUser: async (id) => {
          owner = await ctx.repos.users.findById(id);
          return owner?.isActive === true;
        },
      });
      if (owner === undefined) throw new InvalidTokenError('user not found');
      return session(owner, pair);
    }),

  logout: blogProcedure()
    .rest({ method: 'POST', path: '/auth/logout' })
    .meta({
      summary: 'Revoke this access token and its refresh family',
      description: 'Signs out this login: its access token and every refresh token it produced stop working.',
    })
    .guard(authenticated)
    .output(Success)
    .mutation(async ({ ctx }) => {
      if (ctx.auth !== undefined) await ctx.tokens.revoke(ctx.auth.claims);
      return { success: true as const };
    }),

  me: blogProcedure()
    .rest({ method: 'GET', path: '/auth/me' })
    .meta({
      summary: 'The signed-in user',
      description: 'The user the bearer token belongs to, in the authenticated view.',
    })
    .guard(authenticated)
    .output(User.authenticated)
    .query(({ ctx }) => ctx.user),

  forgotPassword: blogProcedure()
    .rest({ method: 'POST', path: '/auth/forgot-password', status: 202 })
    .use(limited)
    .meta({
      summary: 'Send a password-reset link; the answer is the same whether or not the email exists',
      description:
        'Always 202, so the answer does not tell whether an account exists. The link holds a single-use token valid for one hour.',
    })
    .input(z.object({ email }))
    .output(Success)
    .mutation(async ({ input, ctx }) => {
      const user = await ctx.repos.users.findByEmail(input.email);
      // The answer leaves before the token is stored and mailed, so its timing is the same
      // whether or not the email belongs to an account.
      if (user?.isActive === true) {
        ctx.background(async () => {
          await ctx.repos.passwordResets.prune();
          const token = randomBytes(32).toString('base64url');
          const expiresAt = new Date(Date.now() + resetLifetimeMs);
          await ctx.repos.passwordResets.create({ tokenHash: sha256(token), userId: user.id, expiresAt });
          await ctx.mailer.sendPasswordReset({ to: user.email, name: user.name, token, expiresAt });
        });
      }
      return { success: true as const };
    }),

  resetPassword: blogProcedure()
    .rest({ method: 'POST', path: '/auth/reset-password' })
    .meta({
      summary: 'Set a new password with a reset token; signs out every session',
      description: 'The token works once and expires after an hour. Every session of the user ends.',
    })
    .input(z.object({ token: z.string().min(1).max(256), password }))
    .output(Success)
    .mutation(async ({ input, ctx }) => {
      const userId = await ctx.repos.passwordResets.consume(sha256(input.token));
      if (userId === undefined) {
        throw new ValidationError([
          { path: 'token', message: 'The reset token is unknown, used or expired' },
        ]);
      }
      await ctx.repos.users.setPassword(userId, await hashPassword(input.password));
      await ctx.repos.passwordResets.invalidateForUser(userId);
      await ctx.tokens.revokeAllForUser(userId);
      return { success: true as const };
    }),
});
