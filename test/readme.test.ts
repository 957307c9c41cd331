/**
 * The README's tour must run as written. Its first TypeScript block is the app `npm create
 * proceed` writes (a test beside the scaffolder keeps the two identical), so that app is
 * imported and the requests the tour's comments promise are sent to it.
 */
import { describe, expect, it } from 'vitest';
import app from '../packages/create-proceed/template/src/app.js';

describe('the README tour', () => {
  it('runs as written', async () => {
    const created = await app.inject({
      method: 'POST',
      url: '/api/notes',
      payload: { title: 'Hi', body: 'There' },
    });
    expect(created.statusCode).toBe(201);
    const note = created.json() as { id: string };
    expect(created.headers.location).toBe(`/api/notes/${note.id}`);
    expect(Object.keys(note).sort()).toEqual(['body', 'id', 'title']);

    const fetched = await app.inject({ method: 'GET', url: `/api/notes/${note.id}` });
    expect(fetched.json()).toEqual({ id: note.id, title: 'Hi' });

    const listed = await app.inject({ method: 'GET', url: '/api/notes?limit=5' });
    expect(listed.json()).toEqual({ data: [{ id: note.id, title: 'Hi' }] });

    const refused = await app.inject({ method: 'GET', url: '/api/notes?limit=abc' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      detail: 'limit: Invalid input: expected number, received string',
      errors: [{ path: 'limit', message: 'Invalid input: expected number, received string' }],
    });

    const archived = await app.inject({ method: 'POST', url: `/api/notes/${note.id}/archive` });
    expect(archived.json()).toEqual({ archived: note.id });
    expect((await app.inject({ method: 'GET', url: '/api/notes/none' })).statusCode).toBe(404);
    await app.close();
  });
});
