/**
 * The blog's data layer: open the database (migrated), then one repository per table.
 *
 * @example
 * const database = await openDatabase();
 * const attachments = fileAttachments(database.db, './.data/attachments');
 * const { users, posts, passwordResets } = repositories(database, { attachments });
 */
import type { AttachmentStore } from './attachments.js';
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
  /** Post attachments: files in a directory by default, or another store (docs/blog.md, "Attachments"). */
  attachments: AttachmentStore;
}

/** Every repository over one database, and the store that keeps the attachments' bytes. */
export function repositories(
  database: Pick<Database, 'db' | 'query' | 'prepared'>,
  stores: { attachments: AttachmentStore },
): Repositories {
  const { db } = database;
  return {
    users: usersRepository(db),
    posts: postsRepository(database),
    passwordResets: passwordResetsRepository(db),
    attachments: stores.attachments,
  };
}
