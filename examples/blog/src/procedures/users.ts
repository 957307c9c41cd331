/** /api/users (docs/blog.md). */
import { ForbiddenError, NotFoundError, type Precondition, procedures } from 'proceedjs';
import { admin, authenticated, hashPassword } from 'proceedjs/auth';
import { offsetInput, offsetPage, offsetResult } from 'proceedjs/pagination';
import { z } from 'zod';
import { type BlogContext, blogProcedure } from '../context.js';
import { roles, type User as UserRecord, userSortColumns } from '../db/index.js';
import { selfOrAdmin } from '../guards.js';
import { limits, Success, User } from '../resources.js';
import { updateInput } from '../schemas.js';

const id = z.object({ id: z.uuid() });

const noSuchUser = () => new NotFoundError('No user with this id');

/** What ETags and If-Match name: the user's version (docs/blog.md, "Versions and If-Match"). */
const userVersion = (user: UserRecord) => user.version;

/**
 * The version a write must find. Without If-Match, any (nothing is read). With it, the user is
 * read (the caller themself is loaded already), checked, and the write applies to that version
 * or fails with 412.
 */
async function versionToWrite(
  ctx: BlogContext & { precondition: Precondition },
  userId: string,
): Promise<number | undefined> {
  if (!ctx.precondition.sent) return undefined;
  const current = ctx.user?.id === userId ? ctx.user : await ctx.repos.users.findById(userId);
  if (current === undefined) throw noSuchUser();
  ctx.precondition.check(current.version);
  return current.version;
}

export const users = procedures('users', {
  listUsers: blogProcedure()
    .meta({
      summary: 'Users, a page at a time (admin)',
      description: 'Offset pages with the total count; filters combine with AND.',
    })
    .guard(admin)
    .input(
      offsetInput({
        maxLimit: limits.page,
        sortBy: userSortColumns,
        filters: {
          search: z.string().max(200).optional().describe('Case-insensitive part of the name or email'),
          role: z.enum(roles).optional(),
          isActive: z.boolean().optional(),
          createdAfter: z
            .date()
            .min(new Date('0001-01-01T00:00:00Z'), 'Dates start at year 1')
            .max(new Date('9999-12-31T23:59:59Z'), 'Dates end at year 9999')
            .optional()
            .describe('Users created at or after this instant'),
        },
      }),
    )
    .output(offsetPage(User.admin, { maxLimit: limits.page }))
    .query(async ({ input, ctx }) => {
      const { items, total } = await ctx.repos.users.list(input);
      return offsetResult(items, total, input);
    }),

  getUser: blogProcedure()
    .meta({
      summary: 'A user, public view',
      description: "Anyone may read a public profile. The `ETag` carries the user's version.",
    })
    .mcp({ description: "Anyone may read a user's public profile." })
    .input(id)
    .output(User.public)
    .versioned(userVersion)
    .query(async ({ input, ctx }) => {
      const user = await ctx.repos.users.findById(input.id);
      if (user === undefined) throw noSuchUser();
      return user;
    }),

  createUser: blogProcedure()
    .meta({
      summary: 'Create a user with any role (admin)',
      description: 'A taken email, in any case, is 409. Send an `Idempotency-Key` to retry safely.',
    })
    .mcp({ description: 'A taken email, in any case, is a 409 conflict.' })
    .guard(admin)
    .input(
      z.object({
        email: z.email().max(limits.email),
        name: z.string().trim().min(1).max(limits.name),
        password: z.string().min(8).max(256),
        role: z.enum(roles).optional(),
      }),
    )
    .output(User.admin)
    .mutation(async ({ input, ctx }) => {
      const { password, ...rest } = input;
      return ctx.repos.users.create({ ...rest, passwordHash: await hashPassword(password) });
    }),

  updateUser: blogProcedure()
    .meta({
      summary: 'Rename yourself; admins may also change role and active state',
      description:
        'Deactivating a user ends every session of theirs for good. With `If-Match`, the change applies only to the version it names.',
    })
    .mcp({
      description:
        'Rename yourself; admins may also change role and active state. Deactivating a user ends every session of theirs for good.',
    })
    .guard(authenticated, selfOrAdmin)
    .input(
      updateInput({
        name: z.string().trim().min(1).max(limits.name).optional(),
        role: z.enum(roles).optional(),
        isActive: z.boolean().optional(),
      }),
    )
    .output(User.authenticated)
    .versioned(userVersion)
    .mutation(async ({ input, ctx }) => {
      const isAdmin = ctx.user.role === 'admin';
      if (!isAdmin && (input.data.role !== undefined || input.data.isActive !== undefined)) {
        throw new ForbiddenError('Only an admin may change role or isActive');
      }
      const patch = input.data;
      const user = await ctx.repos.users.update(input.id, patch, await versionToWrite(ctx, input.id));
      if (user === undefined) throw noSuchUser();
      // Deactivation ends every session and reset link for good: reactivating must not revive a
      // stolen token or a leaked link.
      if (patch.isActive === false) {
        await ctx.tokens.revokeAllForUser(user.id);
        await ctx.repos.passwordResets.invalidateForUser(user.id);
      }
      return user;
    }),

  deleteUser: blogProcedure()
    .meta({
      summary: 'Delete a user and their posts (admin)',
      description: 'Their posts and sessions go with them. With `If-Match`, only the version it names.',
    })
    .mcp({ description: 'Their posts and sessions go with them.' })
    .guard(admin)
    .input(id)
    .output(Success)
    .versioned()
    .mutation(async ({ input, ctx }) => {
      // Read first: their posts' rows, attachments included, go with them.
      const postIds = await ctx.repos.posts.idsByAuthor(input.id);
      if (!(await ctx.repos.users.delete(input.id, await versionToWrite(ctx, input.id)))) throw noSuchUser();
      await ctx.tokens.revokeAllForUser(input.id);
      // Their posts' attachments' bytes go in the background.
      ctx.background(() => ctx.repos.attachments.removeFilesOf(postIds));
      return { success: true as const };
    }),
});
