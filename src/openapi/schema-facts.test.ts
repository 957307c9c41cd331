import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { procedure, procedures } from '../core/procedure.js';
import { generateOpenApi } from './generate.js';
import { integerFormat, strictBody, withImpliedFacts } from './schema-facts.js';
import type { JsonSchema, OpenApiDocument } from './types.js';

const info = { title: 'Facts', version: '1' };

function documentOf(...collections: Parameters<typeof procedures>[]): OpenApiDocument {
  return generateOpenApi({
    mounts: [{ prefix: '/api', collections: collections.map((args) => procedures(...args)) }],
    info,
  });
}

function bodyOf(doc: OpenApiDocument, path: string, method: 'post' | 'put'): JsonSchema {
  const schema = doc.paths[path]?.[method]?.requestBody?.content['application/json']?.schema;
  if (schema === undefined) throw new Error(`${method} ${path} has no JSON body`);
  return schema;
}

/** A validator that is not Zod and describes itself (Standard JSON Schema), as ArkType does. */
function described(json: JsonSchema): StandardSchemaV1 & StandardJSONSchemaV1 {
  return {
    '~standard': {
      version: 1,
      vendor: 'hand-written',
      validate: (value) => ({ value }),
      jsonSchema: { input: () => json, output: () => json },
    },
  };
}

describe('integer formats', () => {
  it('are int32 when the bounds fit in 32 bits, int64 otherwise, none beyond 64 bits', () => {
    expect(integerFormat({ type: 'integer', minimum: -(2 ** 31), maximum: 2 ** 31 - 1 })).toBe('int32');
    expect(integerFormat({ type: 'integer', minimum: 0, maximum: 2 ** 31 })).toBe('int64');
    expect(integerFormat({ type: 'integer', exclusiveMinimum: -1, exclusiveMaximum: 2 ** 31 })).toBe('int32');
    expect(
      integerFormat({ type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }),
    ).toBe('int64');
    expect(integerFormat({ type: 'integer', minimum: 0 })).toBe('int64');
    expect(integerFormat({ type: 'integer', minimum: 0, maximum: 2 ** 70 })).toBeUndefined();
  });

  it('are written on every integer of every input and output, of Zod and of any validator with JSON Schema', () => {
    const doc = documentOf([
      'counters',
      {
        createCounter: procedure()
          .input(
            z.object({
              small: z.int().min(0).max(100),
              safe: z.int(),
              wide: z.int32(),
              list: z.array(z.int().min(1).max(9)).max(3),
            }),
          )
          .output(z.object({ total: z.int().nonnegative(), ratio: z.number() }))
          .mutation(() => ({ total: 1, ratio: 0.5 })),
        listCounters: procedure()
          .input(
            described({ type: 'object', properties: { page: { type: 'integer', minimum: 1, maximum: 50 } } }),
          )
          .output(described({ type: 'object', properties: { count: { type: 'integer' } } }))
          .query(() => ({ count: 1 })),
      },
    ]);
    const body = bodyOf(doc, '/api/counters', 'post').properties as Record<string, JsonSchema>;
    expect(body.small).toMatchObject({ type: 'integer', format: 'int32' });
    expect(body.safe).toMatchObject({ type: 'integer', format: 'int64' });
    expect(body.wide).toMatchObject({ type: 'integer', format: 'int32' });
    expect(body.list?.items).toMatchObject({ type: 'integer', format: 'int32' });
    const created = doc.paths['/api/counters']?.post?.responses['201'];
    const output =
      created !== undefined && !('$ref' in created) ? created.content?.['application/json']?.schema : {};
    expect(output?.properties).toMatchObject({
      total: { type: 'integer', format: 'int64' },
      ratio: { type: 'number' },
    });
    expect((output?.properties as Record<string, JsonSchema> | undefined)?.ratio).not.toHaveProperty(
      'format',
    );
    const list = doc.paths['/api/counters']?.get;
    expect(list?.parameters?.find((each) => each.name === 'page')?.schema).toMatchObject({ format: 'int32' });
    const listed = list?.responses['200'];
    expect(
      listed !== undefined && !('$ref' in listed) && listed.content?.['application/json']?.schema,
    ).toEqual({
      type: 'object',
      properties: { count: { type: 'integer', format: 'int64' } },
      // An answer holds what its output names, whatever the validator (docs/procedures.md, "Validators").
      additionalProperties: false,
    });
  });

  it('keep a format the schema already has', () => {
    expect(withImpliedFacts({ type: 'integer', format: 'int32', maximum: 2 ** 40 })).toEqual({
      type: 'integer',
      format: 'int32',
      maximum: 2 ** 40,
    });
  });
});

