/**
 * Password-reset tokens (docs/blog.md): only a hash of each token is stored, each is single use
 * and expires. Consuming one is a single conditional UPDATE that uses up the user's other tokens
 * too, so two requests racing, with the same token or with two links of one user, cannot both
 * succeed.
 */
import { and, eq, gt, inArray, isNotNull, isNull, lte, or } from 'drizzle-orm';
import type { Db } from './connect.js';
import { passwordResets } from './schema.js';

export interface PasswordResetsRepository {
  /** Stores a token's hash for a user until `expiresAt`. */
  create(input: { tokenHash: string; userId: string; expiresAt: Date }): Promise<void>;
  /**
   * Marks the token used, with every other unused token of its user, and returns its user id;
   * `undefined` when unknown, used or expired.
   */
  consume(tokenHash: string, now?: Date): Promise<string | undefined>;
  /** Uses up every pending token of a user (after a reset, older links must stop working). */
  invalidateForUser(userId: string, now?: Date): Promise<void>;
  /** Removes used and expired tokens; returns how many. */
  prune(now?: Date): Promise<number>;
}

/**
 * The password-resets repository over a Drizzle database.
 *
 * @example
 * const resets = passwordResetsRepository(database.db);
 * await resets.create({ tokenHash: sha256(token), userId, expiresAt: new Date(Date.now() + 3_600_000) });
 * const userId = await resets.consume(sha256(tokenFromEmail)); // undefined → 400
 */
export function passwordResetsRepository(db: Db): PasswordResetsRepository {
  return {
    async create(input) {
      await db.insert(passwordResets).values(input);
    },

    async consume(tokenHash, now = new Date()) {
      // The token's user, while the token is usable; then, in the same statement, every unused
      // token of that user: a second link of the user used at the same moment waits for this
      // row lock, finds its own token used, and fails (two links cannot both set a password).
      const owner = db
        .select({ userId: passwordResets.userId })
        .from(passwordResets)
        .where(
          and(
            eq(passwordResets.tokenHash, tokenHash),
            isNull(passwordResets.usedAt),
            gt(passwordResets.expiresAt, now),
          ),
        );
      const used = await db
        .update(passwordResets)
        .set({ usedAt: now })
        .where(and(inArray(passwordResets.userId, owner), isNull(passwordResets.usedAt)))
        .returning({ userId: passwordResets.userId, tokenHash: passwordResets.tokenHash });
      return used.find((row) => row.tokenHash === tokenHash)?.userId;
    },

    async invalidateForUser(userId, now = new Date()) {
      await db
        .update(passwordResets)
        .set({ usedAt: now })
        .where(and(eq(passwordResets.userId, userId), isNull(passwordResets.usedAt)));
    },

    async prune(now = new Date()) {
      const removed = await db
        .delete(passwordResets)
        .where(or(lte(passwordResets.expiresAt, now), isNotNull(passwordResets.usedAt)))
        .returning({ tokenHash: passwordResets.tokenHash });
      return removed.length;
    },
  };
}
