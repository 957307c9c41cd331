/**
 * The tables, for Drizzle. After changing them, `npm run db:generate` writes the SQL migration
 * into drizzle/; the app applies it at its next start.
 */
import { boolean, index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

export const roles = ['user', 'admin'] as const;

const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();
const updatedAt = () => timestamp('updated_at', { withTimezone: true }).notNull().defaultNow();

export const users = pgTable('users', {
  // UUIDv7 (uuidv7() from proceedjs/auth): ids that sort in the order they were made.
  id: uuid('id').primaryKey(),
  // Stored in lowercase, so one address is one account whatever its case.
  email: text('email').notNull().unique(),
  name: text('name').notNull(),
  passwordHash: text('password_hash').notNull(),
  role: text('role', { enum: roles }).notNull().default('user'),
  createdAt: createdAt(),
});

export const notes = pgTable(
  'notes',
  {
    // UUIDv7 too: the list's cursor is the id, newest first.
    id: uuid('id').primaryKey(),
    ownerId: uuid('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    title: text('title').notNull(),
    body: text('body').notNull(),
    isPrivate: boolean('is_private').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [
    index('notes_owner_id_id_idx').on(table.ownerId, table.id),
    index('notes_is_private_id_idx').on(table.isPrivate, table.id),
  ],
);

export type User = typeof users.$inferSelect;
export type Note = typeof notes.$inferSelect;
