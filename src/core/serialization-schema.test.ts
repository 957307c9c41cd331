import { createRequire } from 'node:module';
import fc from 'fast-check';
import fastJson from 'fast-json-stringify';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cursorPage } from '../pagination/index.js';
import { resource } from '../resource/index.js';
import { type JsonSchema, toJsonSchema } from './schema.js';
import { serializationSchema } from './serialization-schema.js';

type Schema = Parameters<typeof fastJson>[0];
/** fast-json-stringify's own test of whether a schema takes the projection (an internal module). */
const { isProjectable } = createRequire(import.meta.url)('fast-json-stringify/lib/projection.js') as {
  isProjectable: (schema: unknown) => boolean;
};

const Post = resource('Post', {
  public: { id: z.uuid(), title: z.string().min(1).max(200), excerpt: z.string() },
  authenticated: { status: z.enum(['draft', 'published']), views: z.number().int().min(0), at: z.date() },
});
const outputOf = (schema: z.ZodType) => toJsonSchema(schema, { io: 'output' });

/** The default writer, and the projection forced where this V8 would not take it (Node before 25). */
const writers = (json: JsonSchema) => ({
  plain: fastJson(json as unknown as Schema),
  projected: fastJson(
    serializationSchema(json) as unknown as Schema,
    {
      objectMechanism: 'native',
      forceProjection: true,
    } as Parameters<typeof fastJson>[1],
  ),
});

describe('serializationSchema', () => {
  it('lets a view and a cursor page of it take the projection, which they could not as described', () => {
    for (const schema of [Post.public, Post.authenticated, cursorPage(Post.public)]) {
      const json = outputOf(schema);
      expect(isProjectable(json)).toBe(false);
      expect(isProjectable(serializationSchema(json))).toBe(true);
    }
  });

  it('writes what the schema as described writes, byte for byte, whatever the record holds', () => {
    const { plain, projected } = writers(outputOf(cursorPage(Post.authenticated)));
    const text = fc.string({ unit: 'binary' });
    const record = fc.record({
      id: text,
      title: text,
      excerpt: text,
      status: fc.constantFrom('draft', 'published'),
      views: fc.integer(),
      at: fc.date({ noInvalidDate: true }),
      passwordHash: text,
    });
    fc.assert(
      fc.property(
        fc.array(record, { maxLength: 5 }),
        fc.option(text),
        fc.option(text),
        (data, nextCursor, prevCursor) => {
          const page = { data, nextCursor, prevCursor };
          const written = projected(page);
          expect(written).toBe(plain(page));
          expect(written).not.toContain('passwordHash');
        },
      ),
    );
  });

  it('leaves a schema that chooses between alternatives whole: a tag decides what is written', () => {
    const tagged = outputOf(
      z.discriminatedUnion('kind', [
        z.object({ kind: z.literal('a'), a: z.string() }),
        z.object({ kind: z.literal('b'), b: z.string().min(1) }),
      ]),
    );
    // Whole but for `additionalProperties: false`, so that a row with more keys still matches its
    // alternative (the writer writes declared keys only either way).
    expect(serializationSchema(tagged)).toEqual({
      oneOf: (tagged.oneOf as Record<string, unknown>[]).map(({ additionalProperties: _, ...rest }) => rest),
    });
    const { plain, projected } = writers(tagged);
    expect(projected({ kind: 'b', b: 'x' })).toBe(plain({ kind: 'b', b: 'x' }));
    expect(projected({ kind: 'b', b: 'x' })).toBe('{"kind":"b","b":"x"}');
  });

  it('keeps what changes the writing: a date format, a required key, an optional one', () => {
    const json = outputOf(z.object({ at: z.date(), note: z.string().max(3).optional() }));
    const { plain, projected } = writers(json);
    const value = { at: new Date(Date.UTC(2026, 0, 2)) };
    expect(projected(value)).toBe('{"at":"2026-01-02T00:00:00.000Z"}');
    expect(projected({ ...value, note: 'longer' })).toBe(plain({ ...value, note: 'longer' }));
    expect(() => projected({ note: 'x' })).toThrow(/"at" is required/);
  });
});
