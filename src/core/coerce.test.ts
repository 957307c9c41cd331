import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createBodyDateCoercer, createCoercer } from './coerce.js';

const schema = z.object({
  limit: z.number().int().optional(),
  ratio: z.number().optional(),
  flag: z.boolean().optional(),
  since: z.date().optional(),
  days: z.array(z.date()).optional(),
  tags: z.array(z.enum(['a', 'b'])).optional(),
  counts: z.array(z.number()).optional(),
  name: z.string().optional(),
  stamp: z.iso.datetime().optional(),
  maybe: z.number().nullable().optional(),
});
const coerce = createCoercer(schema);

describe('createCoercer', () => {
  it('converts numbers, booleans and ISO dates', () => {
    expect(coerce({ limit: '10', ratio: '-1.5e2', flag: 'true' })).toEqual({
      limit: 10,
      ratio: -150,
      flag: true,
    });
    expect(coerce({ flag: '0' })).toEqual({ flag: false });
    expect(coerce({ flag: '1' })).toEqual({ flag: true });
    expect(coerce({ since: '2024-05-01' }).since).toEqual(new Date('2024-05-01'));
    expect(coerce({ since: '2024-05-01T10:00:00+02:00' }).since).toEqual(new Date('2024-05-01T08:00:00Z'));
    // No offset: UTC, whatever the server's time zone (in Tokyo 10:00 was read as 01:00Z).
    const zone = process.env.TZ;
    process.env.TZ = 'Asia/Tokyo';
    try {
      for (const local of ['2024-05-01T10:00:00', '2024-05-01 10:00', '2024-05-01t10:00:00.250'])
        expect((coerce({ since: local }).since as Date).toISOString()).toBe(
          local.endsWith('.250') ? '2024-05-01T10:00:00.250Z' : '2024-05-01T10:00:00.000Z',
        );
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
    expect(coerce({ maybe: '3' })).toEqual({ maybe: 3 });
  });

  it('leaves what it cannot convert, for the validator to refuse', () => {
    expect(coerce({ flag: 'yes', limit: 'ten', ratio: '', since: 'yesterday' })).toEqual({
      flag: 'yes',
      limit: 'ten',
      ratio: '',
      since: 'yesterday',
    });
    expect(coerce({ since: '2024-13-45' }).since).toBe('2024-13-45');
    // Dates that do not exist stay strings (Date would roll them over to the next month).
    for (const impossible of [
      '2020-02-30',
      '2021-02-29',
      '2024-04-31',
      '2024-00-10',
      '2024-05-01T24:00',
      '2024-05-01T10:60',
    ]) {
      expect(coerce({ since: impossible }).since, impossible).toBe(impossible);
    }
    expect(coerce({ since: '2024-02-29' }).since).toEqual(new Date('2024-02-29'));
    expect(coerce({ since: '2024-12-31T23:59:59.999+14:00' }).since).toBeInstanceOf(Date);
    expect(schema.safeParse(coerce({ flag: 'yes' })).success).toBe(false);
  });

  it('turns single and repeated keys into arrays where the schema wants one', () => {
    expect(coerce({ tags: 'a' })).toEqual({ tags: ['a'] });
    expect(coerce({ tags: ['a', 'b'], counts: ['1', '2'] })).toEqual({ tags: ['a', 'b'], counts: [1, 2] });
    expect(coerce({ days: ['2024-01-01'] }).days).toEqual([new Date('2024-01-01')]);
  });

  it('keeps strings, date-time strings and repeated scalar keys as they are', () => {
    expect(coerce({ name: '42', stamp: '2024-01-01T00:00:00Z' })).toEqual({
      name: '42',
      stamp: '2024-01-01T00:00:00Z',
    });
    expect(coerce({ limit: ['1', '2'] })).toEqual({ limit: ['1', '2'] });
    expect(schema.safeParse(coerce({ limit: ['1', '2'] })).success).toBe(false);
  });

  it('reads unions of numbers, booleans and their literals, and nullable arrays', () => {
    const unions = z.object({
      size: z.union([z.literal(10), z.literal(20)]).optional(),
      limit: z.union([z.number().int(), z.literal('all')]).optional(),
      mixed: z.union([z.literal(1), z.literal('x')]).optional(),
      either: z.number().or(z.boolean()).optional(),
      only: z.literal(true).optional(),
      ids: z.array(z.number().int()).nullable().optional(),
      sizes: z.array(z.union([z.literal(1), z.literal(2)])).optional(),
      text: z.union([z.string(), z.number()]).optional(),
    });
    const read = createCoercer(unions);
    const sent = {
      size: '20',
      limit: '5',
      mixed: '1',
      either: '1',
      only: 'true',
      ids: ['1', '2'],
      sizes: '2',
      text: '007',
    };
    const coerced = read({ ...sent });
    expect(coerced).toEqual({
      size: 20,
      limit: 5,
      mixed: 1,
      either: 1,
      only: true,
      ids: [1, 2],
      sizes: [2],
      text: '007',
    });
    expect(unions.safeParse(coerced).success).toBe(true);
    // A literal string beside a number is matched as sent; `true` of number-or-boolean is the boolean.
    expect(read({ limit: 'all', mixed: 'x', either: 'true' })).toEqual({
      limit: 'all',
      mixed: 'x',
      either: true,
    });
    // What none of the options takes stays as sent, for the validator to refuse.
    const refused = read({ size: '30', either: 'yes', ids: ['one'] });
    expect(refused).toEqual({ size: 30, either: 'yes', ids: ['one'] });
    expect(unions.safeParse(refused).error?.issues.map((issue) => issue.path.join('.'))).toEqual([
      'size',
      'either',
      'ids.0',
    ]);
  });

  it('reads a union of objects by the fields its options agree on: a discriminated union in a query', () => {
    const coerce = createCoercer(
      z.discriminatedUnion('kind', [
        z.object({ kind: z.literal('count'), n: z.number(), tags: z.array(z.string()) }),
        z.object({ kind: z.literal('flag'), on: z.boolean(), tags: z.array(z.string()) }),
        z.object({ kind: z.literal('text'), n: z.string() }),
      ]),
    );
    // `n` is a number in one option and text in another: left as sent, for its option to read.
    expect(coerce({ kind: 'flag', on: 'true', tags: 'a', n: '5' })).toEqual({
      kind: 'flag',
      on: true,
      tags: ['a'],
      n: '5',
    });
    const union = createCoercer(z.union([z.object({ a: z.number() }), z.object({ b: z.boolean() })]));
    expect(union({ a: '1' })).toEqual({ a: 1 });
    expect(union({ b: 'false' })).toEqual({ b: false });
    // An option that takes any key (loose, a catchall, a record) takes the field as text.
    for (const open of [
      z.looseObject({ kind: z.literal('b') }),
      z.object({ kind: z.literal('b') }).catchall(z.string()),
      z.record(z.string(), z.string()),
    ]) {
      const coerce = createCoercer(z.union([z.object({ kind: z.literal('a'), code: z.number() }), open]));
      expect(coerce({ kind: 'b', code: '007' })).toEqual({ kind: 'b', code: '007' });
    }
  });

  it('coerces a discriminated union by the option its discriminator names, an open option among them', () => {
    const coerce = createCoercer(
      z.discriminatedUnion('kind', [
        z.object({ kind: z.literal('page'), page: z.number().int() }),
        z.looseObject({ kind: z.literal('filter') }),
      ]),
    );
    expect(coerce({ kind: 'page', page: '2' })).toEqual({ kind: 'page', page: 2 });
    expect(coerce({ kind: 'filter', page: '2' })).toEqual({ kind: 'filter', page: '2' });
    // A value no option names: nothing is coerced, for the validator to refuse.
    expect(coerce({ kind: 'other', page: '2' })).toEqual({ kind: 'other', page: '2' });
    const numbered = createCoercer(
      z.discriminatedUnion('v', [
        z.object({ v: z.literal(1), n: z.number() }),
        z.object({ v: z.literal(2) }),
      ]),
    );
    expect(numbered({ v: '1', n: '3' })).toEqual({ v: 1, n: 3 });
  });

  it('passes input through when there is no schema', () => {
    const raw = { a: '1' };
    expect(createCoercer(undefined)(raw)).toBe(raw);
  });
});

describe('createBodyDateCoercer', () => {
  const body = z.object({
    title: z.string(),
    publishAt: z.date().optional(),
    stamp: z.iso.datetime().optional(),
    data: z.object({ due: z.date().nullable(), steps: z.array(z.object({ at: z.date() })) }).optional(),
  });
  const revive = createBodyDateCoercer(body);

  it('turns ISO strings into Dates where the schema has z.date(), at any depth', () => {
    const value = revive({
      title: '2024-01-01',
      publishAt: '2024-01-02T03:04:05Z',
      stamp: '2024-01-01T00:00:00Z',
      data: { due: '2024-02-01', steps: [{ at: '2024-03-01' }, { at: 'soon' }] },
    });
    expect(value).toEqual({
      title: '2024-01-01',
      publishAt: new Date('2024-01-02T03:04:05Z'),
      stamp: '2024-01-01T00:00:00Z',
      data: { due: new Date('2024-02-01'), steps: [{ at: new Date('2024-03-01') }, { at: 'soon' }] },
    });
    expect(body.safeParse(value).success).toBe(false);
  });

  it('leaves bodies of other shapes alone', () => {
    expect(revive([1])).toEqual([1]);
    expect(revive({ data: null })).toEqual({ data: null });
    expect(createBodyDateCoercer(z.object({ a: z.string() }))({ a: '2024-01-01' })).toEqual({
      a: '2024-01-01',
    });
  });
});

describe('dates in records, tuples, intersections and lazy schemas', () => {
  it('are revived there too; a union is left to the validator', () => {
    type Tree = { at: Date; children: Tree[] };
    const Tree: z.ZodType<Tree> = z.lazy(() => z.object({ at: z.date(), children: z.array(Tree) }));
    const body = z.object({
      byDay: z.record(z.string(), z.date()),
      span: z.tuple([z.date(), z.string()], z.date()),
      both: z.object({ from: z.date() }).and(z.object({ to: z.date(), note: z.string() })),
      tree: Tree,
      either: z.union([z.object({ at: z.date() }), z.object({ at: z.string() })]),
    });
    const sent = {
      byDay: { mon: '2024-01-01', tue: '2024-01-02' },
      span: ['2024-01-01', '2024-01-02', '2024-01-03', '2024-01-04'],
      both: { from: '2024-01-01', to: '2024-01-02', note: '2024-01-03' },
      tree: { at: '2024-01-01', children: [{ at: '2024-01-02', children: [] }] },
      either: { at: '2024-01-01' },
    };
    const revived = createBodyDateCoercer(body)(sent);
    const day = (text: string) => new Date(text);
    expect(revived).toEqual({
      byDay: { mon: day('2024-01-01'), tue: day('2024-01-02') },
      // The second place is a string; the rest are dates.
      span: [day('2024-01-01'), '2024-01-02', day('2024-01-03'), day('2024-01-04')],
      both: { from: day('2024-01-01'), to: day('2024-01-02'), note: '2024-01-03' },
      tree: { at: day('2024-01-01'), children: [{ at: day('2024-01-02'), children: [] }] },
      // One option wants a date there and the other a string: sent as it came.
      either: { at: '2024-01-01' },
    });
    expect(body.safeParse(revived).success).toBe(true);
    // A tuple that holds itself (a linked list) is read once: with a date, and without any.
    type Link = [Date, Link | null];
    const Link: z.ZodType<Link> = z.tuple([z.date(), z.lazy(() => Link).nullable()]);
    expect(
      createBodyDateCoercer(z.object({ list: Link }))({ list: ['2024-01-01', ['2024-01-02', null]] }),
    ).toEqual({
      list: [day('2024-01-01'), [day('2024-01-02'), null]],
    });
    type Plain = [string, Plain | null];
    const Plain: z.ZodType<Plain> = z.tuple([z.string(), z.lazy(() => Plain).nullable()]);
    const plain = { list: ['a', ['b', null]] };
    expect(createBodyDateCoercer(z.object({ list: Plain }))(plain)).toBe(plain);
    // What is not of the shape the places expect is handed on as it is.
    expect(createBodyDateCoercer(body)({ byDay: ['2024-01-01'], span: { 0: 'x' } })).toEqual({
      byDay: ['2024-01-01'],
      span: { 0: 'x' },
    });
  });
});

describe('dates in a recursive Zod schema', () => {
  it('are found at every depth, and a schema referring to itself twice is read once', () => {
    const Tree = z.object({
      at: z.date(),
      get left() {
        return Tree.optional();
      },
      get right() {
        return Tree.optional();
      },
    });
    // Without a bound on the walk this would take 2^32 steps: the test's timeout would end it.
    const revive = createBodyDateCoercer(Tree);
    expect(revive({ at: '2024-05-01', right: { at: '2024-05-02', left: { at: '2024-05-03' } } })).toEqual({
      at: new Date('2024-05-01'),
      right: { at: new Date('2024-05-02'), left: { at: new Date('2024-05-03') } },
    });
  });
});

describe('a recursive Zod schema without dates', () => {
  it('gets no body walk at all: the body is handed on as it is', () => {
    const Tree = z.object({
      name: z.string(),
      get children() {
        return z.array(Tree);
      },
    });
    const body = { name: 'a', children: [{ name: 'b', children: [] }] };
    expect(createBodyDateCoercer(Tree)(body)).toBe(body);
  });
});
