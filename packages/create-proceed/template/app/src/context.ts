/** What every handler receives as `ctx`. */
import { type BaseContext, procedure } from 'proceedjs';
import type { AuthContext, ScryptCost, TokenService } from 'proceedjs/auth';
import type { Db } from './db.js';
import type { User } from './schema.js';

/** The signed-in user, as the auth plugin loads it on every request: never the password hash. */
export type SignedInUser = Pick<User, 'id' | 'email' | 'name' | 'role'>;

export interface AppContext extends AuthContext<SignedInUser>, BaseContext {
  db: Db;
  tokens: TokenService;
  /** How much work a password's hash takes: `buildApp({ passwordCost })`. */
  passwordCost: ScryptCost;
}

/** Starts a procedure of this app. */
export const p = () => procedure<AppContext>();
