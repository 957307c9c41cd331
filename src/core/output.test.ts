import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileSerializer } from './output.js';

describe('compileSerializer', () => {
  it('compiles a schema once, whichever route asks, and each schema writes only its own fields', async () => {
    const publicView = z.object({ id: z.string(), title: z.string() });
    const fullView = publicView.extend({ secret: z.string() });
    const write = compileSerializer(publicView);
    expect(compileSerializer(publicView)).toBe(write);
    const record = { id: 'a', title: 'T', secret: 'never in the public view' };
    expect(await write(record)).toBe('{"id":"a","title":"T"}');
    expect(await compileSerializer(fullView)(record)).toBe(
      '{"id":"a","title":"T","secret":"never in the public view"}',
    );
  });

  describe('writes no field above a view, whatever holds it', () => {
    const view = z.strictObject({ id: z.string(), name: z.string() });
    const row = { id: 'u1', name: 'Ada', email: 'ada@example.com', passwordHash: 'SECRET' };
    const cases: [string, z.ZodType, unknown, string][] = [
      [
        'a tuple of views',
        z.object({ pair: z.tuple([view, view]) }),
        { pair: [row, row] },
        '{"pair":[{"id":"u1","name":"Ada"},{"id":"u1","name":"Ada"}]}',
      ],
      ['a tuple at the top', z.tuple([view, z.number()]), [row, 1], '[{"id":"u1","name":"Ada"},1]'],
      ['a nullable view', view.nullable(), row, '{"id":"u1","name":"Ada"}'],
      [
        'a nullable view in an object',
        z.object({ author: view.nullable() }),
        { author: row },
        '{"author":{"id":"u1","name":"Ada"}}',
      ],
      ['a list of nullable views', z.array(view.nullable()), [row, null], '[{"id":"u1","name":"Ada"},null]'],
      [
        'a union of views',
        z.union([view, z.strictObject({ id: z.string(), title: z.string() })]),
        row,
        '{"id":"u1","name":"Ada"}',
      ],
      [
        'a record whose keys are an enum',
        z.record(z.enum(['draft', 'published']), z.number()),
        { draft: 1, published: 2, internalBudget: 99 },
        '{"draft":1,"published":2}',
      ],
      [
        'a view through a transform',
        z.object({ author: view.transform((user) => ({ ...user, display: user.name.toUpperCase() })) }),
        { author: row },
        '{"author":{"id":"u1","name":"Ada","display":"ADA"}}',
      ],
    ];
    for (const [what, schema, value, written] of cases)
      it(what, async () => {
        expect(await compileSerializer(schema)(value)).toBe(written);
      });
  });

  it('refuses a value the writer would coerce, outside production: a wrong literal, enum value, boolean or integer', async () => {
    const status = z.object({
      state: z.literal('active'),
      kind: z.enum(['a', 'b']),
      on: z.boolean(),
      n: z.int(),
    });
    const fine = { state: 'active', kind: 'a', on: true, n: 2 };
    expect(await compileSerializer(status)({ ...fine, extra: 'cut' })).toBe(
      '{"state":"active","kind":"a","on":true,"n":2}',
    );
    for (const wrong of [{ state: 'banned' }, { kind: 'c' }, { on: 'false' }, { n: 1.9 }])
      await expect(async () => compileSerializer(status)({ ...fine, ...wrong })).rejects.toThrow(
        /Output does not match its schema/,
      );
    // Production writes without the check, as the writer writes (a schema compiled there).
    const mode = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      expect(await compileSerializer(z.object({ state: z.literal('active') }))({ state: 'banned' })).toBe(
        '{"state":"active"}',
      );
    } finally {
      if (mode === undefined) delete process.env.NODE_ENV;
      else process.env.NODE_ENV = mode;
    }
  });
});
