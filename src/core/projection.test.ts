import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { projectionOf } from './projection.js';
import { toJsonSchema } from './schema.js';

const projection = (schema: z.ZodType) => projectionOf(toJsonSchema(schema, { io: 'output', named: true }));

describe('projectionOf', () => {
  it('keeps only the keys an object names, at every depth and in arrays', () => {
    const project = projection(
      z.object({
        id: z.string(),
        author: z.object({ name: z.string() }),
        tags: z.array(z.object({ tag: z.string() })),
      }),
    );
    expect(
      project({
        id: 'p1',
        passwordHash: 'x',
        author: { name: 'Ada', email: 'ada@example.com' },
        tags: [{ tag: 'a', internal: 1 }],
      }),
    ).toEqual({ id: 'p1', author: { name: 'Ada' }, tags: [{ tag: 'a' }] });
  });

  it('keeps any key where the object welcomes them, and projects a record’s values', () => {
    expect(projection(z.looseObject({ id: z.string() }))({ id: 'a', extra: 1 })).toEqual({
      id: 'a',
      extra: 1,
    });
    expect(projection(z.record(z.string(), z.object({ n: z.number() })))({ a: { n: 1, secret: 2 } })).toEqual(
      { a: { n: 1 } },
    );
  });

  it('projects a union by the alternative the value is, told by its constants', () => {
    const project = projection(
      z.discriminatedUnion('kind', [
        z.object({ kind: z.literal('user'), name: z.string() }),
        z.object({ kind: z.literal('bot'), model: z.string() }),
      ]),
    );
    expect(project({ kind: 'bot', model: 'm', name: 'hidden' })).toEqual({ kind: 'bot', model: 'm' });
    expect(projection(z.object({ a: z.string() }).nullable())(null)).toBeNull();
  });

  it('follows references of a recursive schema', () => {
    interface Node {
      name: string;
      children: Node[];
    }
    const Node: z.ZodType<Node> = z.object({ name: z.string(), children: z.array(z.lazy(() => Node)) });
    expect(
      projection(Node)({ name: 'a', secret: 1, children: [{ name: 'b', secret: 2, children: [] }] }),
    ).toEqual({ name: 'a', children: [{ name: 'b', children: [] }] });
  });

  it('cuts a recursive value past 64 levels to empty objects, never to what the schema does not name', () => {
    interface Chain {
      next?: Chain | undefined;
    }
    const Chain: z.ZodType<Chain> = z.object({ next: z.lazy(() => Chain).optional() });
    let deep: Record<string, unknown> = { secret: 'leaf' };
    for (let level = 0; level < 100; level++) deep = { next: deep, secret: level };
    let projected = projection(Chain)(deep) as Record<string, unknown>;
    let levels = 0;
    while (projected.next !== undefined) {
      expect(Object.keys(projected)).toEqual(['next']);
      projected = projected.next as Record<string, unknown>;
      levels++;
    }
    expect(projected).toEqual({});
    expect(levels).toBeGreaterThan(30);
    expect(levels).toBeLessThan(100);
  });
});

describe('projectionOf, the keywords beyond properties', () => {
  it('keeps keys a pattern names, projected by it, and drops the others of a closed object', () => {
    const project = projectionOf({
      type: 'object',
      patternProperties: { '^x-': { type: 'object', properties: { n: { type: 'number' } } } },
      additionalProperties: false,
    });
    expect(project({ 'x-a': { n: 1, secret: 2 }, other: 3 })).toEqual({ 'x-a': { n: 1 } });
  });

  it('projects each item of a tuple by its own schema', () => {
    const project = projectionOf({
      type: 'array',
      prefixItems: [{ type: 'object', properties: { a: { type: 'string' } } }, { type: 'number' }],
    });
    expect(project([{ a: 'x', secret: 1 }, 2])).toEqual([{ a: 'x' }, 2]);
  });
});
