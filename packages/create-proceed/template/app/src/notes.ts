/**
 * /api/notes: anyone reads the public notes, a signed-in user also their own private ones, an
 * admin every note. Only a note's owner or an admin may change or delete it. Each note is shown
 * in the view its caller may see of it: more fields to its owner, every field to an admin.
 */
import { and, asc, desc, eq, gt, lt, or, type SQL } from 'drizzle-orm';
import { NotFoundError, procedures } from 'proceedjs';
import { authenticated, uuidv7 } from 'proceedjs/auth';
import { cursorInput, cursorPage, keysetClauses, paginateKeyset } from 'proceedjs/pagination';
import { owned, resource } from 'proceedjs/resource';
import { z } from 'zod';
import { type AppContext, p } from './context.js';
import { notes } from './schema.js';

export const Note = resource(
  'Note',
  {
    // Anyone who may read the note.
    public: { id: z.uuid(), title: z.string(), body: z.string() },
    // Its owner (and admins).
    owner: { isPrivate: z.boolean(), updatedAt: z.date() },
    // Admins only.
    admin: { ownerId: z.uuid(), createdAt: z.date() },
  },
  {
    // Who owns a note: one rule for the view a caller gets, what they may change, and the lists.
    owner: 'ownerId',
    admin: (ctx: AppContext) => ctx.user?.role === 'admin',
  },
);

const title = z.string().trim().min(1).max(200);
const body = z.string().max(10_000);
const id = z.object({ id: z.uuid() });

/**
 * The notes a caller may read, as SQL: the public ones, their own (`Note.scopeOf` says whose,
 * from the resource's owner rule, on its `ownerField` column), and every note for an admin.
 */
function readableBy(ctx: AppContext): SQL | undefined {
  const scope = Note.scopeOf(ctx);
  if (scope.kind === 'admin') return undefined;
  const open = eq(notes.isPrivate, false);
  return scope.kind === 'anonymous' ? open : or(open, eq(notes.ownerId, scope.userId));
}

/** The one row a query found; a 404 when there is none (a note deleted meanwhile, too). */
function found<Row>([row]: Row[]): Row {
  if (row === undefined) throw new NotFoundError('No note with this id');
  return row;
}

/** The note, if the caller may read it; someone else's private note is not there for them. */
const findNotes = (ctx: AppContext, noteId: string) =>
  ctx.db
    .select()
    .from(notes)
    .where(and(eq(notes.id, noteId), readableBy(ctx)));

/**
 * Loads the note the path names, once, and lets on only its owner or an admin; the handler finds
 * it on `ctx.note`. A note the caller may not read is a 404, never a 403 that would tell it exists.
 */
const ownNote = owned(Note, async (ctx: AppContext, noteId) => (await findNotes(ctx, noteId))[0]);

/** The listing's bounds, the same for its input and its answer: the document says both. */
const listing = { cursor: z.uuid(), maxLimit: 100 };

export const notesProcedures = procedures('notes', {
  // GET /api/notes?limit=20&cursor=…: newest first; follow nextCursor for older ones.
  listNotes: p()
    .meta({ summary: 'The notes the caller may read, newest first, a page at a time' })
    .input(cursorInput(listing))
    .output(cursorPage(Note.perRecord, listing))
    .query(({ input, ctx }) =>
      paginateKeyset(
        input,
        (query) => {
          const keyset = keysetClauses({ lt, gt, asc, desc }, notes.id, query);
          return ctx.db
            .select()
            .from(notes)
            .where(and(readableBy(ctx), keyset.where))
            .orderBy(keyset.orderBy)
            .limit(keyset.limit);
        },
        { key: 'id' },
      ),
    ),

  // GET /api/notes/:id
  getNote: p()
    .meta({ summary: 'A note by its id' })
    .input(id)
    .output(Note.perRecord)
    .query(async ({ input, ctx }) => found(await findNotes(ctx, input.id))),

  // POST /api/notes: 201, with Location: /api/notes/{id}
  createNote: p()
    .meta({ summary: 'Create a note (signed in)' })
    .guard(authenticated)
    .input(z.object({ title, body, isPrivate: z.boolean().default(false) }))
    .output(Note.perRecord)
    .mutation(async ({ input, ctx }) =>
      found(
        await ctx.db
          .insert(notes)
          .values({ id: uuidv7(), ownerId: ctx.user.id, ...input })
          .returning(),
      ),
    ),

  // PUT /api/notes/:id with the fields to change as the body
  updateNote: p()
    .meta({ summary: 'Change fields of a note (its owner or an admin)' })
    .guard(authenticated)
    .input(
      z.object({
        id: z.uuid(),
        // Nothing to change would only move updatedAt: an empty body is a 400.
        data: z
          .object({ title, body, isPrivate: z.boolean() })
          .partial()
          .refine((data) => Object.keys(data).length > 0, 'Send at least one field')
          .meta({ minProperties: 1 }),
      }),
    )
    .use(ownNote)
    .output(Note.perRecord)
    .mutation(async ({ input, ctx }) =>
      found(
        await ctx.db
          .update(notes)
          .set({ ...input.data, updatedAt: new Date() })
          .where(eq(notes.id, ctx.note.id))
          .returning(),
      ),
    ),

  // DELETE /api/notes/:id: { success: true }
  deleteNote: p()
    .meta({ summary: 'Delete a note (its owner or an admin)' })
    .guard(authenticated)
    .input(id)
    .use(ownNote)
    .mutation(async ({ ctx }) => {
      await ctx.db.delete(notes).where(eq(notes.id, ctx.note.id));
    }),
});
