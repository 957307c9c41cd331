/**
 * Users: the queries behind `/api/users` and the auth flows. Emails are stored lowercased and
 * unique whatever their case; password hashes never leave this module except through
 * {@link UsersRepository.findByEmail}, which login needs.
 */
import { and, asc, count, desc, eq, gte, or, type SQL, sql } from 'drizzle-orm';
import { ConflictError, PreconditionFailedError } from 'proceedjs';
import type { OffsetParams } from 'proceedjs/pagination';
import type { Db } from './connect.js';
import { isUniqueViolation } from './errors.js';
import { newId } from './ids.js';
import { type Role, users } from './schema.js';

/** A user with the password hash, as stored: only for checking a password. */
export type UserWithPassword = typeof users.$inferSelect;

/** A user as every other query returns it: no password hash. */
export type User = Omit<UserWithPassword, 'passwordHash'>;

/**
 * The signed-in user by id (`$1`) in plain SQL, each column named as a {@link User} field: the
 * auth plugin loads it in the statement that checks the token's revocation, one round trip per
 * signed-in request (app.ts; docs/auth.md, "One round trip"). The test beside this file checks
 * that it reads what {@link UsersRepository.findById} does, less the timestamps
 * ({@link SignedInUser}).
 */
export const signedInUserSql = `SELECT id, email, name, role, is_active AS "isActive", version
  FROM users WHERE id = $1`;

/**
 * The signed-in user, as `ctx.user` holds it: what guards, views of `me` and a user's own write
 * read. Its timestamps are left out: no signed-in request reads them, and parsing two dates
 * was a measurable part of every signed-in request (docs/performance.md, "The blog by hand").
 */
export type SignedInUser = Omit<User, 'createdAt' | 'updatedAt'>;

export interface NewUser {
  email: string;
  name: string;
  /** From `hashPassword` (proceed/auth): the repository never sees a password. */
  passwordHash: string;
  role?: Role | undefined;
  isActive?: boolean | undefined;
}

/** The fields an update may change; `undefined` leaves one as it is. */
export type UserPatch = {
  [K in 'name' | 'email' | 'role' | 'isActive']?: User[K] | undefined;
};

/** The columns `GET /api/users` may sort by. */
export const userSortColumns = ['name', 'email', 'createdAt', 'updatedAt'] as const;
export type UserSortColumn = (typeof userSortColumns)[number];

export interface ListUsersParams extends OffsetParams {
  sortBy?: UserSortColumn | undefined;
  /** Case-insensitive substring of name or email; `%` and `_` match themselves. */
  search?: string | undefined;
  role?: Role | undefined;
  isActive?: boolean | undefined;
  /** createdAt ≥ this instant. */
  createdAfter?: Date | undefined;
}

export interface UsersRepository {
  /** Inserts a user. A taken email (any case) throws `ConflictError` (409). */
  create(input: NewUser): Promise<User>;
  findById(id: string): Promise<User | undefined>;
  /** Case-insensitive; with the password hash, for login. */
  findByEmail(email: string): Promise<UserWithPassword | undefined>;
  /** One offset page: the rows and how many match the filters. */
  list(params: ListUsersParams): Promise<{ items: User[]; total: number }>;
  /**
   * Changes the given fields and adds one to `version`; `undefined` when there is no such user.
   * A taken email throws `ConflictError`. With `version`, changes only that version of the user:
   * another one throws `PreconditionFailedError` (412) and changes nothing.
   */
  update(id: string, patch: UserPatch, version?: number): Promise<User | undefined>;
  /**
   * Deletes the user, their posts and password resets; `false` when there was no such user.
   * With `version`, only that version of the user (else `PreconditionFailedError`, 412).
   */
  delete(id: string, version?: number): Promise<boolean>;
  /** `false` when there is no such user. */
  setPassword(id: string, passwordHash: string): Promise<boolean>;
  /**
   * A login's re-hash at a stronger cost: only while the stored hash is still `previousHash`, so a
   * password changed meanwhile stays changed. Not a change of the user (no new version).
   */
  replacePasswordHash(id: string, previousHash: string, passwordHash: string): Promise<boolean>;
  /**
   * Makes sure an admin with this email exists and has this password (ADMIN_EMAIL and
   * ADMIN_PASSWORD at start-up): creates it, or promotes, reactivates and re-keys it.
   */
  ensureAdmin(input: { email: string; name: string; passwordHash: string }): Promise<User>;
}

const publicColumns = {
  id: users.id,
  email: users.email,
  name: users.name,
  role: users.role,
  isActive: users.isActive,
  createdAt: users.createdAt,
  updatedAt: users.updatedAt,
  version: users.version,
};

/**
 * Sort keys per column. Text sorts case-insensitively, then byte-wise (`COLLATE "C"`), so the
 * order is the same on every server whatever its locale, PGlite included.
 */
const sortKeys: Record<UserSortColumn, SQL[]> = {
  name: [sql`lower(${users.name}) collate "C"`, sql`${users.name} collate "C"`],
  email: [sql`${users.email} collate "C"`],
  createdAt: [sql`${users.createdAt}`],
  updatedAt: [sql`${users.updatedAt}`],
};

