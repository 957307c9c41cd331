/**
 * A password change, as `accountProcedures`' changePassword makes it (docs/accounts.md): the
 * current password checked, the new one written, every session ended, and a new pair for the
 * caller. A password reset or a deactivation that lands while it runs wins over it.
 */
import { ValidationError } from '../core/errors.js';
import type { AccountStore, AccountUser, ResetTokenStore } from './account-options.js';
import { InvalidTokenError } from './jwt.js';
import { hashPassword, type ScryptCost, verifyPasswordOrDummy } from './password.js';
import type { TokenPair, TokenService } from './tokens.js';

const endedMeanwhile = () =>
  new InvalidTokenError(
    'The password or the sessions of this account changed during the change (a password reset): sign in again',
  );

export async function changePassword(change: {
  readonly user: AccountUser & { email: string };
  readonly email: string;
  readonly currentPassword: string;
  readonly newPassword: string;
  readonly users: AccountStore<AccountUser, object>;
  readonly tokens: TokenService;
  readonly resets: ResetTokenStore | undefined;
  readonly cost: Required<ScryptCost>;
}): Promise<TokenPair> {
  const { users, tokens, email, cost } = change;
  const { id } = change.user;
  // Read before the hash that is checked, as at login: a user-wide revocation that lands during
  // the change (a password reset, a deactivation) is seen below, and wins.
  const generation = await tokens.userGeneration(id);
  const found = await users.findByEmail(email);
  const matches = await verifyPasswordOrDummy(found?.passwordHash, change.currentPassword, cost);
  if (found === undefined || found.id !== id || !matches)
    throw new ValidationError([{ path: 'currentPassword', message: 'The current password is wrong' }]);
  const passwordHash = await hashPassword(change.newPassword, cost);
  if ((await tokens.userGeneration(id)) !== generation) throw endedMeanwhile();
  // Written only over the hash just checked, where the store can: a reset's password stays, and
  // this change, finding another password stored, ends nothing and answers 401.
  if (users.replacePasswordHash !== undefined)
    await users.replacePasswordHash(id, found.passwordHash, passwordHash);
  else await users.setPassword(id, passwordHash);
  if ((await users.findByEmail(email))?.passwordHash !== passwordHash) throw endedMeanwhile();
  await change.resets?.invalidateForUser(id);
  await tokens.revokeAllForUser(id);
  // Another revocation since the generation was read (a reset landing now): this session ended
  // with the others. One that lands after this read ends the new pair, issued at it.
  const now = await tokens.userGeneration(id);
  if (now !== generation + 1) throw endedMeanwhile();
  return tokens.issuePair(id, { generation: now });
}
