/** NUL in input is refused where the input is assembled (src/core/nul.ts), on both adapters. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApp } from '../server/create-app.js';
import { nulPathIn } from './nul.js';
import { procedure, procedures } from './procedure.js';

describe('nulPathIn', () => {
  it('takes a whole surrogate pair (an emoji) as the text it is', () => {
    expect(nulPathIn({ a: 'smile \ud83d\ude00', b: ['🙂', 'é'] })).toBeUndefined();
    expect(nulPathIn({ a: 'smile \ude00\ud83d' })).toBe('a');
  });

  it('names the first string holding NUL, at any depth, keys included, and nothing else', () => {
    expect(nulPathIn({ a: 'fine', b: { c: ['x', 'y\u0000z'] } })).toBe('b.c.1');
    expect(nulPathIn('a\u0000')).toBe('');
    expect(nulPathIn({ 'k\u0000': 1 })).toBe('k\u0000');
    expect(nulPathIn({ a: 'fine', n: 1, d: new Date(0), f: new Blob(['\u0000']) })).toBeUndefined();
  });

  it('walks a body nested deeper than the stack would allow recursion to', () => {
    let deep: unknown = 'end\u0000';
    for (let level = 0; level < 100_000; level++) deep = { d: deep };
    expect(nulPathIn(deep)?.split('.')).toHaveLength(100_000);
  });
});

describe('an input holding NUL', () => {
  const notes: string[] = [];
  const api = procedures('notes', {
    listNotes: procedure()
      .input(z.object({ tag: z.string().optional() }))
      .query(() => notes),
    getNote: procedure()
      .input(z.object({ id: z.string() }))
      .query(({ input }) => ({ id: input.id })),
    createNote: procedure()
      .input(z.object({ text: z.string(), meta: z.object({ tags: z.array(z.string()) }).optional() }))
      .mutation(({ input }) => {
        notes.push(input.text);
        return { id: String(notes.length) };
      }),
    // A loose schema: what it does not name reaches the handler as sent, NUL refused all the same.
    createLoose: procedure()
      .rest({ method: 'POST', path: '/notes/loose' })
      .input(z.looseObject({}))
      .mutation(() => {
        notes.push('loose');
        return null;
      }),
    createAttachment: procedure()
      .rest({ method: 'POST', path: '/notes/files' })
      .input(z.object({ caption: z.string(), file: z.file() }))
      .mutation(({ input }) => ({ caption: input.caption, size: input.file.size })),
  });
  const app = createApp({ logger: false }).mount([api]);
  const json = { 'content-type': 'application/json' };

  it.each([
    ['a query parameter', 'GET', '/api/notes?tag=a%00b', undefined, 'tag'],
    ['a path parameter', 'GET', '/api/notes/a%00b', undefined, 'id'],
    ['a body field', 'POST', '/api/notes', '{"text":"a\\u0000b"}', 'text'],
    [
      'an array item deep in the body',
      'POST',
      '/api/notes',
      '{"text":"t","meta":{"tags":["ok","x\\u0000"]}}',
      'meta.tags.1',
    ],
    [
      'a body its schema leaves loose',
      'POST',
      '/api/notes/loose',
      '{"any":{"thing":"\\u0000"}}',
      'any.thing',
    ],
    // A lone surrogate: half of a character, which a database would store as U+FFFD.
    ['a lone high surrogate in a body field', 'POST', '/api/notes', '{"text":"t\\ud800"}', 'text'],
    [
      'a lone low surrogate deep in the body',
      'POST',
      '/api/notes',
      '{"text":"t","meta":{"tags":["\\udfffx"]}}',
      'meta.tags.0',
    ],
    ['a lone surrogate in a key', 'POST', '/api/notes/loose', '{"k\\ud800":1}', 'k\ud800'],
  ])('is a 400 naming the field: %s', async (_what, method, url, body, path) => {
    const before = notes.length;
    for (const answer of [
      await app.inject({
        method: method as 'GET',
        url,
        headers: json,
        ...(body === undefined ? {} : { payload: body }),
      }),
    ]) {
      expect(answer.statusCode).toBe(400);
      expect(answer.json()).toMatchObject({
        code: 'VALIDATION_FAILED',
        errors: [{ path, message: body?.includes('\\u0000') === false ? /lone surrogate/ : /NUL|lone/ }],
      });
    }
    const fetched = await app.fetch(
      new Request(`http://api.example${url}`, {
        method,
        headers: json,
        ...(body === undefined ? {} : { body }),
      }),
      { ip: '127.0.0.1' },
    );
    expect(fetched.status).toBe(400);
    expect(((await fetched.json()) as { errors: { path: string }[] }).errors[0]?.path).toBe(path);
    expect(notes.length).toBe(before);
  });

  it('is refused in a form field too, while a file may hold any byte', async () => {
    const refused = new FormData();
    refused.append('caption', 'a\u0000b');
    refused.append('file', new Blob(['x']), 'x.bin');
    const answer = await app.fetch(
      new Request('http://api.example/api/notes/files', { method: 'POST', body: refused }),
    );
    expect(answer.status).toBe(400);
    const taken = new FormData();
    taken.append('caption', 'fine');
    taken.append('file', new Blob([new Uint8Array([0, 0, 0])]), 'zeros.bin');
    const created = await app.fetch(
      new Request('http://api.example/api/notes/files', { method: 'POST', body: taken }),
    );
    expect(await created.json()).toEqual({ caption: 'fine', size: 3 });
  });
});
