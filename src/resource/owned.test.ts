import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { procedure, procedures } from '../core/procedure.js';
import { generateOpenApi } from '../openapi/generate.js';
import { createApp } from '../server/create-app.js';
import { owned, resource } from './index.js';

interface Ctx {
  user?: { id: string; role: 'user' | 'admin' };
  read: string[];
}
interface Row {
  id: string;
  ownerId: string;
  isPrivate: boolean;
  title: string;
}

const Note = resource(
  'Note',
  { public: { id: z.uuid(), title: z.string() }, owner: { isPrivate: z.boolean() } },
  { owner: 'ownerId', admin: (ctx: Ctx) => ctx.user?.role === 'admin' },
);

const ann = { id: '0193b8a0-0000-7000-8000-00000000000a', role: 'user' as const };
const bob = { id: '0193b8a0-0000-7000-8000-00000000000b', role: 'user' as const };
const root = { id: '0193b8a0-0000-7000-8000-00000000000c', role: 'admin' as const };
const open = { id: '0193b8a0-0000-7000-8000-000000000001', ownerId: ann.id, isPrivate: false, title: 'Open' };
const hidden = {
  id: '0193b8a0-0000-7000-8000-000000000002',
  ownerId: ann.id,
  isPrivate: true,
  title: 'Hidden',
};
const rows: Row[] = [open, hidden];

/** What a database query would do with `Note.scopeOf`: the rule lists filter with. */
function visible(ctx: Ctx): Row[] {
  const scope = Note.scopeOf(ctx);
  if (scope.kind === 'admin') return rows;
  return rows.filter(
    (row) => !row.isPrivate || (scope.kind === 'owner' && row[Note.ownerField ?? 'id'] === scope.userId),
  );
}

const ownNote = owned(Note, (ctx: Ctx, id) => visible(ctx).find((row) => row.id === id));

const users = { ann, bob, root } as const;
const app = createApp<Ctx>({
  logger: false,
  context: (request) => {
    const name = request.header('x-user') as keyof typeof users | undefined;
    return { read: [], ...(name === undefined ? {} : { user: users[name] }) };
  },
  userFromContext: true,
});
app.mount([
  procedures('notes', {
    updateNote: procedure<Ctx>()
      .use(ownNote)
      .input(z.object({ id: z.uuid(), data: z.object({ title: z.string().min(1) }) }))
      .mutation(({ ctx, input }) => ({ id: ctx.note.id, was: ctx.note.title, now: input.data.title })),
    uploadNoteFile: procedure<Ctx>()
      .rest({ method: 'POST', path: '/notes/:noteId/files' })
      .use(
        owned(Note, (_ctx: Ctx, id) => rows.find((row) => row.id === id), { param: 'noteId', as: 'target' }),
      )
      .mutation(({ ctx }) => ({ target: ctx.target.id })),
  }),
]);
afterAll(() => app.close());

const put = (id: string, user: keyof typeof users | undefined, payload: object = { title: 'New' }) =>
  app.inject({
    method: 'PUT',
    url: `/api/notes/${id}`,
    payload,
    headers: user === undefined ? {} : { 'x-user': user },
  });

describe('owned(): a record its owner and admins may change', () => {
  it('lets the owner and an admin on, with the record on the context', async () => {
    for (const user of ['ann', 'root'] as const) {
      const answer = await put(hidden.id, user);
      expect(answer.statusCode).toBe(200);
      expect(answer.json()).toEqual({ id: hidden.id, was: 'Hidden', now: 'New' });
    }
  });

  it('answers 403 to a caller who may see the record but does not own it, 404 to one who may not see it', async () => {
    const seen = await put(open.id, 'bob');
    expect(seen.statusCode).toBe(403);
    expect(seen.json()).toMatchObject({ code: 'FORBIDDEN', detail: 'Guard "owner or admin" denied access' });
    for (const user of ['bob', undefined] as const) {
      const unseen = await put(hidden.id, user);
      expect(unseen.statusCode).toBe(404);
      expect(unseen.json()).toMatchObject({ code: 'NOT_FOUND', detail: 'No note with this id' });
    }
    expect((await put(open.id, undefined)).statusCode).toBe(403);
  });

  it('checks the path parameter before anything is loaded, and before the body', async () => {
    const answer = await put('not-a-uuid', 'ann', { title: '' });
    expect(answer.statusCode).toBe(400);
    expect(answer.json().errors).toEqual([{ path: 'id', message: expect.stringMatching(/UUID/i) }]);
    // A stranger's write with a bad body is refused for who they are, not for the body.
    expect((await put(open.id, 'bob', { title: '' })).statusCode).toBe(403);
  });

  it('takes another parameter and context key', async () => {
    const answer = await app.inject({
      method: 'POST',
      url: `/api/notes/${open.id}/files`,
      headers: { 'x-user': 'ann' },
    });
    expect(answer.json()).toEqual({ target: open.id });
    const bad = await app.inject({ method: 'POST', url: '/api/notes/x/files', headers: { 'x-user': 'ann' } });
    expect(bad.json().errors).toEqual([{ path: 'noteId', message: expect.any(String) }]);
  });

  it('documents the problems it answers', () => {
    const document = generateOpenApi({ app, info: { title: 'Notes', version: '1' } });
    const responses = document.paths['/api/notes/{id}']?.put?.responses ?? {};
    expect(Object.keys(responses)).toEqual(expect.arrayContaining(['400', '403', '404']));
  });
});

