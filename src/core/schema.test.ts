import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { everyViewField } from './record-views.js';
import { toJsonSchema, validate } from './schema.js';

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

describe('validate, on a value nested past what the validator recurses through', () => {
  it("fails as the input's fault (a 400), not as a crash (a 500)", async () => {
    type Node = { c?: Node | undefined };
    const tree: z.ZodType<Node> = z.lazy(() => z.object({ c: tree.optional() }));
    const deep = JSON.parse(`${'{"c":'.repeat(20_000)}{}${'}'.repeat(20_000)}`) as unknown;
    expect(await validate(tree, deep)).toEqual({
      ok: false,
      errors: [{ path: '', message: 'The value is nested too deeply to be checked' }],
    });
    expect(await validate(tree, { c: { c: {} } })).toMatchObject({ ok: true });
  });
});
