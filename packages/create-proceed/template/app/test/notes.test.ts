import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { users } from '../src/schema.js';
import { client } from './client.js';
import { engines, useApp } from './databases.js';

describe.each(engines)('notes on $name', (engine) => {
  if (engine.skip) {
    it.skip('needs TEST_DATABASE_URL', () => {});
    return;
  }
  const served = useApp(engine);
  const anonymous = () => client(served.origin);
  const signUp = async (name: string) => {
    const { accessToken, user } = await anonymous().auth.register({
      email: `${name}@example.com`,
      password: 'correct horse',
      name,
    });
    return { id: user.id, api: client(served.origin, accessToken) };
  };
  let ada: Awaited<ReturnType<typeof signUp>>;
  let bob: Awaited<ReturnType<typeof signUp>>;
  let admin: Awaited<ReturnType<typeof signUp>>;
  beforeAll(async () => {
    [ada, bob, admin] = [await signUp('ada'), await signUp('bob'), await signUp('admin')];
    // No route makes an admin: the database does (npm run seed makes one too).
    await served.database.db.update(users).set({ role: 'admin' }).where(eq(users.id, admin.id));
  });

  it('shows each note in the view its caller may see of it, per item in lists too', async () => {
    const adas = await ada.api.notes.createNote({ title: "Ada's", body: 'by Ada' });
    const bobs = await bob.api.notes.createNote({ title: "Bob's", body: 'by Bob' });
    // Its owner's view: what everyone sees, and whether it is private, and when it changed.
    expect(Object.keys(adas).sort()).toEqual(['body', 'id', 'isPrivate', 'title', 'updatedAt']);
    const seenByAll = { id: adas.id, title: "Ada's", body: 'by Ada' };
    expect(await anonymous().notes.getNote({ id: adas.id })).toEqual(seenByAll);
    expect(await bob.api.notes.getNote({ id: adas.id })).toEqual(seenByAll);
    expect(await ada.api.notes.getNote({ id: adas.id })).toEqual(adas);
    // An admin's view: every field.
    expect(await admin.api.notes.getNote({ id: adas.id })).toEqual({
      ...adas,
      ownerId: ada.id,
      createdAt: expect.any(String),
    });

    // One page, two views: Ada's own note in the owner's view, Bob's in everyone's.
    const listedBy = async (api: ReturnType<typeof anonymous>) => {
      const { data } = await api.notes.listNotes({ limit: 100 });
      return { ada: data.find((note) => note.id === adas.id), bob: data.find((note) => note.id === bobs.id) };
    };
    expect(await listedBy(ada.api)).toEqual({
      ada: adas,
      bob: { id: bobs.id, title: "Bob's", body: 'by Bob' },
    });
    expect(await listedBy(bob.api)).toEqual({ ada: seenByAll, bob: bobs });
    expect(await listedBy(anonymous())).toEqual({
      ada: seenByAll,
      bob: { id: bobs.id, title: "Bob's", body: 'by Bob' },
    });
    const byAdmin = await listedBy(admin.api);
    expect(byAdmin.ada).toMatchObject({ ...adas, ownerId: ada.id });
    expect(byAdmin.bob).toMatchObject({ ...bobs, ownerId: bob.id });
  });

  it('creates, reads, updates and deletes a note, its owner or an admin only', async () => {
    const note = await ada.api.notes.createNote({ title: 'Groceries', body: 'Milk' });
    expect(note).toMatchObject({ title: 'Groceries', body: 'Milk', isPrivate: false });
    expect(await anonymous().notes.getNote({ id: note.id })).toEqual({
      id: note.id,
      title: 'Groceries',
      body: 'Milk',
    });

    await expect(
      bob.api.notes.updateNote({ id: note.id, data: { title: 'Mine now' } }),
    ).rejects.toMatchObject({
      status: 403,
      code: 'FORBIDDEN',
    });
    await expect(anonymous().notes.updateNote({ id: note.id, data: { title: 'x' } })).rejects.toMatchObject({
      status: 401,
      code: 'UNAUTHENTICATED',
    });
    // Nothing to change is refused: it would only move updatedAt.
    await expect(ada.api.notes.updateNote({ id: note.id, data: {} })).rejects.toMatchObject({
      status: 400,
      code: 'VALIDATION_FAILED',
    });
    const renamed = await ada.api.notes.updateNote({ id: note.id, data: { title: 'Shopping' } });
    expect(renamed).toMatchObject({ id: note.id, title: 'Shopping', body: 'Milk' });
    const moderated = await admin.api.notes.updateNote({ id: note.id, data: { body: 'Milk, eggs' } });
    expect(moderated).toMatchObject({ title: 'Shopping', body: 'Milk, eggs' });

    await expect(bob.api.notes.deleteNote({ id: note.id })).rejects.toMatchObject({ status: 403 });
    expect(await ada.api.notes.deleteNote({ id: note.id })).toEqual({ success: true });
    await expect(anonymous().notes.getNote({ id: note.id })).rejects.toMatchObject({
      status: 404,
      code: 'NOT_FOUND',
    });
    await expect(ada.api.notes.deleteNote({ id: note.id })).rejects.toMatchObject({ status: 404 });
  });

  it('shows a private note to its owner and admins only, and hides it from everyone else', async () => {
    const diary = await ada.api.notes.createNote({ title: 'Diary', body: 'Dear diary', isPrivate: true });
    expect((await ada.api.notes.getNote({ id: diary.id })).title).toBe('Diary');
    expect((await admin.api.notes.getNote({ id: diary.id })).title).toBe('Diary');
    // Someone else's private note does not exist for them: 404, not 403.
    await expect(bob.api.notes.getNote({ id: diary.id })).rejects.toMatchObject({ status: 404 });
    await expect(anonymous().notes.getNote({ id: diary.id })).rejects.toMatchObject({ status: 404 });
    await expect(bob.api.notes.deleteNote({ id: diary.id })).rejects.toMatchObject({ status: 404 });

    const ids = async (api: ReturnType<typeof anonymous>) =>
      (await api.notes.listNotes({ limit: 100 })).data.map((note) => note.id);
    expect(await ids(ada.api)).toContain(diary.id);
    expect(await ids(admin.api)).toContain(diary.id);
    expect(await ids(bob.api)).not.toContain(diary.id);
    expect(await ids(anonymous())).not.toContain(diary.id);
  });

  it('lists newest first, a cursor page at a time', async () => {
    const made: string[] = [];
    for (const title of ['one', 'two', 'three', 'four', 'five'])
      made.unshift((await bob.api.notes.createNote({ title, body: `${title} body` })).id);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await bob.api.notes.listNotes({ limit: 2, ...(cursor === undefined ? {} : { cursor }) });
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((note) => note.id));
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    // Every note once, newest first; the five just made come first.
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.slice(0, 5)).toEqual(made);
  });

  it('answers 400 to text holding NUL, an unknown query key and a malformed number', async () => {
    await expect(ada.api.notes.createNote({ title: 'a\u0000b', body: 'x' })).rejects.toMatchObject({
      status: 400,
      code: 'VALIDATION_FAILED',
      errors: [expect.objectContaining({ path: 'title' })],
    });
    const query = async (search: string) => {
      const answer = await fetch(`${served.origin}/api/notes?${search}`);
      return { status: answer.status, problem: (await answer.json()) as { code: string; detail: string } };
    };
    expect(await query('cursor=a%00b')).toMatchObject({
      status: 400,
      problem: { code: 'VALIDATION_FAILED' },
    });
    const unknown = await query('limt=5');
    expect(unknown).toMatchObject({ status: 400, problem: { code: 'VALIDATION_FAILED' } });
    expect(unknown.problem.detail).toContain('limt');
    expect(await query('limit=abc')).toMatchObject({ status: 400 });
  });
  it('serves the notes as MCP tools: an agent reads a note as its caller would over REST', async () => {
    const mcp = async (method: string, params: object, token?: string) => {
      const answer = await fetch(`${served.origin}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      return (await answer.json()) as {
        result: { tools?: Array<{ name: string }>; structuredContent?: unknown };
      };
    };
    const note = await ada.api.notes.createNote({ title: 'For agents', body: 'read by a tool' });
    const { result } = await mcp('tools/list', {});
    expect(result.tools?.map((tool) => tool.name)).toContain('getNote');
    const called = await mcp('tools/call', { name: 'getNote', arguments: { id: note.id } });
    expect(called.result.structuredContent).toEqual(await anonymous().notes.getNote({ id: note.id }));
  });
});
