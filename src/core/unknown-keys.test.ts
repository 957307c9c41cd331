/** The keys an input names, read from its JSON Schema, and the keys a value holds beyond them. */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { JsonSchema } from './schema.js';
import { checksNothing, keyShapeOf, refuseUnknownKeys, shapeAt, unknownKeysIn } from './unknown-keys.js';

const unknownIn = (schema: StandardSchemaV1, value: unknown, exempt?: readonly string[]) =>
  unknownKeysIn(value, keyShapeOf(schema), { noun: 'key', ...(exempt === undefined ? {} : { exempt }) });

/** A validator that describes itself only through Standard JSON Schema, as ArkType does. */
function described(input: JsonSchema): StandardSchemaV1 & StandardJSONSchemaV1 {
  return {
    '~standard': {
      version: 1,
      vendor: 'hand-written',
      validate: (value) => ({ value }),
      jsonSchema: { input: () => input, output: () => input },
    },
  } as StandardSchemaV1 & StandardJSONSchemaV1;
}

describe('unknownKeysIn', () => {
  it('names a top-level key the input does not, with the key meant when one is close', () => {
    const input = z.object({ url: z.url(), title: z.string(), isPrivate: z.boolean().optional() });
    expect(unknownIn(input, { url: 'https://a.example', titel: 'x', is_private: true, zzz: 1 })).toEqual([
      { path: 'titel', message: 'Unknown key; did you mean "title"?' },
      { path: 'is_private', message: 'Unknown key; did you mean "isPrivate"?' },
      { path: 'zzz', message: 'Unknown key' },
    ]);
    expect(unknownIn(input, { url: 'https://a.example', title: 'x', isPrivate: true })).toBeUndefined();
  });

  it('answers a flood of keys, or a huge one, with 20 errors at most and no costly suggestion', () => {
    const input = z.object({ title: z.string(), content: z.string() });
    const flood = Object.fromEntries(Array.from({ length: 100_000 }, (_, index) => [`k${index}`, 1]));
    expect(unknownIn(input, flood)).toHaveLength(20);
    // A megabyte long: compared with no name (each comparison would cost its length times theirs).
    const huge = unknownIn(input, { [`title${'x'.repeat(1_000_000)}`]: 1 }) ?? [];
    expect(huge.map((error) => error.message)).toEqual(['Unknown key']);
  });

  it('looks into nested objects and arrays of objects, optional, nullable or defaulted', () => {
    const input = z.object({
      customer: z.object({ address: z.object({ street: z.string(), city: z.string() }) }),
      lines: z.array(z.object({ sku: z.string(), quantity: z.number() })).default([]),
      gift: z.object({ message: z.string() }).nullable().optional(),
      matrix: z.array(z.array(z.object({ cell: z.number() }))),
    });
    expect(
      unknownIn(input, {
        customer: { address: { stret: 'Main St', city: 'Oslo' } },
        lines: [
          { sku: 'a', quantity: 1 },
          { sku: 'b', qty: 2 },
        ],
        gift: { mesage: 'hi' },
        matrix: [[{ cell: 1 }, { cel: 2 }]],
      }),
    ).toEqual([
      { path: 'gift.mesage', message: 'Unknown key; did you mean "message"?' },
      { path: 'customer.address.stret', message: 'Unknown key; did you mean "street"?' },
      { path: 'lines.1.qty', message: 'Unknown key' },
      { path: 'matrix.0.1.cel', message: 'Unknown key; did you mean "cell"?' },
    ]);
    expect(
      unknownIn(input, { customer: { address: { street: 's', city: 'c' } }, gift: null }),
    ).toBeUndefined();
  });

  it('welcomes any key where the input does: loose objects, catchall, records; not strict ones', () => {
    const welcoming = [
      z.looseObject({ a: z.string() }),
      z.object({ a: z.string() }).passthrough(),
      z.object({ a: z.string() }).catchall(z.number()),
      z.record(z.string(), z.unknown()),
    ];
    for (const input of welcoming) expect(unknownIn(input, { a: 'x', other: 1 })).toBeUndefined();
    expect(unknownIn(z.strictObject({ name: z.string() }), { name: 'x', extra: 1 })).toEqual([
      { path: 'extra', message: 'Unknown key' },
    ]);
    expect(unknownIn(z.object({ a: z.string() }).catchall(z.never()), { a: 'x', extra: 1 })).toHaveLength(1);
  });

  it('still looks inside the values a welcoming object takes, and the keys it names', () => {
    const input = z.looseObject({
      known: z.object({ size: z.number() }),
      byName: z.record(z.string(), z.object({ size: z.number() })),
    });
    expect(
      unknownIn(input, {
        extra: { y: 1 },
        known: { size: 1, colour: 2 },
        byName: { a: { size: 1, sise: 3 } },
      }),
    ).toEqual([
      { path: 'known.colour', message: 'Unknown key' },
      { path: 'byName.a.sise', message: 'Unknown key; did you mean "size"?' },
    ]);
  });

  it('checks nothing under a value of any shape (unknown, any, JSON) or an input without JSON Schema', () => {
    const input = z.object({ meta: z.unknown(), raw: z.any(), doc: z.json() });
    expect(
      unknownIn(input, { meta: { a: 1 }, raw: { b: [{ c: 1 }] }, doc: { d: { e: 1 } } }),
    ).toBeUndefined();
    const withoutJsonSchema: StandardSchemaV1 = {
      '~standard': { version: 1, vendor: 'hand-written', validate: (value) => ({ value }) },
    };
    expect(checksNothing(keyShapeOf(withoutJsonSchema))).toBe(true);
    expect(checksNothing(keyShapeOf(undefined))).toBe(true);
    expect(checksNothing(keyShapeOf(z.any()))).toBe(true);
  });

  it('picks the alternative of a discriminated union by its discriminator, and checks its keys only', () => {
    const input = z.object({
      payment: z.discriminatedUnion('method', [
        z.object({ method: z.literal('card'), number: z.string() }),
        z.object({ method: z.enum(['iban', 'sepa']), iban: z.string() }),
      ]),
    });
    expect(unknownIn(input, { payment: { method: 'card', number: '4242', iban: 'x' } })).toEqual([
      { path: 'payment.iban', message: 'Unknown key' },
    ]);
    expect(unknownIn(input, { payment: { method: 'sepa', iban: 'DE00', numbr: '1' } })).toEqual([
      { path: 'payment.numbr', message: 'Unknown key' },
    ]);
    expect(unknownIn(input, { payment: { method: 'card', numbr: '4242' } })).toEqual([
      { path: 'payment.numbr', message: 'Unknown key; did you mean "number"?' },
    ]);
    // A discriminator no alternative has is the validator's to refuse, with its own message.
    expect(unknownIn(input, { payment: { method: 'cash', anything: 1 } })).toBeUndefined();
  });

  it('counts a key of a plain union as known when any alternative names it', () => {
    const input = z.object({
      target: z.union([z.object({ userId: z.string() }), z.object({ email: z.email(), name: z.string() })]),
      either: z.union([z.string(), z.object({ value: z.string() })]),
    });
    expect(unknownIn(input, { target: { userId: 'u', email: 'e@x.example' }, either: 'x' })).toBeUndefined();
    expect(unknownIn(input, { target: { emial: 'e@x.example' }, either: { valeu: 'x' } })).toEqual([
      { path: 'target.emial', message: 'Unknown key; did you mean "email"?' },
      { path: 'either.valeu', message: 'Unknown key; did you mean "value"?' },
    ]);
    // One loose alternative welcomes any key.
    const loose = z.union([z.object({ a: z.string() }), z.looseObject({ b: z.string() })]);
    expect(unknownIn(loose, { c: 1 })).toBeUndefined();
  });

  it('follows recursive schemas to any depth', () => {
    const Node: z.ZodType = z.object({
      name: z.string(),
      get children() {
        return z.array(Node).optional();
      },
    });
    const deep = { name: 'a', children: [{ name: 'b', children: [{ name: 'c', chidren: [] }] }] };
    expect(unknownIn(z.object({ tree: Node }), { tree: deep })).toEqual([
      { path: 'tree.children.0.children.0.chidren', message: 'Unknown key; did you mean "children"?' },
    ]);
    let nested: unknown = { name: 'leaf', colour: 'red' };
    for (let depth = 0; depth < 20_000; depth++) nested = { name: 'n', children: [nested] };
    expect(unknownIn(Node, nested)?.[0]?.message).toBe('Unknown key');
  });

  it('reads any validator’s JSON Schema: absent or false additionalProperties refuse, a schema welcomes', () => {
    const strict = described({
      type: 'object',
      properties: {
        name: { type: 'string' },
        b: { type: 'array', items: { type: 'object', properties: {} } },
      },
    });
    expect(unknownIn(strict, { name: 'x', nmae: 1, b: [{ d: 1 }] })).toEqual([
      { path: 'nmae', message: 'Unknown key; did you mean "name"?' },
      { path: 'b.0.d', message: 'Unknown key' },
    ]);
    const open = described({
      type: 'object',
      properties: { a: {} },
      additionalProperties: { type: 'number' },
    });
    expect(unknownIn(open, { a: 'x', c: 1 })).toBeUndefined();
    const patterned = described({ type: 'object', patternProperties: { '^x-': {} } });
    expect(unknownIn(patterned, { 'x-a': 1 })).toBeUndefined();
    // An object that names no key at all is any object; one that names none of its own is empty.
    const anyObject = described({ type: 'object', properties: { meta: { type: 'object' } } });
    expect(unknownIn(anyObject, { meta: { a: 1 } })).toBeUndefined();
    expect(unknownIn(z.object({ meta: z.object({}) }), { meta: { a: 1 } })).toEqual([
      { path: 'meta.a', message: 'Unknown key' },
    ]);
    const parts = described({
      allOf: [
        { type: 'object', properties: { a: { type: 'string' } } },
        { type: 'object', properties: { b: { type: 'string' } } },
      ],
    });
    expect(unknownIn(parts, { a: 'x', b: 'y', extra: 'z' })).toEqual([
      { path: 'extra', message: 'Unknown key' },
    ]);
    const tuple = described({ type: 'array', prefixItems: [{ type: 'object', properties: { a: {} } }] });
    expect(unknownIn(tuple, [{ a: 1, extra: 2 }])).toEqual([{ path: '0.extra', message: 'Unknown key' }]);
  });

  it('leaves exempt top-level keys (path parameters) alone, and writes paths under a given one', () => {
    const input = z.object({ id: z.string(), data: z.object({ title: z.string() }) });
    expect(unknownIn(z.object({ title: z.string() }), { id: '1', title: 'x' }, ['id'])).toBeUndefined();
    const data = shapeAt(keyShapeOf(input), 'data');
    expect(unknownKeysIn({ titl: 'x', id: '1' }, data, { noun: 'key', path: 'data' })).toEqual([
      { path: 'data.titl', message: 'Unknown key; did you mean "title"?' },
      { path: 'data.id', message: 'Unknown key' },
    ]);
    // An update input without `data` takes no body keys.
    expect(
      unknownKeysIn({ a: 1 }, shapeAt(keyShapeOf(z.object({ id: z.string() })), 'data'), { noun: 'key' }),
    ).toEqual([{ path: 'a', message: 'Unknown key' }]);
  });

  it('skips keys whose value is undefined: they were never sent', () => {
    expect(unknownIn(z.object({ a: z.string() }), { a: 'x', data: undefined })).toBeUndefined();
  });

  it('throws a 400 VALIDATION_FAILED naming the first key in detail', () => {
    expect(() =>
      refuseUnknownKeys({ tags: 'a' }, keyShapeOf(z.object({ tag: z.string() })), {
        noun: 'query parameter',
      }),
    ).toThrow(
      expect.objectContaining({
        code: 'VALIDATION_FAILED',
        status: 400,
        message: 'tags: Unknown query parameter; did you mean "tag"?',
        errors: [{ path: 'tags', message: 'Unknown query parameter; did you mean "tag"?' }],
      }),
    );
  });
});
