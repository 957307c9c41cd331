import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toJsonSchema } from '../core/schema.js';
import { exampleFor, hasOwnExample } from './examples.js';
import type { JsonSchema } from './types.js';

const uuidV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const example = (schema: JsonSchema, name = '', components: Record<string, JsonSchema> = {}) =>
  exampleFor(schema, components, name);

describe('exampleFor', () => {
  it('takes the schema’s own example first: examples, example, const, default, then the first enum value', () => {
    expect(example({ type: 'string', examples: ['mine', 'other'], default: 'd' })).toBe('mine');
    expect(example({ type: 'string', example: 'old-style' })).toBe('old-style');
    expect(example({ type: 'integer', const: 404 })).toBe(404);
    expect(example({ type: 'string', default: 'asc', enum: ['desc', 'asc'] })).toBe('asc');
    expect(example({ type: 'string', enum: ['draft', 'published'] })).toBe('draft');
    // Zod's .meta({ examples }) reaches the schema as `examples`.
    const role = toJsonSchema(z.enum(['admin', 'user']).meta({ examples: ['user'] }), { io: 'output' });
    expect(example(role)).toBe('user');
  });

  it('makes strings from the format: a UUIDv7, an email, a date-time; none for a format it does not know', () => {
    expect(example({ type: 'string', format: 'uuid' }, 'id')).toMatch(uuidV7);
    // Two keys in one record are two records.
    expect(example({ type: 'string', format: 'uuid' }, 'authorId')).not.toBe(
      example({ type: 'string', format: 'uuid' }, 'id'),
    );
    expect(example({ type: 'string', format: 'email' })).toBe('ada@example.com');
    expect(new Date(example({ type: 'string', format: 'date-time' }) as string).toISOString()).toBe(
      '2026-03-14T09:26:53.000Z',
    );
    expect(example({ type: 'string', format: 'x-custom' })).toBeUndefined();
  });

  it('makes strings from the field’s name, fitted to the length bounds', () => {
    expect(example({ type: 'string' }, 'title')).toBe('Notes on the Analytical Engine');
    expect(example({ type: 'string' }, 'contactEmail')).toBe('ada@example.com');
    expect(example({ type: 'string' }, 'authorId')).toMatch(uuidV7);
    expect(example({ type: 'string' }, 'valid')).toBe('text');
    expect(example({ type: 'string', maxLength: 5 }, 'title')).toBe('Notes');
    expect((example({ type: 'string', minLength: 40 }, 'title') as string).length).toBeGreaterThanOrEqual(40);
  });

  it('gives no example rather than one the pattern refuses', () => {
    expect(example({ type: 'string', pattern: '^[a-z-]+$' }, 'slug')).toBe('analytical-engine');
    expect(example({ type: 'string', pattern: '^\\d{4}$' }, 'title')).toBeUndefined();
    expect(example({ type: 'string', pattern: '(' }, 'title')).toBeUndefined();
  });

  it('keeps numbers inside their bounds and multiples', () => {
    expect(example({ type: 'integer' })).toBe(1);
    expect(example({ type: 'integer', minimum: 10, maximum: 20 })).toBe(10);
    expect(example({ type: 'integer', exclusiveMinimum: 1 })).toBe(2);
    expect(example({ type: 'number', maximum: 0 })).toBe(0);
    expect(example({ type: 'integer', minimum: 1, multipleOf: 5 })).toBe(5);
    expect(example({ type: 'integer' }, 'expiresIn')).toBe(900);
    expect(example({ type: 'integer', minimum: 3, maximum: 2 })).toBeUndefined();
  });

  it('builds objects with every property, and none when a required one cannot be made', () => {
    const post: JsonSchema = {
      type: 'object',
      properties: {
        id: { type: 'string', format: 'uuid' },
        title: { type: 'string', minLength: 1 },
        tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } },
        publishedAt: { anyOf: [{ type: 'null' }, { type: 'string', format: 'date-time' }] },
      },
      required: ['id', 'title'],
    };
    expect(example(post)).toEqual({
      id: expect.stringMatching(uuidV7),
      title: 'Notes on the Analytical Engine',
      tags: ['a'],
      // A nullable field shows what it holds when set.
      publishedAt: '2026-03-14T09:26:53.000Z',
    });
    const impossible = {
      ...post,
      properties: {
        ...(post.properties as Record<string, JsonSchema>),
        code: { type: 'string', format: 'x' },
      },
    };
    expect(example({ ...impossible, required: ['code'] })).toBeUndefined();
    // Optional and unmakeable: left out.
    expect(example(impossible)).not.toHaveProperty('code');
    expect(exampleFor(post, {}, '', new Set(['id']))).not.toHaveProperty('id');
    expect(example({ type: 'object', properties: {}, minProperties: 1 })).toBeUndefined();
  });

  it('resolves component references, merges allOf and shows a one-item page with no neighbours', () => {
    const components: Record<string, JsonSchema> = {
      Post: { type: 'object', properties: { id: { type: 'string', format: 'uuid' } }, required: ['id'] },
    };
    const page: JsonSchema = {
      type: 'object',
      properties: {
        data: { type: 'array', items: { $ref: '#/components/schemas/Post' } },
        nextCursor: { type: ['string', 'null'] },
        prevCursor: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      },
    };
    expect(example(page, '', components)).toEqual({
      data: [{ id: expect.stringMatching(uuidV7) }],
      nextCursor: null,
      prevCursor: null,
    });
    expect(example({ $ref: '#/components/schemas/Missing' }, '', components)).toBeUndefined();
    expect(
      example({
        allOf: [
          { type: 'object', properties: { a: { type: 'integer' } } },
          { type: 'object', properties: { b: { type: 'boolean' } } },
        ],
      }),
    ).toEqual({ a: 1, b: true });
  });

  it('stops on a schema that refers to itself', () => {
    const components: Record<string, JsonSchema> = {
      Node: {
        type: 'object',
        properties: { child: { $ref: '#/components/schemas/Node' } },
        required: ['child'],
      },
    };
    expect(example({ $ref: '#/components/schemas/Node' }, '', components)).toBeUndefined();
  });

  it('gives nothing for an empty schema, which accepts anything', () => {
    expect(example({})).toBeUndefined();
  });
});

describe('hasOwnExample', () => {
  it('tells an author’s example or default from one that would be made up', () => {
    expect(hasOwnExample({ type: 'integer', default: 20 })).toBe(true);
    expect(hasOwnExample({ type: 'string', examples: ['x'] })).toBe(true);
    expect(hasOwnExample({ type: 'string', examples: [] })).toBe(false);
    expect(hasOwnExample({ type: 'boolean' })).toBe(false);
  });
});
