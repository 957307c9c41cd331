/** What the account procedures are given (src/auth/accounts.ts, docs/accounts.md): the app's users, its tokens, its options. */
import type { z } from 'zod';
import type { ProcedureBuilder } from '../core/procedure.js';
import type { BaseContext } from '../core/request-context.js';
import type { RateLimitRule } from '../core/steps.js';
import type { AccountLimit, failedAttemptLimit, resetMailLimit } from './account-limits.js';
import type { ScryptCost } from './password.js';
import type { AuthContext } from './plugin.js';
import type { TokenService } from './tokens.js';

export type MaybePromise<T> = T | Promise<T>;

/** What the account procedures read of a user. A user without `isActive` is active. */
export interface AccountUser {
  id: string;
  email: string;
  isActive?: boolean | undefined;
}

/**
 * Where an app keeps its users, as the account procedures use it. Emails reach it lowercased and
 * trimmed; it never sees a password, only hashes from `hashPassword`.
 *
 * @example
 * const store: AccountStore<User, { name: string }> = {
 *   findByEmail: (email) => db.users.findFirst({ where: eq(users.email, email) }),
 *   findById: (id) => db.users.findFirst({ where: eq(users.id, id), columns: { passwordHash: false } }),
 *   create: (account) => db.insert(users).values(account).onConflictDoNothing().returning().then(([row]) => row),
 *   setPassword: (id, passwordHash) => db.update(users).set({ passwordHash }).where(eq(users.id, id)).then(() => {}),
 *   replacePasswordHash: (id, previous, passwordHash) =>
 *     db.update(users).set({ passwordHash }).where(and(eq(users.id, id), eq(users.passwordHash, previous))).then(() => {}),
 * };
 */
export interface AccountStore<User extends AccountUser, Profile extends object = Record<never, never>> {
  /** The user with this email and their password hash, for login and password change. */
  findByEmail(email: string): Promise<(User & { passwordHash: string }) | undefined>;
  /** The user with this id (refresh reads it to refuse a deleted or deactivated user). */
  findById(id: string): Promise<User | undefined>;
  /**
   * Adds a user with the `user` role (or none): `undefined` (or a thrown `ConflictError`) when
   * the email is taken, in any case.
   */
  create(account: Profile & { email: string; passwordHash: string }): Promise<User | undefined>;
  setPassword(userId: string, passwordHash: string): Promise<unknown>;
  /**
   * Replaces the user's hash only while it is still `previousHash`: a login re-hashes a password
   * stored at a weaker cost than `hashPassword`'s default with it (docs/auth.md, "Passwords"),
   * and a password changed meanwhile stays changed; a password change writes with it too, so
   * that a reset landing during the change keeps its password. Without it, stored hashes keep
   * their cost.
   */
  replacePasswordHash?(userId: string, previousHash: string, passwordHash: string): Promise<unknown>;
}

/**
 * Where password-reset tokens are kept, by their SHA-256 hash: a database leak gives no working
 * link.
 */
export interface ResetTokenStore {
  create(reset: { tokenHash: string; userId: string; expiresAt: Date }): Promise<void>;
  /**
   * Marks the token used and answers its user; `undefined` when it is unknown, used or expired.
   * Mark the user's other unused tokens used in the same step (one statement): two links of one
   * user used at the same moment then cannot both set a password (docs/accounts.md).
   */
  consume(tokenHash: string): Promise<string | undefined>;
  /** Makes every unused token of the user unusable (a reset or a password change happened). */
  invalidateForUser(userId: string): Promise<void>;
  /** Deletes used and expired tokens; called before each new one is stored. */
  prune?(): Promise<unknown>;
}

export interface PasswordResetOptions<Ctx, User extends AccountUser> {
  /** The app's reset token store. */
  store: (ctx: Ctx) => ResetTokenStore;
  /** Sends the link: `token` goes into it, and only to `user.email`. */
  send: (ctx: Ctx, message: { user: User; token: string; expiresAt: Date }) => Promise<void>;
  /**
   * Runs the token's storage and mail after the answer has left, so that the answer's timing is
   * the same whether or not the email belongs to an account. The app's: its shutdown waits for
   * the task and its log gets the failure.
   */
  background: (ctx: Ctx, task: () => Promise<void>) => void;
  /** How long a link works, in ms. Default one hour. */
  lifetime?: number;
  /**
   * Reset mails per address (counted whether or not it has an account): past `max` in `window`
   * ms, 429 until the window ends. Default {@link resetMailLimit}, five an hour, named
   * `reset-mails`; `false`: none.
   */
  mailLimit?: AccountLimit | false;
}

export interface AccountOptions<
  Ctx extends BaseContext & AuthContext<unknown>,
  User extends AccountUser,
  Profile extends z.ZodRawShape,
  View extends z.ZodType,
> {
  /** The app's procedure builder (`() => procedure<AppContext>()`). */
  procedure: () => ProcedureBuilder<Ctx>;
  /** The app's users. */
  users: (ctx: Ctx) => AccountStore<User, z.infer<z.ZodObject<Profile>>>;
  /** The TokenService the auth plugin verifies with. */
  tokens: (ctx: Ctx) => TokenService;
  /** The user as session answers and `me` show it: the app's authenticated view. */
  view: View;
  /** What registration asks besides email and password (say `{ name: z.string().min(1) }`). */
  profile?: Profile;
  /**
   * The limit per client IP on register, login, refresh, password change and forgot-password.
   * Default {@link accountRateLimit}; its name lets `createApp({ rateLimit: { limits } })`
   * change it.
   */
  rateLimit?: RateLimitRule;
  /**
   * Failed attempts per account, whatever addresses they come from: wrong passwords at login (per
   * email, known or not) and at password change (per user). Past `max` failures in `window` ms,
   * every attempt for the account is refused 429 until the window ends, the right password
   * included. Default {@link failedAttemptLimit}, ten in 15 minutes, named `failed-attempts`;
   * `false`: none (docs/accounts.md, "Limits").
   */
  failedAttempts?: AccountLimit | false;
  /** Called once a user has registered, before the answer: send a verification mail here. */
  onRegistered?: (ctx: Ctx, user: User) => MaybePromise<void>;
  /** Password reset by mail: `forgotPassword` and `resetPassword` exist only with it. */
  passwordReset?: PasswordResetOptions<Ctx, User> | undefined;
  /** Where the routes live under `/api`. Default `/auth`. */
  path?: string;
  /**
   * The scrypt cost of the hashes register, password change and reset make, of the work a login
   * for an unknown email does, and below which a login re-hashes (with `replacePasswordHash`).
   * Default `hashPassword`'s, OWASP's minimum (docs/auth.md, "Passwords"). A function reads it
   * from the context, as `users` and `tokens` are (an app that takes it from its settings).
   */
  passwordCost?: ScryptCost | ((ctx: Ctx) => ScryptCost);
}
