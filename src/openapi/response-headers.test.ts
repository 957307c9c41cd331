import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { entityTagDocumentation } from '../core/documentation.js';
import { guard } from '../core/guards.js';
import { procedure, procedures } from '../core/procedure.js';
import { rateLimit } from '../core/steps.js';
import { exposedHeaders } from '../http/cors.js';
import { createApp } from '../server/create-app.js';
import { generateOpenApi } from './generate.js';
import type { OpenApiDocument, OpenApiResponse, Reference } from './types.js';

const info = { title: 'Drafts', version: '1' };
const limitRefs = {
  'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/X-RateLimit-Remaining' },
  'X-RateLimit-Reset': { $ref: '#/components/headers/X-RateLimit-Reset' },
};
const corsRefs = {
  'Access-Control-Allow-Origin': { $ref: '#/components/headers/Access-Control-Allow-Origin' },
  'Access-Control-Expose-Headers': { $ref: '#/components/headers/Access-Control-Expose-Headers' },
};

const signedIn = guard({
  name: 'signed in',
  requiresUser: true,
  failsWith: 'UNAUTHENTICATED',
  check: () => true,
});
const drafts = procedures('drafts', {
  createDraft: procedure()
    .guard(signedIn)
    .use(rateLimit({ name: 'writes', max: 5 }))
    .input(z.object({ title: z.string().max(10) }))
    .output(z.object({ id: z.string().max(10) }))
    .mutation(() => ({ id: '1' })),
  getDraft: procedure()
    .use(rateLimit({ name: 'reads', max: 50 }))
    .input(z.object({ id: z.string().max(10) }))
    .output(z.object({ id: z.string().max(10) }))
    .query(({ input }) => ({ id: input.id })),
  listDrafts: procedure().query(() => []),
});

function document(cors?: { origins: string[] | '*'; credentials?: boolean }): OpenApiDocument {
  return generateOpenApi({
    mounts: [{ prefix: '/api', collections: [drafts] }],
    // What an app with entity tags (the default) adds: a GET's 304.
    documentation: [entityTagDocumentation],
    info,
    ...(cors === undefined ? {} : { cors }),
  });
}

function responsesOf(doc: OpenApiDocument, path: string, method: 'get' | 'post') {
  const found = doc.paths[path]?.[method];
  if (found === undefined) throw new Error(`${method} ${path} is not documented`);
  return found.responses;
}

/** The response a reference names, or the inline one. */
function resolved(doc: OpenApiDocument, response: OpenApiResponse | Reference | undefined): OpenApiResponse {
  if (response === undefined) throw new Error('no such response');
  if (!('$ref' in response)) return response;
  const found = doc.components.responses[response.$ref.replace('#/components/responses/', '')];
  if (found === undefined) throw new Error(`${response.$ref} is not a component`);
  return found;
}