describe('strings whose format fixes their length', () => {
  it('get maxLength: a UUID is 36 characters; other formats are left as they are', () => {
    expect(withImpliedFacts({ type: 'string', format: 'uuid' })).toEqual({
      type: 'string',
      format: 'uuid',
      maxLength: 36,
    });
    expect(withImpliedFacts({ type: 'string', format: 'date-time' })).toEqual({
      type: 'string',
      format: 'date-time',
    });
    expect(withImpliedFacts({ type: 'string', format: 'uuid', maxLength: 40 })).toMatchObject({
      maxLength: 40,
    });
  });

  it('reach components shared by a $defs block', () => {
    const Item = z.object({ id: z.uuid() }).meta({ id: 'Item' });
    const doc = documentOf([
      'items',
      {
        getItem: procedure()
          .output(Item)
          .query(() => ({ id: '' })),
      },
    ]);
    expect(doc.components.schemas.Item?.properties).toEqual({
      id: expect.objectContaining({ format: 'uuid', maxLength: 36 }),
    });
  });
});

describe('strict JSON bodies', () => {
  it('say additionalProperties: false on each object the server checks key by key', () => {
    const doc = documentOf([
      'notes',
      {
        createNote: procedure()
          .input(
            z.object({
              title: z.string(),
              meta: z.object({ source: z.string() }),
              tags: z.array(z.object({ name: z.string() })),
              extra: z.looseObject({ note: z.string() }),
              labels: z.record(z.string(), z.string()),
              more: z.object({ a: z.string() }).catchall(z.string()),
            }),
          )
          .mutation(() => ({})),
        updateNote: procedure()
          .input(z.object({ id: z.string(), data: z.object({ title: z.string() }) }))
          .mutation(() => ({})),
      },
    ]);
    const body = bodyOf(doc, '/api/notes', 'post');
    expect(body.additionalProperties).toBe(false);
    const properties = body.properties as Record<string, JsonSchema>;
    expect(properties.meta?.additionalProperties).toBe(false);
    expect((properties.tags?.items as JsonSchema | undefined)?.additionalProperties).toBe(false);
    // The opt-outs stay open, as the server keeps them (src/core/unknown-keys.ts).
    expect(properties.extra?.additionalProperties).toEqual({});
    expect(properties.labels?.additionalProperties).toEqual({ type: 'string' });
    expect(properties.more?.additionalProperties).toEqual({ type: 'string' });
    expect(bodyOf(doc, '/api/notes/{id}', 'put').additionalProperties).toBe(false);
  });

  it('leave query parameters, references and the parts of unions and intersections alone', () => {
    const doc = documentOf([
      'shapes',
      {
        createShape: procedure()
          .input(z.object({ either: z.union([z.object({ a: z.string() }), z.object({ b: z.string() })]) }))
          .mutation(() => ({})),
        // A shared component may be an output too: its references are not followed.
        updateShape: procedure()
          .input(
            described({
              type: 'object',
              properties: {
                id: { type: 'string' },
                shared: { $ref: '#/$defs/Shared' },
                both: {
                  allOf: [
                    { type: 'object', properties: { a: { type: 'string' } } },
                    { type: 'object', properties: { b: { type: 'string' } } },
                  ],
                },
              },
              $defs: { Shared: { type: 'object', properties: { name: { type: 'string' } } } },
            }),
          )
          .rest({ method: 'POST', path: '/shapes/shared' })
          .mutation(() => ({})),
        listShapes: procedure()
          .input(z.object({ q: z.string().optional() }))
          .query(() => []),
      },
    ]);
    const shared = bodyOf(doc, '/api/shapes/shared', 'post').properties as Record<string, JsonSchema>;
    expect(shared.shared).toEqual({ $ref: '#/components/schemas/Shared' });
    expect(doc.components.schemas.Shared).not.toHaveProperty('additionalProperties');
    const properties = bodyOf(doc, '/api/shapes', 'post').properties as Record<string, JsonSchema>;
    const parts = [properties.either?.anyOf, shared.both?.allOf].flat() as JsonSchema[];
    expect(parts).toHaveLength(4);
    for (const part of parts) expect(part).not.toHaveProperty('additionalProperties');
    // A query parameter is a parameter of its own: no object, no additionalProperties.
    expect(doc.paths['/api/shapes']?.get?.parameters).toEqual([
      { name: 'q', in: 'query', required: false, schema: { type: 'string' } },
    ]);
  });

  it('keep what a schema says of other keys already', () => {
    expect(
      strictBody({ type: 'object', properties: {}, patternProperties: { '^x-': {} } }),
    ).not.toHaveProperty('additionalProperties');
    expect(strictBody({ type: 'object', properties: { a: {} }, additionalProperties: true })).toMatchObject({
      additionalProperties: true,
    });
  });
});
