import { describe, expect, it } from 'vitest';
import app from './app.js';

// app.inject sends a request through the whole app without opening a socket.
describe('notes', () => {
  it('creates a note, then shows the public view of it', async () => {
    const created = await app.inject({
      method: 'POST',
      url: '/api/notes',
      payload: { title: 'First note', body: 'Written in a test.' },
    });
    expect(created.statusCode).toBe(201);
    const { id } = created.json() as { id: string };
    expect(created.headers.location).toBe(`/api/notes/${id}`);

    const fetched = await app.inject({ method: 'GET', url: `/api/notes/${id}` });
    expect(fetched.json()).toEqual({ id, title: 'First note' });
  });

  it('refuses a body key the input does not name, naming the one meant, and creates nothing', async () => {
    const before = (await app.inject({ method: 'GET', url: '/api/notes' })).json() as { data: unknown[] };
    const refused = await app.inject({
      method: 'POST',
      url: '/api/notes',
      payload: { title: 'Typo', bdy: 'A misspelt key is an error, not a silent drop.' },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [{ path: 'bdy', message: 'Unknown key; did you mean "body"?' }],
    });
    const after = (await app.inject({ method: 'GET', url: '/api/notes' })).json() as { data: unknown[] };
    expect(after.data).toHaveLength(before.data.length);
  });

  it('answers a bad query with a 400 problem', async () => {
    const refused = await app.inject({ method: 'GET', url: '/api/notes?limit=abc' });
    expect(refused.statusCode).toBe(400);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
  });
});