describe('the X-RateLimit headers of a rate-limited route', () => {
  it('are declared on every answer the route gives, problems included, as shared components', () => {
    const doc = document();
    const create = responsesOf(doc, '/api/drafts', 'post');
    for (const status of ['201', '400', '401', '409', '412', '413', '415', '429', '500', '503']) {
      expect(resolved(doc, create[status]).headers, status).toMatchObject(limitRefs);
    }
    const read = responsesOf(doc, '/api/drafts/{id}', 'get');
    for (const status of ['200', '304', '404']) {
      expect(resolved(doc, read[status]).headers, status).toMatchObject(limitRefs);
    }
    expect(doc.components.headers?.['X-RateLimit-Remaining']).toEqual({
      description: expect.any(String),
      schema: { type: 'integer', format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    });
  });

  it('are not declared where the HTTP server answers before any route (408, 431), nor on unlimited routes', () => {
    const doc = document();
    const create = responsesOf(doc, '/api/drafts', 'post');
    expect(create['408']).toEqual({ $ref: '#/components/responses/RequestTimeout' });
    expect(create['431']).toEqual({ $ref: '#/components/responses/RequestHeaderFieldsTooLarge' });
    expect(resolved(doc, create['431']).headers).toBeUndefined();
    const list = responsesOf(doc, '/api/drafts', 'get');
    expect(list['429']).toBeUndefined();
    expect(resolved(doc, list['200']).headers ?? {}).not.toHaveProperty('X-RateLimit-Limit');
    // An unlimited route's problems are the plain components, without the headers.
    expect(list['500']).toEqual({ $ref: '#/components/responses/InternalError' });
    expect(resolved(doc, list['500']).headers ?? {}).not.toHaveProperty('X-RateLimit-Limit');
    expect(responsesOf(doc, '/api/health', 'get')['429']).toBeUndefined();
  });

  it('come with a 429 problem that says when to retry', () => {
    const doc = document();
    const limited = resolved(doc, responsesOf(doc, '/api/drafts', 'post')['429']);
    expect(Object.keys(limited.content ?? {})).toEqual(['application/problem+json']);
    expect(limited.headers?.['Retry-After']).toEqual({
      description: expect.any(String),
      schema: {
        type: 'integer',
        format: 'int64',
        minimum: 1,
        maximum: Math.ceil(Number.MAX_SAFE_INTEGER / 1000),
      },
    });
    // Only the limited copy exists: no route answers the plain one.
    expect(doc.components.responses.TooManyRequests).toBeUndefined();
  });

  it('are left out of a document without limited routes', () => {
    const open = procedures('open', { listOpen: procedure().query(() => []) });
    const doc = generateOpenApi({ mounts: [{ prefix: '/api', collections: [open] }], info });
    expect(doc.components.headers).toBeUndefined();
  });
});

describe('the CORS headers', () => {
  it('are declared on every answer of every route when the app has a policy, the origins as an enum', () => {
    const doc = document({ origins: ['https://app.example', 'https://admin.example'] });
    for (const [path, method] of [
      ['/api/drafts', 'get'],
      ['/api/drafts', 'post'],
      ['/api/drafts/{id}', 'get'],
      ['/api/health', 'get'],
      ['/api/health/live', 'get'],
    ] as const) {
      for (const [status, response] of Object.entries(responsesOf(doc, path, method))) {
        const headers = resolved(doc, response).headers ?? {};
        if (status === '408' || status === '431')
          expect(headers, `${path} ${status}`).not.toHaveProperty('Access-Control-Allow-Origin');
        else expect(headers, `${method} ${path} ${status}`).toMatchObject(corsRefs);
      }
    }
    expect(doc.components.headers?.['Access-Control-Allow-Origin']?.schema).toEqual({
      type: 'string',
      enum: ['https://app.example', 'https://admin.example'],
    });
    expect(doc.components.headers?.['Access-Control-Expose-Headers']?.schema).toEqual({
      type: 'string',
      const: exposedHeaders,
    });
    expect(doc.components.headers).not.toHaveProperty('Access-Control-Allow-Credentials');
  });

  it('say Access-Control-Allow-Credentials when the policy does', () => {
    const doc = document({ origins: ['https://app.example'], credentials: true });
    expect(doc.components.headers?.['Access-Control-Allow-Credentials']?.schema).toEqual({
      type: 'string',
      const: 'true',
    });
    expect(resolved(doc, responsesOf(doc, '/api/drafts', 'get')['200']).headers).toHaveProperty(
      'Access-Control-Allow-Credentials',
    );
  });

  it('are not declared without a policy', () => {
    const doc = document();
    expect(JSON.stringify(doc)).not.toContain('Access-Control-');
  });

  it('come from the app’s cors option', () => {
    const app = createApp({
      logger: false,
      userFromContext: true,
      cors: { origins: ['https://app.example'] },
    });
    app.mount([drafts]);
    const doc = generateOpenApi({ app, info });
    expect(doc.components.headers?.['Access-Control-Allow-Origin']?.schema).toEqual({
      type: 'string',
      enum: ['https://app.example'],
    });
    const plain = createApp({ logger: false, userFromContext: true }).mount([drafts]);
    expect(generateOpenApi({ app: plain, info }).components.headers).not.toHaveProperty(
      'Access-Control-Allow-Origin',
    );
  });
});
