/**
 * The blog's data layer: open the database (migrated), then one repository per table.
 *
 * @example
 * const database = await openDatabase();
 * const { users, posts, passwordResets, attachments } = repositories(database);
 */
import { type AttachmentStore, attachmentsRepository } from './attachments.js';
import type { Database } from './connect.js';
import { type PasswordResetsRepository, passwordResetsRepository } from './password-resets.js';
import { type PostsRepository, postsRepository } from './posts.js';
import { type UsersRepository, usersRepository } from './users.js';

export * from './attachments.js';
export * from './connect.js';
export { isUniqueViolation, sqlState } from './errors.js';
export * from './location.js';
export * from './password-resets.js';
export * from './posts.js';
export * from './schema.js';
export * from './users.js';

export interface Repositories {
  users: UsersRepository;
  posts: PostsRepository;
  passwordResets: PasswordResetsRepository;
  /** Post attachments: in the database unless another store is given (docs/blog.md, "Attachments"). */
  attachments: AttachmentStore;
}

/**
 * Every repository over one database; `stores.attachments` keeps the files elsewhere (an object
 * store) instead of in the `attachments` table.
 */
export function repositories(
  database: Pick<Database, 'db' | 'query' | 'prepared'>,
  stores: { attachments?: AttachmentStore | undefined } = {},
): Repositories {
  const { db } = database;
  return {
    users: usersRepository(db),
    posts: postsRepository(database),
    passwordResets: passwordResetsRepository(db),
    attachments: stores.attachments ?? attachmentsRepository(db),
  };
}
