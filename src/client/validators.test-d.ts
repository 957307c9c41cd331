/** The client's types are the same whichever validator a procedure is written with. */
import { type } from 'arktype';
import * as v from 'valibot';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { procedure, procedures } from '../core/procedure.js';
import { createClient } from './index.js';

interface Search {
  limit: number;
  tag?: string[] | undefined;
}
interface Found {
  limit: number;
  tags: string[];
}
const found = (input: Search): Found => ({ limit: input.limit, tags: input.tag ?? [] });

const withZod = procedures('things', {
  listThings: procedure()
    .input(z.object({ limit: z.int().min(1).default(20), tag: z.array(z.string()).optional() }))
    .output(z.object({ limit: z.int(), tags: z.array(z.string()) }))
    .query(({ input }) => {
      expectTypeOf(input).toEqualTypeOf<Search>();
      return found(input);
    }),
});

const withValibot = procedures('things', {
  listThings: procedure()
    .input(
      v.object({
        limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 20),
        tag: v.optional(v.array(v.string())),
      }),
    )
    .output(v.object({ limit: v.pipe(v.number(), v.integer()), tags: v.array(v.string()) }))
    .query(({ input }) => {
      expectTypeOf(input).toEqualTypeOf<Search>();
      return found(input);
    }),
});

const withArkType = procedures('things', {
  listThings: procedure()
    .input(type({ limit: ['number.integer >= 1', '=', 20], 'tag?': 'string[]' }))
    .output(type({ limit: 'number.integer', tags: 'string[]' }))
    .query(({ input }) => {
      expectTypeOf(input).toMatchTypeOf<Search>();
      return found(input);
    }),
});

const zodClient = createClient<[typeof withZod]>({ baseUrl: 'http://x' }).things;
const valibotClient = createClient<[typeof withValibot]>({ baseUrl: 'http://x' }).things;
const arktypeClient = createClient<[typeof withArkType]>({ baseUrl: 'http://x' }).things;

describe('client types with Zod, Valibot and ArkType', () => {
  it('take the input before defaults, and give the output', () => {
    type Input = { limit?: number | undefined; tag?: string[] | undefined } | undefined;
    expectTypeOf<Parameters<typeof zodClient.listThings>[0]>().toEqualTypeOf<Input>();
    expectTypeOf<Parameters<typeof valibotClient.listThings>[0]>().toEqualTypeOf<Input>();
    expectTypeOf<Awaited<ReturnType<typeof zodClient.listThings>>>().toEqualTypeOf<Found>();
    expectTypeOf<Awaited<ReturnType<typeof valibotClient.listThings>>>().toEqualTypeOf<Found>();
    // ArkType writes an optional key without `| undefined`, which a call accepts alike.
    expectTypeOf(arktypeClient.listThings).toBeCallableWith({ tag: ['a'] });
    expectTypeOf(arktypeClient.listThings).toBeCallableWith();
    expectTypeOf<Awaited<ReturnType<typeof arktypeClient.listThings>>>().toEqualTypeOf<Found>();
  });
});