/** Emails compare case-insensitively; storing them lowercased keeps every lookup on the index. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** A LIKE pattern that matches `text` literally anywhere: `\`, `%` and `_` are escaped. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

const emailTaken = () => new ConflictError('A user with this email already exists');

function filtersOf(params: ListUsersParams): SQL | undefined {
  const conditions: (SQL | undefined)[] = [];
  if (params.search !== undefined && params.search !== '') {
    const pattern = containsPattern(params.search);
    conditions.push(
      or(sql`${users.name} ILIKE ${pattern} ESCAPE '\\'`, sql`${users.email} ILIKE ${pattern} ESCAPE '\\'`),
    );
  }
  if (params.role !== undefined) conditions.push(eq(users.role, params.role));
  if (params.isActive !== undefined) conditions.push(eq(users.isActive, params.isActive));
  if (params.createdAfter !== undefined) conditions.push(gte(users.createdAt, params.createdAfter));
  return and(...conditions);
}

/**
 * The users repository over a Drizzle database (PGlite or PostgreSQL).
 *
 * @example
 * const users = usersRepository(database.db);
 * const user = await users.create({ email: 'ada@example.com', name: 'Ada', passwordHash: await hashPassword('s3cret!!') });
 * const { items, total } = await users.list({ page: 1, limit: 20, sortOrder: 'asc', search: 'ada' });
 */
export function usersRepository(db: Db): UsersRepository {
  // The auth plugin's user loader runs this on every signed-in request: prepared once.
  const byId = db
    .select(publicColumns)
    .from(users)
    .where(eq(users.id, sql.placeholder('id')))
    .prepare('users_by_id');
  const repository: UsersRepository = {
    async create(input) {
      try {
        const [created] = await db
          .insert(users)
          .values({
            id: newId(),
            email: normalizeEmail(input.email),
            name: input.name,
            passwordHash: input.passwordHash,
            role: input.role ?? 'user',
            isActive: input.isActive ?? true,
          })
          .returning(publicColumns);
        return created as User;
      } catch (error) {
        if (isUniqueViolation(error, 'users_email_key')) throw emailTaken();
        throw error;
      }
    },

    async findById(id) {
      return (await byId.execute({ id }))[0];
    },

    async findByEmail(email) {
      const [found] = await db
        .select()
        .from(users)
        .where(sql`lower(${users.email}) = ${normalizeEmail(email)}`);
      return found;
    },

    async list(params) {
      const where = filtersOf(params);
      const direction = params.sortOrder === 'desc' ? desc : asc;
      // UUIDv7 ids grow with time: ordering by id alone is creation order, and id breaks every tie.
      const order =
        params.sortBy === undefined
          ? [direction(users.id)]
          : [...sortKeys[params.sortBy].map((key) => direction(key)), direction(users.id)];
      // The page and its total from one snapshot: side by side on two connections, a sign-up
      // landing between them gave a total that disagreed with the page.
      return db.transaction(
        async (tx) => {
          const items = await tx
            .select(publicColumns)
            .from(users)
            .where(where)
            .orderBy(...order)
            .limit(params.limit)
            .offset((params.page - 1) * params.limit);
          const [counted] = await tx.select({ total: count() }).from(users).where(where);
          return { items, total: counted?.total ?? 0 };
        },
        { isolationLevel: 'repeatable read', accessMode: 'read only' },
      );
    },

    async update(id, patch, version) {
      const changes = {
        ...(patch.name === undefined ? {} : { name: patch.name }),
        ...(patch.email === undefined ? {} : { email: normalizeEmail(patch.email) }),
        ...(patch.role === undefined ? {} : { role: patch.role }),
        ...(patch.isActive === undefined ? {} : { isActive: patch.isActive }),
      };
      try {
        const [updated] = await db
          .update(users)
          .set({ ...changes, updatedAt: sql`now()`, version: sql`${users.version} + 1` })
          .where(and(eq(users.id, id), version === undefined ? undefined : eq(users.version, version)))
          .returning(publicColumns);
        if (updated !== undefined || version === undefined) return updated;
        return await stillThere(id);
      } catch (error) {
        if (isUniqueViolation(error, 'users_email_key')) throw emailTaken();
        throw error;
      }
    },

    async delete(id, version) {
      const deleted = await db
        .delete(users)
        .where(and(eq(users.id, id), version === undefined ? undefined : eq(users.version, version)))
        .returning({ id: users.id });
      if (deleted.length > 0) return true;
      if (version !== undefined) await stillThere(id);
      return false;
    },

    async setPassword(id, passwordHash) {
      const updated = await db
        .update(users)
        .set({ passwordHash, updatedAt: sql`now()` })
        .where(eq(users.id, id))
        .returning({ id: users.id });
      return updated.length > 0;
    },

    async replacePasswordHash(id, previousHash, passwordHash) {
      const updated = await db
        .update(users)
        .set({ passwordHash })
        .where(and(eq(users.id, id), eq(users.passwordHash, previousHash)))
        .returning({ id: users.id });
      return updated.length > 0;
    },

    async ensureAdmin(input) {
      const email = normalizeEmail(input.email);
      const promote = async () => {
        const [promoted] = await db
          .update(users)
          .set({
            passwordHash: input.passwordHash,
            role: 'admin',
            isActive: true,
            updatedAt: sql`now()`,
            version: sql`${users.version} + 1`,
          })
          .where(sql`lower(${users.email}) = ${email}`)
          .returning(publicColumns);
        return promoted;
      };
      const existing = await promote();
      if (existing !== undefined) return existing;
      try {
        return await repository.create({
          email,
          name: input.name,
          passwordHash: input.passwordHash,
          role: 'admin',
        });
      } catch (error) {
        // Another instance starting at the same moment created it first.
        if (!(error instanceof ConflictError)) throw error;
        const raced = await promote();
        if (raced === undefined) throw error;
        return raced;
      }
    },
  };
  /** After a write conditional on a version found nothing: `undefined` if the user is gone, else 412. */
  async function stillThere(id: string): Promise<undefined> {
    const [found] = await db.select({ id: users.id }).from(users).where(eq(users.id, id));
    if (found === undefined) return undefined;
    throw new PreconditionFailedError();
  }
  return repository;
}
