/** Any Standard Schema validator works as input and output, not only Zod. */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import { describe, expect, it } from 'vitest';
import { generateOpenApi } from '../openapi/generate.js';
import { createApp } from '../server/create-app.js';
import { procedure, procedures } from './procedure.js';

interface Search {
  q: string;
  limit: number;
}

/** A hand-written validator, as another library would provide: no JSON Schema. */
const searchInput: StandardSchemaV1<unknown, Search> = {
  '~standard': {
    version: 1,
    vendor: 'hand-written',
    validate(value) {
      const input = value as Record<string, unknown>;
      const issues: StandardSchemaV1.Issue[] = [];
      if (typeof input.q !== 'string' || input.q === '') issues.push({ message: 'Required', path: ['q'] });
      const limit = input.limit === undefined ? 10 : Number(input.limit);
      if (!Number.isInteger(limit)) issues.push({ message: 'Expected an integer', path: [{ key: 'limit' }] });
      return issues.length > 0 ? { issues } : { value: { q: input.q as string, limit } };
    },
  },
};

/** Strips to `{ id }`, as a strict output validator would. */
const resultOutput: StandardSchemaV1<unknown, { id: string }> = {
  '~standard': {
    version: 1,
    vendor: 'hand-written',
    validate(value) {
      const id = (value as { id?: unknown }).id;
      return typeof id === 'string'
        ? { value: { id } }
        : { issues: [{ message: 'id must be a string', path: ['id'] }] };
    },
  },
};

/** A validator that also describes itself (Standard JSON Schema): its types drive coercion. */
const pagedInput: StandardSchemaV1<unknown, { page: number }> & StandardJSONSchemaV1 = {
  '~standard': {
    version: 1,
    vendor: 'hand-written',
    validate: (value) => {
      const page = (value as { page?: unknown }).page;
      return typeof page === 'number'
        ? { value: { page } }
        : { issues: [{ message: 'Expected a number', path: ['page'] }] };
    },
    jsonSchema: {
      input: () => ({
        type: 'object',
        properties: { id: { type: 'string' }, page: { type: 'integer' } },
        required: ['page'],
      }),
      output: () => ({ type: 'object', properties: { page: { type: 'integer' } } }),
    },
  },
};

const search = procedures('search', {
  // A body needs no JSON Schema to be validated (only the OpenAPI document needs one).
  findSearch: procedure()
    .rest({ method: 'POST', path: '/search/find' })
    .input(searchInput)
    .output(resultOutput)
    .mutation(({ input }) => ({ id: `${input.q}:${input.limit}`, internal: 'never sent' })),
  getSearch: procedure()
    .input(pagedInput)
    .query(({ input }) => ({ page: input.page })),
  createSearch: procedure()
    .output(resultOutput)
    .mutation(() => ({ id: 7 })),
});

const app = createApp({ logger: false, exposeErrors: true }).mount([search]);

describe('Standard Schema validators', () => {
  it('validate input and strip output through the standard interface', async () => {
    const found = await app.inject({
      method: 'POST',
      url: '/api/search/find',
      payload: { q: 'cats', limit: 3 },
    });
    expect(found.json()).toEqual({ id: 'cats:3' });
    const refused = await app.inject({ method: 'POST', url: '/api/search/find', payload: { limit: 'x' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().errors).toEqual([
      { path: 'q', message: 'Required' },
      { path: 'limit', message: 'Expected an integer' },
    ]);
  });

  it('are refused at start-up where a JSON Schema is needed and they give none, with the reason', () => {
    const queried = procedures('search', {
      listSearch: procedure()
        .input(searchInput)
        .query(() => []),
    });
    expect(() => createApp({ logger: false }).mount([queried])).toThrow(
      'search.listSearch takes its input from the query string, whose values arrive as text and are coerced and checked by the input\'s JSON Schema, but its validator (hand-written) does not describe itself as JSON Schema (Standard JSON Schema, "~standard.jsonSchema"); Zod, ArkType and Valibot do (docs/procedures.md, "Validators")',
    );
    expect(() => generateOpenApi({ app, info: { title: 'Search', version: '1' } })).toThrow(
      'procedure "search.findSearch": the OpenAPI document describes its input by JSON Schema, but its validator (hand-written) does not describe itself',
    );
  });

  it('coerce the query from a Standard JSON Schema', async () => {
    expect((await app.inject({ method: 'GET', url: '/api/search/1?page=4' })).json()).toEqual({ page: 4 });
    expect((await app.inject({ method: 'GET', url: '/api/search/1?page=four' })).statusCode).toBe(400);
  });

  it('turn an output that fails its validator into a 500', async () => {
    const response = await app.inject({ method: 'POST', url: '/api/search' });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toMatchObject({
      code: 'INTERNAL',
      detail: 'Output does not match its schema: id: id must be a string',
    });
  });
});
