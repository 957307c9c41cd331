/** /api/auth: register, log in, refresh, log out, and who is signed in (Proceed's docs/auth.md). */
import { eq } from 'drizzle-orm';
import { ConflictError, procedures, rateLimit, UnauthenticatedError } from 'proceedjs';
import {
  authenticated,
  hashPassword,
  InvalidTokenError,
  type TokenPair,
  uuidv7,
  verifyPasswordOrDummy,
} from 'proceedjs/auth';
import { resource } from 'proceedjs/resource';
import { z } from 'zod';
import { p, type SignedInUser } from './context.js';
import { users } from './schema.js';

export const User = resource('User', {
  public: { id: z.uuid(), name: z.string() },
  authenticated: { email: z.email(), role: z.enum(['user', 'admin']) },
});

const Session = z.object({
  user: User.authenticated,
  accessToken: z.string(),
  refreshToken: z.string(),
  tokenType: z.literal('Bearer'),
  expiresIn: z.number().int().describe('Lifetime of the access token, in seconds'),
});

const email = z.email().max(254);
/** Long enough for a passphrase, short enough that hashing cannot be used to burn CPU. */
const password = z.string().min(8, 'Use at least 8 characters').max(256);

/** Password guessing is slowed down: 10 tries a minute per client address and route (AUTH_RATE_LIMIT). */
export const authRateLimit = { name: 'auth', max: 10 } as const;
const signIn = rateLimit(authRateLimit);

/** Answers that carry tokens must not be cached (RFC 6749 §5.1). */
const noStore = { 'cache-control': 'no-store' };

const session = (user: SignedInUser, pair: TokenPair) => ({ user, ...pair });

export const auth = procedures('auth', {
  register: p()
    .rest({ method: 'POST', path: '/auth/register', status: 201 })
    .use(signIn)
    .headers(noStore)
    .meta({ summary: 'Create an account and sign in' })
    .input(z.object({ email, password, name: z.string().trim().min(1).max(100) }))
    .output(Session)
    .mutation(async ({ input, ctx }) => {
      const [user] = await ctx.db
        .insert(users)
        .values({
          id: uuidv7(),
          email: input.email.toLowerCase(),
          name: input.name,
          passwordHash: await hashPassword(input.password),
        })
        .onConflictDoNothing()
        .returning({ id: users.id, email: users.email, name: users.name, role: users.role });
      if (user === undefined) throw new ConflictError('An account with this email exists');
      return session(user, await ctx.tokens.issuePair(user.id));
    }),

  login: p()
    .rest({ method: 'POST', path: '/auth/login' })
    .use(signIn)
    .headers(noStore)
    .meta({ summary: 'Sign in with email and password', errors: ['UNAUTHENTICATED'] })
    .input(z.object({ email: z.string().min(1).max(254), password: z.string().min(1).max(256) }))
    .output(Session)
    .mutation(async ({ input, ctx }) => {
      const [found] = await ctx.db.select().from(users).where(eq(users.email, input.email.toLowerCase()));
      // An unknown email costs the same hash as a wrong password: the answer's timing does not
      // tell whether an account exists, and both get the same 401.
      const matches = await verifyPasswordOrDummy(found?.passwordHash, input.password);
      if (found === undefined || !matches) throw new UnauthenticatedError('Invalid email or password');
      const { passwordHash: _, createdAt: __, ...user } = found;
      return session(user, await ctx.tokens.issuePair(user.id));
    }),

  refresh: p()
    .rest({ method: 'POST', path: '/auth/refresh' })
    .use(signIn)
    .headers(noStore)
    .meta({
      summary: 'Trade a refresh token for a new pair',
      description: 'A refresh token works once: sent again, it ends that login (it was stolen, or replayed).',
      errors: ['INVALID_TOKEN'],
    })
    .input(z.object({ refreshToken: z.string().min(1).max(4096) }))
    .output(Session)
    .mutation(async ({ input, ctx }) => {
      let user: SignedInUser | undefined;
      const pair = await ctx.tokens.refresh(input.refreshToken, {
        allowUser: async (id) => {
          [user] = await ctx.db
            .select({ id: users.id, email: users.email, name: users.name, role: users.role })
            .from(users)
            .where(eq(users.id, id));
          return user !== undefined;
        },
      });
      if (user === undefined) throw new InvalidTokenError('user not found');
      return session(user, pair);
    }),

  logout: p()
    .rest({ method: 'POST', path: '/auth/logout', status: 204 })
    .meta({ summary: 'Sign out: this access token and its refresh token stop working' })
    .guard(authenticated)
    .mutation(async ({ ctx }) => {
      if (ctx.auth !== undefined) await ctx.tokens.revoke(ctx.auth.claims);
    }),

  me: p()
    .rest({ method: 'GET', path: '/auth/me' })
    .meta({ summary: 'The signed-in user' })
    .guard(authenticated)
    .output(User.authenticated)
    .query(({ ctx }) => ctx.user),
});
