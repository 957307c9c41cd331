/**
 * /api/auth/*: registration, login, token refresh, logout, the caller, password reset. The
 * procedures are Proceed's (proceedjs/auth, Proceed's docs/accounts.md); the blog gives them its
 * users, its reset tokens and its mailer (docs/blog.md).
 */
import { procedures } from 'proceedjs';
import { accountProcedures, accountRateLimit } from 'proceedjs/auth';
import { z } from 'zod';
import { blogProcedure } from '../context.js';
import { limits, User } from '../resources.js';

/**
 * The routes that take a password, a refresh token or an email from anyone are limited per client
 * IP: 10 a minute per route unless AUTH_RATE_LIMIT says otherwise (app.ts passes it by name).
 */
export const authRateLimit = accountRateLimit;

const { register, login, refresh, logout, me, forgotPassword, resetPassword } = accountProcedures({
  procedure: blogProcedure,
  users: (ctx) => ctx.repos.users,
  tokens: (ctx) => ctx.tokens,
  view: User.authenticated,
  profile: { name: z.string().trim().min(1).max(limits.name) },
  passwordCost: (ctx) => ctx.passwordCost,
  passwordReset: {
    store: (ctx) => ctx.repos.passwordResets,
    send: (ctx, { user, token, expiresAt }) =>
      ctx.mailer.sendPasswordReset(
        { to: user.email, name: user.name, userId: user.id, token, expiresAt },
        ctx.request.log,
      ),
    background: (ctx, task) => ctx.background(task),
  },
});

export const auth = procedures('auth', {
  register,
  login,
  refresh,
  logout,
  me,
  forgotPassword,
  resetPassword,
});
