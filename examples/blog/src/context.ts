/** What every blog handler receives. */
import type { BaseContext, procedure } from 'proceedjs';
import { procedure as startProcedure } from 'proceedjs';
import type { AuthContext, ScryptCost, TokenService } from 'proceedjs/auth';
import type { Repositories, SignedInUser } from './db/index.js';
import type { PostFeed } from './feed.js';
import type { Mailer } from './mailer.js';

export interface BlogContext extends AuthContext<SignedInUser>, BaseContext {
  repos: Repositories;
  tokens: TokenService;
  mailer: Mailer;
  /** scrypt's cost for this deployment's password hashes (PASSWORD_HASH_COST): `{}` is the default. */
  passwordCost: ScryptCost;
  /** The live feed of this instance: events as posts become published (docs/blog.md). */
  feed: PostFeed;
  /** Runs work after the answer has left (errors are logged; shutdown waits for it). */
  background(task: () => Promise<void>): void;
}

/** Starts a blog procedure. */
export const blogProcedure = (): ReturnType<typeof procedure<BlogContext>> => startProcedure<BlogContext>();
