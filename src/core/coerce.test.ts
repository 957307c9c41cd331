import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCoercer } from './coerce.js';

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

  it('passes input through when there is no schema', () => {
    const raw = { a: '1' };
    expect(createCoercer(undefined)(raw)).toBe(raw);
  });
});
