/**
 * /api/notes: anyone reads the public notes, a signed-in user also their own private ones, an
 * admin every note. Only a note's owner or an admin may change or delete it. Each note is shown
 * in the view its caller may see of it: more fields to its owner, every field to an admin.
 */
import { and, asc, desc, eq, gt, lt, or, type SQL } from 'drizzle-orm';
import { ForbiddenError, type MiddlewareNext, NotFoundError, procedures, step } from 'proceedjs';
import { authenticated, uuidv7 } from 'proceedjs/auth';
import { cursorInput, cursorPage, keysetClauses, paginateKeyset } from 'proceedjs/pagination';
import { resource } from 'proceedjs/resource';
import { z } from 'zod';
import { type AppContext, p, type SignedInUser } from './context.js';
import { type Note as NoteRow, notes } from './schema.js';

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
    owner: (note: NoteRow, ctx: AppContext) => note.ownerId === ctx.user?.id,
    admin: (ctx: AppContext) => ctx.user?.role === 'admin',
  },
);

const title = z.string().trim().min(1).max(200);
const body = z.string().max(10_000);
const id = z.object({ id: z.uuid() });

/**
 * The notes a caller may read: the public ones, their own, and every note for an admin. The same
 * rule as the `Note` resource's owner and admin, as SQL.
 */
function readableBy(user: SignedInUser | undefined): SQL | undefined {
  if (user?.role === 'admin') return undefined;
  const open = eq(notes.isPrivate, false);
  return user === undefined ? open : or(open, eq(notes.ownerId, user.id));
}

/** The one row a query found; a 404 when there is none (a note deleted meanwhile, too). */
function found<Row>([row]: Row[]): Row {
  if (row === undefined) throw new NotFoundError('No note with this id');
  return row;
}

/** A note the caller may read. Someone else's private note is a 404, never a 403 that would tell it exists. */
const findNote = async (ctx: AppContext, noteId: string) =>
  found(
    await ctx.db
      .select()
      .from(notes)
      .where(and(eq(notes.id, noteId), readableBy(ctx.user))),
  );

/**
 * Loads the note the input names, once, and lets only its owner or an admin on; the handler finds
 * it on `ctx.note`. A step after `.input()`: it needs the validated id.
 */
const ownerOrAdmin = step({
  name: 'owner or admin',
  documents: { problems: ['NOT_FOUND', 'FORBIDDEN'] },
  run: async ({ ctx, input, next }: { ctx: AppContext; input: { id: string }; next: MiddlewareNext }) => {
    const note = await findNote(ctx, input.id);
    // The resource says who owns a note: one rule for what a caller sees and what they may change.
    const level = Note.levelOf(note, ctx);
    if (level !== 'owner' && level !== 'admin')
      throw new ForbiddenError("Only the note's owner or an admin may change it");
    return next({ note });
  },
});

export const notesProcedures = procedures('notes', {
  // GET /api/notes?limit=20&cursor=…: newest first; follow nextCursor for older ones.
  listNotes: p()
    .input(cursorInput({ cursor: z.uuid() }))
    .output(cursorPage(Note.perRecord))
    .query(({ input, ctx }) =>
      paginateKeyset(
        input,
        (query) => {
          const keyset = keysetClauses({ lt, gt, asc, desc }, notes.id, query);
          return ctx.db
            .select()
            .from(notes)
            .where(and(readableBy(ctx.user), keyset.where))
            .orderBy(keyset.orderBy)
            .limit(keyset.limit);
        },
        { key: 'id' },
      ),
    ),

  // GET /api/notes/:id
  getNote: p()
    .input(id)
    .output(Note.perRecord)
    .query(({ input, ctx }) => findNote(ctx, input.id)),

  // POST /api/notes: 201, with Location: /api/notes/{id}
  createNote: p()
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
    .guard(authenticated)
    .input(z.object({ id: z.uuid(), data: z.object({ title, body, isPrivate: z.boolean() }).partial() }))
    .use(ownerOrAdmin)
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
    .guard(authenticated)
    .input(id)
    .use(ownerOrAdmin)
    .mutation(async ({ ctx }) => {
      await ctx.db.delete(notes).where(eq(notes.id, ctx.note.id));
    }),
});
