/**
 * The blog's tables for Drizzle. `migrations/*.sql` create them; this file must describe the same
 * columns (schema.test.ts compares the two on a migrated database).
 */
import { sql } from 'drizzle-orm';
import {
  boolean,
  customType,
  index,
  integer,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

export const roles = ['admin', 'user', 'guest'] as const;
export type Role = (typeof roles)[number];

export const postStatuses = ['draft', 'published', 'archived'] as const;
export type PostStatus = (typeof postStatuses)[number];

const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
const updatedAt = () => timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
/** One more on every change a view can show: what ETags and If-Match name (docs/blog.md). */
const version = () => integer('version').notNull().default(1);

export const users = pgTable(
  'users',
  {
    id: uuid('id').primaryKey(),
    email: text('email').notNull(),
    name: text('name').notNull(),
    passwordHash: text('password_hash').notNull(),
    role: text('role', { enum: roles }).notNull().default('user'),
    isActive: boolean('is_active').notNull().default(true),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    version: version(),
  },
  (table) => [
    uniqueIndex('users_email_key').on(sql`lower(${table.email})`),
    index('users_created_at_id_idx').on(table.createdAt, table.id),
  ],
);

export const posts = pgTable(
  'posts',
  {
    id: uuid('id').primaryKey(),
    authorId: uuid('author_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    title: text('title').notNull(),
    content: text('content').notNull(),
    excerpt: text('excerpt').notNull(),
    status: text('status', { enum: postStatuses }).notNull().default('draft'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    version: version(),
  },
  (table) => [
    index('posts_status_id_idx').on(table.status, table.id),
    index('posts_author_id_id_idx').on(table.authorId, table.id),
  ],
);

export const passwordResets = pgTable(
  'password_resets',
  {
    tokenHash: text('token_hash').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true, mode: 'date' }),
  },
  (table) => [index('password_resets_user_id_idx').on(table.userId)],
);

/**
 * PostgreSQL's `bytea`: bytes in, bytes out. node-postgres answers a `Buffer` and PGlite a
 * `Uint8Array`, both `Uint8Array`s; node-postgres is handed a `Buffer`, which both take.
 */
const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => 'bytea',
  toDriver: (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
});

export const attachments = pgTable(
  'attachments',
  {
    id: uuid('id').primaryKey(),
    postId: uuid('post_id')
      .notNull()
      .references(() => posts.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    mediaType: text('media_type').notNull(),
    size: integer('size').notNull(),
    /** The SHA-256 of the bytes in lower-case hex: the file's ETag. */
    sha256: text('sha256').notNull(),
    /** The bytes of a file uploaded before migration 0006; new files are on disk (src/db/attachments.ts). */
    bytes: bytea('bytes'),
    createdAt: createdAt(),
  },
  (table) => [index('attachments_post_id_idx').on(table.postId)],
);

/** Every table, for `drizzle(..., { schema })`. */
export const schema = { users, posts, passwordResets, attachments };
