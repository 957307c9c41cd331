/**
 * The README's tour must run as written: its first TypeScript block is executed as an app
 * module and the requests its comments promise are sent to it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { App } from '../src/index.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const tour = readme.match(/```ts\n([\s\S]*?)```/)?.[1];
const directory = mkdtempSync(join(fileURLToPath(new URL('.', import.meta.url)), '.readme-'));

afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('the README tour', () => {
  it('runs as written', async () => {
    expect(tour).toBeDefined();
    const file = join(directory, 'app.ts');
    writeFileSync(file, tour ?? '');
    const app = ((await import(pathToFileURL(file).href)) as { default: App }).default;

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