describe('owned() on a path without its parameter', () => {
  it('is refused at start-up, naming the parameter and the option, rather than a 400 on every request', () => {
    const misplaced = procedures('tasks', {
      closeTask: procedure<Ctx>()
        .rest({ method: 'POST', path: '/tasks/:taskId/close' })
        .use(ownNote)
        .input(z.object({ taskId: z.string() }))
        .mutation(() => null),
    });
    expect(() => createApp({ logger: false }).mount([misplaced])).toThrow(
      'tasks.closeTask: a step reads the path parameter "id", which its path /api/tasks/:taskId/close does not have: every request would fail; give the path :id, or tell the step which parameter to read (owned()\'s param option)',
    );
  });
});

describe('owned() and an input that check the same parameter differently', () => {
  it('is refused at start-up: the UUID check would refuse every id the input takes', () => {
    const numbered = (step: ReturnType<typeof owned>) =>
      procedures('notes', {
        deleteNote: procedure<Ctx>()
          .use(step as never)
          .input(z.object({ id: z.string().regex(/^\d+$/) }))
          .mutation(() => undefined),
      });
    expect(() => createApp({ logger: false }).mount([numbered(ownNote as never)])).toThrow(
      /notes\.deleteNote: a step checks the path parameter "id" as string uuid, and the input as string \/\^\\d\+\$\/: one of the two would refuse every request/,
    );
    const byDigits = owned(Note, (_ctx: Ctx, id: string) => rows.find((row) => row.id === id), {
      id: z.string().regex(/^\d+$/),
    });
    expect(() => createApp({ logger: false }).mount([numbered(byDigits as never)])).not.toThrow();
  });
});

describe('owned() reading a path parameter the input does not name', () => {
  it('is no dropped parameter: the step reads it', async () => {
    const renaming = procedures('notes', {
      renameNote: procedure<Ctx>()
        .rest({ method: 'POST', path: '/notes/:id/rename' })
        .use(ownNote)
        .input(z.object({ title: z.string() }))
        .mutation(({ ctx, input }) => ({ id: ctx.note.id, title: input.title })),
    });
    expect(() => createApp({ logger: false }).mount([renaming])).not.toThrow();
  });
});

describe('Resource.scopeOf: the owner rule, for lists', () => {
  it('gives admins every record, a signed-in caller theirs, and anonymous callers none', () => {
    expect(Note.scopeOf({ user: root, read: [] })).toEqual({ kind: 'admin' });
    expect(Note.scopeOf({ user: bob, read: [] })).toEqual({ kind: 'owner', userId: bob.id });
    expect(Note.scopeOf({ read: [] })).toEqual({ kind: 'anonymous' });
    expect(Note.ownerField).toBe('ownerId');
  });

  it('agrees with levelOf on every record for every caller', () => {
    for (const user of [ann, bob, root, undefined]) {
      const ctx: Ctx = user === undefined ? { read: [] } : { user, read: [] };
      const scope = Note.scopeOf(ctx);
      for (const row of rows) {
        const ownsByScope =
          scope.kind === 'admin' || (scope.kind === 'owner' && row.ownerId === scope.userId);
        const level = Note.levelOf(row, ctx);
        expect(ownsByScope).toBe(level === 'owner' || level === 'admin');
      }
    }
  });

  it('refuses a view level of another name, and an unknown option', () => {
    expect(() =>
      resource('Post', { public: { id: z.string() }, admn: { secret: z.string() } } as never),
    ).toThrow(
      'Resource Post: "admn" is no view level (did you mean "admin"?): the levels are public, authenticated, owner, admin, each seeing the fields of those before it (docs/views.md)',
    );
    expect(() =>
      resource('Post', { public: { id: z.string() }, moderator: { note: z.string() } } as never),
    ).toThrow(/"moderator" is no view level: the levels are/);
    expect(() => resource('Post', { public: { id: z.string() } }, { ownr: 'ownerId' } as never)).toThrow(
      /unknown option "ownr"/,
    );
  });

  it('refuses an owner that is neither a field name nor a function', () => {
    expect(() => resource('Thing', { public: { id: z.string() } }, { owner: 42 as never })).toThrow(
      /owner must be a field name or a function/,
    );
  });
});
