/**
 * /api/auth: register, log in, refresh, log out, who is signed in, and password change. The
 * procedures are Proceed's (proceedjs/auth, Proceed's docs/accounts.md); this app gives them its
 * users table.
 */
import { and, eq } from 'drizzle-orm';
import { procedures } from 'proceedjs';
import { type AccountStore, accountProcedures, accountRateLimit, uuidv7 } from 'proceedjs/auth';
import { resource } from 'proceedjs/resource';
import { z } from 'zod';
import { type AppContext, p, type SignedInUser } from './context.js';
import type { Db } from './db.js';
import { users } from './schema.js';

export const User = resource('User', {
  public: { id: z.uuid(), name: z.string() },
  authenticated: { email: z.email(), role: z.enum(['user', 'admin']) },
});

/** Password guessing is slowed down: 10 tries a minute per client address and route (AUTH_RATE_LIMIT). */
export const authRateLimit = accountRateLimit;

const signedInColumns = { id: users.id, email: users.email, name: users.name, role: users.role };

/** The users table as the account procedures read and write it (emails arrive lowercased). */
export function userStore(db: Db): AccountStore<SignedInUser, { name: string }> {
  return {
    async findByEmail(email) {
      const [found] = await db
        .select({ ...signedInColumns, passwordHash: users.passwordHash })
        .from(users)
        .where(eq(users.email, email));
      return found;
    },
    async findById(id) {
      const [found] = await db.select(signedInColumns).from(users).where(eq(users.id, id));
      return found;
    },
    async create(account) {
      // A taken email inserts nothing: the procedure answers 409.
      const [created] = await db
        .insert(users)
        .values({ id: uuidv7(), ...account })
        .onConflictDoNothing()
        .returning(signedInColumns);
      return created;
    },
    async setPassword(id, passwordHash) {
      await db.update(users).set({ passwordHash }).where(eq(users.id, id));
    },
    // A login re-hashes a password stored at a weaker cost, unless it was changed meanwhile.
    async replacePasswordHash(id, previousHash, passwordHash) {
      await db
        .update(users)
        .set({ passwordHash })
        .where(and(eq(users.id, id), eq(users.passwordHash, previousHash)));
    },
  };
}

const { register, login, refresh, logout, me, changePassword } = accountProcedures({
  procedure: p,
  users: (ctx: AppContext) => userStore(ctx.db),
  tokens: (ctx) => ctx.tokens,
  passwordCost: (ctx) => ctx.passwordCost,
  view: User.authenticated,
  profile: { name: z.string().trim().min(1).max(100) },
});

export const auth = procedures('auth', { register, login, refresh, logout, me, changePassword });
