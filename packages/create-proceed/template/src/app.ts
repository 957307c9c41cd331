// src/app.ts
import { createApp, NotFoundError, procedure, procedures } from 'proceedjs';
import { resource } from 'proceedjs/resource';
import { z } from 'zod';

// 1. A resource: each field has a visibility level; each level is a view.
const Note = resource('Note', {
  public: { id: z.string(), title: z.string() },
  authenticated: { body: z.string() },
  admin: { createdAt: z.date() },
});

// 2. The app's context: whatever handlers need.
type Ctx = { notes: Map<string, { id: string; title: string; body: string; createdAt: Date }> };
const notes: Ctx['notes'] = new Map();
const p = procedure<Ctx>;

// 3. Procedures: the name decides method and path.
const noteProcedures = procedures('notes', {
  // GET /api/notes?limit=5 — "5" arrives as the number 5; "?limit=five" is a 400
  listNotes: p()
    .input(z.object({ limit: z.number().int().min(1).max(100).default(20) }))
    .output(z.object({ data: z.array(Note.public) }))
    .query(({ input, ctx }) => ({ data: [...ctx.notes.values()].slice(0, input.limit) })),

  // GET /api/notes/:id — only id and title leave the server
  getNote: p()
    .input(z.object({ id: z.string() }))
    .output(Note.public)
    .query(({ input, ctx }) => {
      const note = ctx.notes.get(input.id);
      if (note === undefined) throw new NotFoundError('No such note');
      return note;
    }),

  // POST /api/notes — 201 with Location: /api/notes/{id}
  createNote: p()
    .input(z.object({ title: z.string().min(1), body: z.string() }))
    .output(Note.authenticated)
    .mutation(({ input, ctx }) => {
      const note = { id: crypto.randomUUID(), ...input, createdAt: new Date() };
      ctx.notes.set(note.id, note);
      return note;
    }),

  // Any other name needs an explicit route: POST /api/notes/:id/archive
  archiveNote: p()
    .rest({ method: 'POST', path: '/notes/:id/archive' })
    .input(z.object({ id: z.string() }))
    .mutation(({ input }) => ({ archived: input.id })),
});

// 4. An app: one route per procedure, problem+json errors, health, shutdown.
export const api = [noteProcedures] as const; // a typed client is made from it: createClient<typeof api>
export default createApp<Ctx>({ context: () => ({ notes }) }).mount(api);
