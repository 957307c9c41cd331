/** What every handler receives as `ctx`. */
import { type BaseContext, procedure } from 'proceedjs';
import type { AuthContext, TokenService } from 'proceedjs/auth';
import type { Db } from './db.js';
import type { User } from './schema.js';

/** The signed-in user, as the auth plugin loads it on every request: never the password hash. */
export type SignedInUser = Pick<User, 'id' | 'email' | 'name' | 'role'>;

export interface AppContext extends AuthContext<SignedInUser>, BaseContext {
  db: Db;
  tokens: TokenService;
}

/** Starts a procedure of this app. */
export const p = () => procedure<AppContext>();
