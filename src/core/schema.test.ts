import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { everyViewField } from './record-views.js';
import { toJsonSchema } from './schema.js';

describe('toJsonSchema', () => {
  const input = z.object({ limit: z.coerce.number().int().default(20), note: z.string().optional() });

  it('gives each call a copy of its own: changing one changes no later answer', () => {
    const first = toJsonSchema(input, { io: 'input' });
    const second = toJsonSchema(input, { io: 'input' });
    expect(second).toEqual(first);
    expect(second).not.toBe(first);
    (first.properties as Record<string, unknown>).limit = { type: 'string' };
    delete first.required;
    expect(toJsonSchema(input, { io: 'input' })).toEqual(second);
  });

  it('answers each set of options apart, for the same schema', () => {
    // What a client may leave out (input) is what the server always writes (output).
    expect(toJsonSchema(input, { io: 'input' }).required).toBeUndefined();
    expect(toJsonSchema(input, { io: 'output' }).required).toEqual(['limit']);
    const named = z.object({ id: z.string() }).meta({ id: 'Named' });
    const holder = z.object({ item: named });
    expect(JSON.stringify(toJsonSchema(holder, { io: 'output' }))).not.toContain('$defs');
    expect(toJsonSchema(holder, { io: 'output', named: true }).$defs).toHaveProperty('Named');
    const overridden = toJsonSchema(input, { io: 'output', override: everyViewField });
    expect(overridden).toEqual(toJsonSchema(input, { io: 'output' }));
  });
});
