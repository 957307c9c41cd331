import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { notes, notesApp } from '../../test/fixtures/notes.js';
import { admin, allOf, anyOf, hasRole } from '../auth/guards.js';
import { entityTagDocumentation } from '../core/documentation.js';
import { defineErrors, errorStatus } from '../core/errors.js';
import { eventStream } from '../core/events.js';
import { download, sendFile } from '../core/files.js';
import { guard } from '../core/guards.js';
import { procedure, procedures } from '../core/procedure.js';
import { RouteTable } from '../core/route-table.js';
import { rateLimit, step } from '../core/steps.js';
import { resource } from '../resource/index.js';
import { exampleErrors } from './conformance.js';
import { generateOpenApi } from './generate.js';
import { summaryOfName } from './operations.js';
import type { JsonSchema, OpenApiDocument, OpenApiOperation, OpenApiParameter, Reference } from './types.js';

const info = { title: 'Notes API', version: '1.2.3' };

function notesDocument(): OpenApiDocument {
  return generateOpenApi({ app: notesApp(), info });
}

function operation(document: OpenApiDocument, path: string, method: 'get' | 'post' | 'put' | 'delete') {
  const found = document.paths[path]?.[method];
  if (found === undefined) throw new Error(`${method.toUpperCase()} ${path} is not documented`);
  return found;
}

function param(op: OpenApiOperation, name: string): OpenApiParameter {
  const found = op.parameters?.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`${op.operationId} has no parameter ${name}`);
  return found;
}

function successSchema(op: OpenApiOperation, status = '200'): JsonSchema {
  const response = op.responses[status];
  if (response === undefined || '$ref' in response)
    throw new Error(`${op.operationId} has no inline ${status}`);
  const schema = response.content?.['application/json']?.schema;
  if (schema === undefined) throw new Error(`${op.operationId} ${status} has no JSON content`);
  return schema;
}

function statuses(op: OpenApiOperation): string[] {
  return Object.keys(op.responses).sort();
}

function findKeys(value: unknown, key: string, found: unknown[] = []): unknown[] {
  if (Array.isArray(value)) for (const item of value) findKeys(item, key, found);
  else if (typeof value === 'object' && value !== null) {
    for (const [name, item] of Object.entries(value)) {
      if (name === key) found.push(item);
      findKeys(item, key, found);
    }
  }
  return found;
}

type Ctx = { user?: { id: string; role: string } };
const p = () => procedure<Ctx>();
const authenticated = guard({
  name: 'authenticated',
  requiresUser: true,
  failsWith: 'UNAUTHENTICATED',
  check: (ctx: Ctx) => ctx.user !== undefined,
});
const editor = guard({
  name: 'editor',
  requiresUser: true,
  check: (ctx: Ctx) => ctx.user?.role === 'editor',
});

describe('generateOpenApi on the notes fixture', () => {
  it('is a valid OpenAPI 3.1.0 document', async () => {
    const document = notesDocument();
    expect(document.openapi).toBe('3.1.0');
    expect(document.info).toEqual(info);
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
  });

  it('documents every route with operationId = procedure name and tag = collection name', () => {
    const document = notesDocument();
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => [
        `${method.toUpperCase()} ${path}`,
        op.operationId,
        op.tags,
      ]),
    );
    expect(operations).toEqual([
      ['GET /api/notes', 'listNotes', ['notes']],
      ['POST /api/notes', 'createNote', ['notes']],
      ['GET /api/notes/{id}', 'getNote', ['notes']],
      ['PUT /api/notes/{id}', 'updateNote', ['notes']],
      ['DELETE /api/notes/{id}', 'deleteNote', ['notes']],
      ['POST /api/notes/{id}/pin', 'pinNote', ['notes']],
      ['GET /api/notes-broken', 'broken', ['notes']],
      ['GET /api/health', 'health', ['health']],
      ['GET /api/health/live', 'healthLive', ['health']],
    ]);
    expect(document.tags).toEqual([
      { name: 'notes' },
      { name: 'health', description: expect.stringContaining('probes') },
    ]);
  });

  it('turns the list input into query parameters with their constraints, defaults and enums', () => {
    const list = operation(notesDocument(), '/api/notes', 'get');
    expect(list.parameters?.map((parameter) => parameter.name)).toEqual([
      'limit',
      'pinned',
      'after',
      'tags',
      'If-None-Match',
    ]);
    expect(param(list, 'limit')).toEqual({
      name: 'limit',
      in: 'query',
      required: false,
      schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 100, default: 20 },
      example: 20,
    });
    // An optional filter gets no made-up example: a pre-filled request would filter by it.
    expect(param(list, 'pinned')).toEqual({
      name: 'pinned',
      in: 'query',
      required: false,
      schema: { type: 'boolean' },
    });
    expect(param(list, 'after').schema).toEqual({ type: 'string', format: 'date-time' });
    expect(param(list, 'tags')).toMatchObject({
      in: 'query',
      required: false,
      style: 'form',
      explode: true,
      schema: { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c'] } },
    });
    expect(list.requestBody).toBeUndefined();
  });

  it('documents path parameters as required, with the input schema of the parameter, a description and an example', () => {
    const document = notesDocument();
    expect(
      operation(document, '/api/notes/{id}', 'get').parameters?.filter((each) => each.in === 'path'),
    ).toEqual([
      {
        name: 'id',
        in: 'path',
        required: true,
        schema: { type: 'string' },
        description: 'The `id` of the notes record',
        example: '01951a2b-3c4d-7e5f-8a9b-37386ae0a5b6',
      },
    ]);
    const pin = operation(document, '/api/notes/{id}/pin', 'post');
    expect(param(pin, 'id')).toMatchObject({
      in: 'path',
      required: true,
      schema: { type: 'integer' },
      example: 1,
    });
    // The only input field is the path parameter: there is no body to document.
    expect(pin.requestBody).toBeUndefined();
    // A path parameter never reappears as a query parameter.
    expect(operation(document, '/api/notes/{id}', 'delete').parameters).toHaveLength(1);
  });

  it('documents JSON request bodies: the input minus path params, or the `data` of an update', () => {
    const document = notesDocument();
    expect(operation(document, '/api/notes', 'post').requestBody).toEqual({
      required: true,
      content: {
        'application/json': {
          example: {
            title: 'Notes on the Analytical Engine',
            body: 'The engine weaves algebraic patterns as the loom weaves flowers.',
          },
          schema: {
            type: 'object',
            properties: { title: { type: 'string', minLength: 1 }, body: { type: 'string' } },
            required: ['title', 'body'],
            // An unknown key is a 400 (src/core/unknown-keys.ts).
            additionalProperties: false,
          },
        },
      },
    });
    const update = operation(document, '/api/notes/{id}', 'put');
    expect(update.requestBody?.required).toBe(true);
    expect(update.requestBody?.content['application/json']?.schema).toEqual({
      type: 'object',
      properties: { title: { type: 'string', minLength: 1 } },
      required: ['title'],
      additionalProperties: false,
    });
  });

  it('answers create with 201 and a documented Location header', () => {
    const create = operation(notesDocument(), '/api/notes', 'post');
    expect(create.responses['200']).toBeUndefined();
    const created = create.responses['201'];
    expect(created).toMatchObject({
      description: 'Created',
      // Every NoteAuthenticated has an `id`, so every 201 carries the header.
      headers: { Location: { required: true, schema: { type: 'string', format: 'uri-reference' } } },
      content: { 'application/json': { schema: { $ref: '#/components/schemas/NoteAuthenticated' } } },
    });
  });

  it('gives every body, success answer and path parameter an example its schema accepts', () => {
    const document = notesDocument();
    expect(exampleErrors(document)).toEqual([]);
    const created = operation(document, '/api/notes', 'post').responses['201'];
    expect(
      created !== undefined && !('$ref' in created) && created.content?.['application/json']?.example,
    ).toEqual({
      id: '01951a2b-3c4d-7e5f-8a9b-37386ae0a5b6',
      title: 'Notes on the Analytical Engine',
      body: 'The engine weaves algebraic patterns as the loom weaves flowers.',
      ownerId: '01951a2b-3c4d-7e5f-8a9b-e51b6a79a5b6',
    });
  });

  it('catches an example its schema refuses (the check above can fail)', () => {
    const document = notesDocument();
    const body = operation(document, '/api/notes', 'post').requestBody?.content['application/json'];
    if (body === undefined) throw new Error('createNote has no JSON body');
    body.example = { title: '' };
    expect(exampleErrors(document)).toEqual([
      "POST /api/notes request body application/json: example (value) must have required property 'body'",
      'POST /api/notes request body application/json: example /title must NOT have fewer than 1 characters',
    ]);
  });

  it('lifts each view into its own component and references it', () => {
    const document = notesDocument();
    const { schemas } = document.components;
    expect(Object.keys(schemas).sort()).toEqual(['NoteAdmin', 'NoteAuthenticated', 'NotePublic', 'Problem']);
    expect(Object.keys((schemas.NotePublic?.properties ?? {}) as object)).toEqual(['id', 'title']);
    expect(Object.keys((schemas.NoteAuthenticated?.properties ?? {}) as object)).toEqual([
      'id',
      'title',
      'body',
      'ownerId',
    ]);
    expect(Object.keys((schemas.NoteAdmin?.properties ?? {}) as object)).toEqual([
      'id',
      'title',
      'body',
      'ownerId',
      'createdAt',
    ]);
    expect(schemas.NoteAdmin?.properties).toMatchObject({
      createdAt: { type: 'string', format: 'date-time' },
    });
    expect(schemas.NotePublic?.additionalProperties).toBe(false);
    expect(successSchema(operation(document, '/api/notes', 'get')).properties).toMatchObject({
      data: { type: 'array', items: { $ref: '#/components/schemas/NotePublic' } },
    });
    expect(successSchema(operation(document, '/api/notes-broken', 'get'))).toEqual({
      $ref: '#/components/schemas/NotePublic',
    });
    expect(findKeys(document, '$defs')).toEqual([]);
    const refs = findKeys(document, '$ref') as string[];
    expect(refs.filter((ref) => ref.startsWith('#/$defs'))).toEqual([]);
    for (const ref of refs) {
      const [, section, name] = /^#\/components\/(schemas|responses)\/(.+)$/.exec(ref) ?? [];
      expect(section, ref).toBeDefined();
      expect(document.components[section as 'schemas'][name ?? ''], ref).toBeDefined();
    }
  });

  it('documents an output chosen per request as oneOf its views', () => {
    const get = operation(notesDocument(), '/api/notes/{id}', 'get');
    expect(successSchema(get)).toEqual({
      oneOf: [{ $ref: '#/components/schemas/NotePublic' }, { $ref: '#/components/schemas/NoteAdmin' }],
    });
  });

  it('documents `{ success }` for a delete without output and anything for other routes without output', () => {
    const document = notesDocument();
    expect(successSchema(operation(document, '/api/notes/{id}', 'delete'))).toEqual({
      type: 'object',
      properties: { success: { type: 'boolean' } },
      required: ['success'],
      additionalProperties: false,
    });
    expect(successSchema(operation(document, '/api/notes/{id}/pin', 'post'))).toEqual({});
  });

  it('documents the problem responses each route can produce', () => {
    const document = notesDocument();
    // A read with an ETag answers a stale If-Match with 412, as writes do.
    expect(statuses(operation(document, '/api/notes', 'get'))).toEqual([
      '200',
      '304',
      '400',
      '412',
      '431',
      '500',
      '503',
    ]);
    expect(statuses(operation(document, '/api/notes', 'post'))).toEqual([
      '201',
      '400',
      '408',
      '409',
      '412',
      '413',
      '415',
      '431',
      '500',
      '503',
    ]);
    expect(statuses(operation(document, '/api/notes/{id}', 'get'))).toEqual([
      '200',
      '304',
      '400',
      '404',
      '412',
      '431',
      '500',
      '503',
    ]);
    expect(statuses(operation(document, '/api/notes/{id}', 'put'))).toEqual([
      '200',
      '400',
      '404',
      '408',
      '409',
      '412',
      '413',
      '415',
      '431',
      '500',
      '503',
    ]);
    // DELETE reads no body: no 408/413/415.
    expect(statuses(operation(document, '/api/notes/{id}', 'delete'))).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '409',
      '412',
      '431',
      '500',
      '503',
    ]);
    // No input schema and no body: any query parameter sent is unknown, a 400.
    expect(statuses(operation(document, '/api/notes-broken', 'get'))).toEqual([
      '200',
      '304',
      '400',
      '412',
      '431',
      '500',
      '503',
    ]);
    expect(statuses(operation(document, '/api/health', 'get'))).toEqual(['200', '431', '503']);
    // Liveness answers while the process runs, shutting down included.
    expect(statuses(operation(document, '/api/health/live', 'get'))).toEqual(['200', '431']);
    expect(operation(document, '/api/notes/{id}', 'delete').responses['403']).toEqual({
      $ref: '#/components/responses/Forbidden',
    });
  });

  it('shares one Problem schema whose code lists every error code', () => {
    const { components } = notesDocument();
    expect(components.schemas.Problem).toMatchObject({
      type: 'object',
      required: ['type', 'title', 'status', 'detail', 'code'],
      properties: {
        code: { type: 'string', enum: Object.keys(errorStatus) },
        errors: { type: 'array', items: { required: ['path', 'message'] } },
      },
    });
    const unauthorized = components.responses.Unauthorized;
    expect(unauthorized?.headers?.['WWW-Authenticate']).toBeDefined();
    expect(unauthorized?.content?.['application/problem+json']?.schema).toEqual({
      allOf: [
        { $ref: '#/components/schemas/Problem' },
        {
          type: 'object',
          properties: {
            status: { type: 'integer', format: 'int32', minimum: 401, maximum: 401, const: 401 },
            code: { type: 'string', enum: ['UNAUTHENTICATED', 'INVALID_TOKEN'] },
          },
        },
      ],
    });
    expect(components.responses.NotFound?.content?.['application/problem+json']?.schema).toMatchObject({
      allOf: [{}, { properties: { code: { enum: ['NOT_FOUND'] } } }],
    });
    // Only the responses some route uses are components.
    expect(Object.keys(components.responses).sort()).toEqual([
      'BadRequest',
      'Conflict',
      'Forbidden',
      'InternalError',
      'NotFound',
      'PayloadTooLarge',
      'PreconditionFailed',
      'RequestHeaderFieldsTooLarge',
      'RequestTimeout',
      'ServiceUnavailable',
      'Unauthorized',
      'UnsupportedMediaType',
    ]);
  });

  it('puts bearerAuth on guarded routes only', () => {
    const document = notesDocument();
    expect(document.components.securitySchemes.bearerAuth).toEqual({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: expect.any(String),
    });
    const secured = Object.values(document.paths)
      .flatMap((item) => Object.values(item))
      .filter((op) => op.security !== undefined && op.security.length > 0)
      .map((op) => [op.operationId, op.security, op['x-proceed-guards']]);
    expect(secured).toEqual([['deleteNote', [{ bearerAuth: [] }], ['admin']]]);
  });

  it('names the roles its role guards let in, one requirement each, composites included', () => {
    const open = guard({ name: 'open', check: () => true });
    const editor = guard({ name: 'editor', requiresUser: true, roles: ['editor'], check: () => true });
    const p = () => procedure<{ user?: { id: string; role: string } }>();
    const post = (path: string) => p().rest({ method: 'POST', path: `/staff/${path}` });
    const staff = procedures('staff', {
      listStaff: p()
        .guard(admin)
        .query(() => []),
      publishStaff: post('publish')
        .guard(hasRole('editor', 'admin'), open)
        .mutation(() => null),
      // A caller has one role: the roles that pass both guards.
      narrowStaff: post('narrow')
        .guard(hasRole('editor', 'admin'), admin)
        .mutation(() => null),
      noneStaff: post('none')
        .guard(hasRole('editor', 'admin'), hasRole('reviewer'))
        .mutation(() => null),
      eitherStaff: post('either')
        .guard(anyOf(editor, admin))
        .mutation(() => null),
      bothStaff: post('both')
        .guard(allOf(authenticated, admin, admin))
        .mutation(() => null),
      // A check that is no role, alone or in a choice, names no role.
      tryStaff: post('try')
        .guard(guard({ name: 'beta enabled', requiresUser: true, check: () => true }))
        .mutation(() => null),
      orStaff: post('or')
        .guard(anyOf(admin, open))
        .mutation(() => null),
      // A step that checks access (as owned() does) is listed after the guards.
      ownStaff: post('own')
        .guard(authenticated)
        .use(step({ name: 'owner or admin', documents: { problems: ['FORBIDDEN'] } }))
        .mutation(() => null),
    });
    const document = generateOpenApi({ mounts: [{ prefix: '/api', collections: [staff] }], info });
    const securityOf = (path: string, method: 'get' | 'post' = 'post') =>
      document.paths[path]?.[method]?.security;
    const none = [{ bearerAuth: [] }];
    expect(securityOf('/api/staff', 'get')).toEqual([{ bearerAuth: ['admin'] }]);
    expect(securityOf('/api/staff/publish')).toEqual([{ bearerAuth: ['editor'] }, { bearerAuth: ['admin'] }]);
    expect(securityOf('/api/staff/narrow')).toEqual([{ bearerAuth: ['admin'] }]);
    expect(securityOf('/api/staff/none')).toEqual(none);
    expect(securityOf('/api/staff/either')).toEqual([{ bearerAuth: ['editor'] }, { bearerAuth: ['admin'] }]);
    expect(securityOf('/api/staff/both')).toEqual([{ bearerAuth: ['admin'] }]);
    expect(securityOf('/api/staff/try')).toEqual(none);
    expect(document.paths['/api/staff/try']?.post?.['x-proceed-guards']).toEqual(['beta enabled']);
    expect(securityOf('/api/staff/or')).toEqual(none);
    expect(document.paths['/api/staff/own']?.post?.['x-proceed-guards']).toEqual([
      'authenticated',
      'owner or admin',
    ]);
  });

  it('reads the routes through the planner when given mounts, with the same result as from the app', () => {
    const fromMounts = generateOpenApi({
      mounts: [{ prefix: '/api', collections: [notes] }],
      documentation: [entityTagDocumentation],
      info,
    });
    expect(fromMounts).toEqual(notesDocument());
  });

  it('returns a fresh tree that callers may change without touching the next document', () => {
    const first = notesDocument();
    const problem = first.components.schemas.Problem ?? {};
    problem.required = ['changed'];
    const headers = first.components.responses.Unauthorized?.headers ?? {};
    delete headers['WWW-Authenticate'];
    const second = notesDocument();
    expect(second.components.schemas.Problem?.required).toEqual([
      'type',
      'title',
      'status',
      'detail',
      'code',
    ]);
    expect(second.components.responses.Unauthorized?.headers?.['WWW-Authenticate']).toBeDefined();
  });

  it('copies info and servers', () => {
    const document = generateOpenApi({
      app: notesApp(),
      info: { ...info, description: 'Notes, documented' },
      servers: [{ url: 'https://notes.example', description: 'Production' }],
    });
    expect(document.info.description).toBe('Notes, documented');
    expect(document.servers).toEqual([{ url: 'https://notes.example', description: 'Production' }]);
    expect(notesDocument().servers).toEqual([
      { url: '/', description: 'The server this document was loaded from' },
    ]);
  });
});

describe('generateOpenApi on small fixtures', () => {
  const posts = procedures('posts', {
    list: p()
      .meta({ summary: 'List posts', description: 'Newest first.', deprecated: true })
      .query(() => []),
    create: p()
      .guard(authenticated)
      .input(z.object({ title: z.string().max(200) }))
      .mutation(() => ({ id: '1' })),
    publish: p()
      .guard(authenticated, editor)
      .rest({ method: 'POST', path: '/posts/:id/publish' })
      .input(z.object({ id: z.uuid() }))
      .mutation(() => ({ id: '1' })),
  });
  const users = procedures('users', { list: p().query(() => []) });

  it('copies summary, description and deprecation from the meta', () => {
    const document = generateOpenApi({ mounts: [{ prefix: '/api', collections: [posts] }], info });
    expect(operation(document, '/api/posts', 'get')).toMatchObject({
      summary: 'List posts',
      description: 'Newest first.',
      deprecated: true,
    });
    const create = operation(document, '/api/posts', 'post');
    expect(create.deprecated).toBeUndefined();
    // Without .meta({ summary }), the procedure's name in words.
    expect(create.summary).toBe('Create');
    expect(create.requestBody?.content['application/json']?.schema).toMatchObject({
      properties: { title: { type: 'string', maxLength: 200 } },
    });
  });

  it('copies .describe() texts into query parameters and bodies', () => {
    const search = procedures('search', {
      listResults: p()
        .input(z.object({ q: z.string().describe('Words to look for') }))
        .query(() => []),
    });
    const document = generateOpenApi({ mounts: [{ prefix: '/api', collections: [search] }], info });
    expect(param(operation(document, '/api/search', 'get'), 'q').description).toBe('Words to look for');
  });

  it('describes tags given in the options, refuses a tag no collection has, and passes info through', () => {
    const document = generateOpenApi({
      mounts: [{ prefix: '/api', collections: [posts] }],
      info: { ...info, license: { name: 'MIT', identifier: 'MIT' }, contact: { email: 'api@example.com' } },
      tags: { posts: 'Posts and their moves' },
    });
    expect(document.tags).toContainEqual({ name: 'posts', description: 'Posts and their moves' });
    expect(document.info.license).toEqual({ name: 'MIT', identifier: 'MIT' });
    expect(() =>
      generateOpenApi({ mounts: [{ prefix: '/api', collections: [posts] }], info, tags: { post: 'typo' } }),
    ).toThrow(/openapi\.tags names "post", which no documented collection has \(tags: posts, health\)/);
  });

  it('documents 401 for an authenticated guard and 403 only for guards that can deny a signed-in user', () => {
    const document = generateOpenApi({ mounts: [{ prefix: '/api', collections: [posts] }], info });
    const create = operation(document, '/api/posts', 'post');
    expect(statuses(create)).toEqual([
      '201',
      '400',
      '401',
      '408',
      '409',
      '412',
      '413',
      '415',
      '431',
      '500',
      '503',
    ]);
    expect(create.security).toEqual([{ bearerAuth: [] }]);
    const publish = operation(document, '/api/posts/{id}/publish', 'post');
    expect(statuses(publish)).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '408',
      '409',
      '412',
      '413',
      '415',
      '431',
      '500',
      '503',
    ]);
    expect(param(publish, 'id').schema).toMatchObject({ type: 'string', format: 'uuid' });
    expect(operation(document, '/api/posts', 'get').security).toEqual([]);
  });

  it('documents 429 and the X-RateLimit headers on routes with a rateLimit step, and nowhere else', () => {
    const limit = rateLimit({ name: 'writes', max: 5 });
    const limited = procedures('drafts', {
      createDraft: p()
        .use(limit)
        .mutation(() => ({ id: '1' })),
      listDrafts: p().query(() => []),
    });
    const document = generateOpenApi({ mounts: [{ prefix: '/api', collections: [limited] }], info });
    const create = operation(document, '/api/drafts', 'post');
    expect(create.responses['429']).toEqual({
      $ref: '#/components/responses/TooManyRequestsOnLimitedRoute',
    });
    const created = create.responses['201'] as { headers?: Record<string, unknown> };
    expect(Object.keys(created.headers ?? {})).toEqual(
      expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']),
    );
    expect(operation(document, '/api/drafts', 'get').responses['429']).toBeUndefined();
    expect(operation(document, '/api/health', 'get').responses['429']).toBeUndefined();
    expect(
      document.components.responses.TooManyRequestsOnLimitedRoute?.headers?.['Retry-After'],
    ).toBeDefined();
  });

  it('documents a rule per key by its 429 and Retry-After alone: its answers carry no X-RateLimit headers', () => {
    const perAccount = rateLimit<unknown, { email: string }>({
      name: 'per-account',
      max: 5,
      key: ({ input }) => input.email,
    });
    const keyed = procedures('sessions', {
      createSession: p()
        .use(perAccount)
        .input(z.object({ email: z.string() }))
        .mutation(() => ({ id: '1' })),
    });
    const document = generateOpenApi({ mounts: [{ prefix: '/api', collections: [keyed] }], info });
    const create = operation(document, '/api/sessions', 'post');
    expect(create.responses['429']).toEqual({ $ref: '#/components/responses/TooManyRequests' });
    expect(Object.keys((create.responses['201'] as { headers?: object }).headers ?? {})).not.toContain(
      'X-RateLimit-Limit',
    );
    expect(document.components.responses.TooManyRequests?.headers?.['Retry-After']).toBeDefined();
  });

  it('reads 401 vs 403 from the guards’ failsWith, not their names', () => {
    const signedIn = guard({
      name: 'signed in',
      requiresUser: true,
      failsWith: 'UNAUTHENTICATED',
      check: () => true,
    });
    const named = guard({ name: 'authenticated', requiresUser: true, check: () => true });
    const guarded = procedures('gates', {
      listGates: p()
        .guard(signedIn)
        .query(() => []),
      getGate: p()
        .guard(named)
        .input(z.object({ id: z.string() }))
        .query(() => ({})),
    });
    const document = generateOpenApi({ mounts: [{ prefix: '/api', collections: [guarded] }], info });
    expect(statuses(operation(document, '/api/gates', 'get'))).toEqual([
      '200',
      '400',
      '401',
      '431',
      '500',
      '503',
    ]);
    expect(statuses(operation(document, '/api/gates/{id}', 'get'))).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '431',
      '500',
      '503',
    ]);
  });

  it('documents what a step says it answers', () => {
    const tenant = step({ name: 'tenant', documents: { problems: ['UNAVAILABLE'] } });
    const scoped = procedures('scoped', {
      listScoped: p()
        .use(tenant)
        .query(() => []),
    });
    const document = generateOpenApi({ mounts: [{ prefix: '/api', collections: [scoped] }], info });
    expect(statuses(operation(document, '/api/scoped', 'get'))).toEqual(['200', '400', '431', '500', '503']);
  });

  it('qualifies operationIds that would collide', async () => {
    const document = generateOpenApi({ mounts: [{ prefix: '/api', collections: [posts, users] }], info });
    expect(operation(document, '/api/posts', 'get').operationId).toBe('posts.list');
    expect(operation(document, '/api/users', 'get').operationId).toBe('users.list');
    expect(operation(document, '/api/posts', 'post').operationId).toBe('create');
    const versions = generateOpenApi({
      mounts: [
        { prefix: '/api/v1', collections: [posts] },
        { prefix: '/api/v2', collections: [posts] },
      ],
      info,
    });
    expect(operation(versions, '/api/v1/posts', 'get').operationId).toBe('api.v1.posts.list');
    expect(operation(versions, '/api/v2/posts', 'post').operationId).toBe('api.v2.posts.create');
    expect(operation(versions, '/api/v2/health', 'get').operationId).toBe('api.v2.health');
    await expect(SwaggerParser.validate(structuredClone(versions) as never)).resolves.toBeDefined();
  });

  it('throws a clear error when two different schemas claim the same id', () => {
    const First = resource('Item', { public: { id: z.string() } });
    const Second = resource('Item', { public: { id: z.number() } });
    const items = procedures('items', {
      getItem: p()
        .input(z.object({ id: z.string() }))
        .output(First.public)
        .query(() => ({ id: '1' })),
      listItems: p()
        .output(z.array(Second.public))
        .query(() => []),
    });
    expect(() => generateOpenApi({ mounts: [{ prefix: '/api', collections: [items] }], info })).toThrow(
      /Two different schemas are registered under the id "ItemPublic" \(one in procedure "items\.getItem", another in procedure "items\.listItems"\)/,
    );
  });

  it('lifts shared recursive schemas into named components', async () => {
    interface Category {
      name: string;
      children: Category[];
    }
    const Category: z.ZodType<Category> = z.lazy(() =>
      z.object({ name: z.string(), children: z.array(Category) }),
    );
    const tree = procedures('tree', {
      getTree: p()
        .input(z.object({ id: z.string() }))
        .output(z.object({ root: Category }))
        .query(() => ({ root: { name: 'a', children: [] } })),
      createTree: p()
        .input(z.object({ root: Category }))
        .mutation(() => undefined),
    });
    const document = generateOpenApi({ mounts: [{ prefix: '/api', collections: [tree] }], info });
    expect(successSchema(operation(document, '/api/tree/{id}', 'get'))).toEqual({
      type: 'object',
      properties: { root: { $ref: '#/components/schemas/TreeGetTreeOutput1' } },
      required: ['root'],
      additionalProperties: false,
    });
    expect(document.components.schemas.TreeGetTreeOutput1).toMatchObject({
      properties: { children: { items: { $ref: '#/components/schemas/TreeGetTreeOutput1' } } },
    });
    const body = operation(document, '/api/tree', 'post').requestBody?.content['application/json']?.schema;
    expect(body?.properties).toEqual({ root: { $ref: '#/components/schemas/TreeCreateTreeInput1' } });
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
  });

  it('documents a health route per prefix, even without procedures of its own', () => {
    const document = generateOpenApi({ mounts: [{ prefix: '/', collections: [users] }], info });
    expect(Object.keys(document.paths)).toEqual(['/users', '/health', '/health/live']);
    const health = operation(document, '/health', 'get');
    expect(successSchema(health)).toMatchObject({ properties: { status: { enum: ['ok', 'degraded'] } } });
    expect((health.responses['503'] as Reference).$ref).toBe('#/components/responses/ServiceUnavailable');
    expect(document.components?.responses?.ServiceUnavailable).toMatchObject({
      headers: { 'Retry-After': { schema: { type: 'integer', minimum: 0 } } },
    });
    expect(successSchema(operation(document, '/health/live', 'get'))).toMatchObject({
      properties: { status: { type: 'string', const: 'ok' } },
    });
  });
});

describe('problems declared by plugins and procedures', () => {
  const things = procedures('things', {
    listThings: procedure().query(() => []),
    signIn: procedure()
      .rest({ method: 'POST', path: '/things/sign-in' })
      .meta({ errors: ['UNAUTHENTICATED', 'FORBIDDEN'] })
      .mutation(() => null),
    deleteThing: procedure()
      .guard(guard({ name: 'admin', requiresUser: true, check: () => false }))
      .mutation(() => undefined),
  });
  const info = { title: 'Things', version: '1' };
  const responsesOf = (document: OpenApiDocument, path: string, method: 'get' | 'post' | 'delete') =>
    Object.keys(document.paths[path]?.[method]?.responses ?? {});

  it('documents the codes a procedure declares in its meta', () => {
    const document = generateOpenApi({ mounts: [{ prefix: '/api', collections: [things] }], info });
    expect(responsesOf(document, '/api/things/sign-in', 'post')).toEqual(
      expect.arrayContaining(['401', '403']),
    );
  });

  it('adds what a plugin documents to every procedure route, and makes the bearer optional on open ones', () => {
    const routeTable = new RouteTable();
    routeTable.mount([things], '/api');
    routeTable.document({ problems: ['INVALID_TOKEN'], bearer: 'optional' });
    routeTable.document((route) => (route.name === 'signIn' ? { problems: ['RATE_LIMITED'] } : undefined));
    const document = generateOpenApi({ app: { routeTable }, info });
    expect(responsesOf(document, '/api/things', 'get')).toEqual(['200', '400', '401', '431', '500', '503']);
    expect(document.paths['/api/things']?.get?.security).toEqual([{ bearerAuth: [] }, {}]);
    expect(document.paths['/api/things/{id}']?.delete?.security).toEqual([{ bearerAuth: [] }]);
    expect(responsesOf(document, '/api/things/sign-in', 'post')).toContain('429');
    expect(responsesOf(document, '/api/things', 'get')).not.toContain('429');
    expect(responsesOf(document, '/api/health', 'get')).toEqual(['200', '431', '503']);
  });

  it('documents an app’s own error codes in the routes that declare them, the Problem schema and its status response', async () => {
    const appErrors = defineErrors({
      INVALID_TRANSITION: { status: 409, title: 'Invalid state transition' },
      OUT_OF_STOCK: { status: 422, title: 'Out of stock' },
    });
    const orders = procedures('orders', {
      createOrder: procedure()
        .meta({ errors: [appErrors.OUT_OF_STOCK, appErrors.INVALID_TRANSITION] })
        .mutation(() => ({ id: '1' })),
    });
    const document = generateOpenApi({ mounts: [{ prefix: '/api', collections: [orders] }], info });
    expect(responsesOf(document, '/api/orders', 'post')).toEqual(expect.arrayContaining(['409', '422']));
    const problem = document.components.schemas.Problem as { properties: { code: { enum: string[] } } };
    expect(problem.properties.code.enum).toEqual(
      expect.arrayContaining(['OUT_OF_STOCK', 'INVALID_TRANSITION']),
    );
    const conflict = JSON.stringify(document.components.responses.Conflict);
    expect(conflict).toContain('INVALID_TRANSITION');
    expect(conflict).toContain('CONFLICT');
    expect(document.components.responses.UnprocessableEntity).toBeDefined();
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
  });

  it('reads what plugins documented from the app', async () => {
    const app = notesApp();
    app.document({ problems: ['INVALID_TOKEN'] });
    const document = generateOpenApi({ app, info });
    expect(responsesOf(document, '/api/notes', 'get')).toContain('401');
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
  });
});

describe('generateOpenApi on a file answer', () => {
  const files = procedures('reports', {
    getReport: procedure()
      .input(z.object({ id: z.string() }))
      .output(download({ types: ['application/pdf', 'text/csv'] }))
      .query(() => sendFile(new Uint8Array(1), { type: 'application/pdf' })),
    exportReport: procedure()
      .rest({ method: 'POST', path: '/reports/:id/export' })
      .input(z.object({ id: z.string() }))
      .output(download())
      .mutation(() => sendFile(new Uint8Array(1), { type: 'application/zip' })),
  });
  const document = generateOpenApi({ mounts: [{ prefix: '/api', collections: [files] }], info });

  it('is valid OpenAPI 3.1 with binary bodies of the declared types, 206 and 304 on a read, 416 as a problem', async () => {
    await SwaggerParser.validate(structuredClone(document) as never);
    const read = operation(document, '/api/reports/{id}', 'get');
    const ok = read.responses['200'] as { content: Record<string, { schema: JsonSchema }>; headers: object };
    expect(ok.content).toEqual({
      'application/pdf': {
        schema: { type: 'string', format: 'binary', contentMediaType: 'application/pdf' },
      },
      'text/csv': { schema: { type: 'string', format: 'binary', contentMediaType: 'text/csv' } },
    });
    expect(Object.keys(ok.headers)).toEqual(
      expect.arrayContaining(['Content-Disposition', 'ETag', 'Last-Modified', 'Accept-Ranges']),
    );
    expect(read.responses['206']).toMatchObject({ headers: { 'Content-Range': expect.any(Object) } });
    expect(read.responses['304']).toBeDefined();
    expect(read.responses['416']).toBeDefined();
    expect(read.responses['412']).toBeDefined();
    expect(read.parameters?.map((each) => each.name)).toEqual(
      expect.arrayContaining([
        'Range',
        'If-Range',
        'If-None-Match',
        'If-Modified-Since',
        'If-Match',
        'If-Unmodified-Since',
      ]),
    );
    const write = operation(document, '/api/reports/{id}/export', 'post');
    expect((write.responses['200'] as { content: object }).content).toEqual({
      '*/*': { schema: { type: 'string', format: 'binary' } },
    });
    expect(write.responses['206']).toBeUndefined();
    expect(write.responses['416']).toBeUndefined();
  });
});

describe('generateOpenApi on an event stream', () => {
  const Tick = z.object({ n: z.number() });
  const feed = procedures('ticks', {
    tickEvents: procedure()
      .rest({ method: 'GET', path: '/ticks/events' })
      .output(eventStream(Tick))
      .query(async function* () {
        yield { n: 1 };
      }),
  });
  const document = generateOpenApi({ mounts: [{ prefix: '/api', collections: [feed] }], info });

  it('documents text/event-stream with the schema of each event’s data, and Last-Event-ID', async () => {
    await SwaggerParser.validate(structuredClone(document) as never);
    const read = operation(document, '/api/ticks/events', 'get');
    const ok = read.responses['200'] as unknown as { content: Record<string, Record<string, unknown>> };
    expect(Object.keys(ok.content)).toEqual(['text/event-stream']);
    expect(ok.content['text/event-stream']?.schema).toEqual({ type: 'string' });
    expect(ok.content['text/event-stream']?.['x-proceed-event-data']).toMatchObject({
      type: 'object',
      properties: { n: { type: 'number' } },
    });
    expect(param(read, 'Last-Event-ID').in).toBe('header');
    expect(read.responses['304']).toBeUndefined();
  });
});

describe('a document without a bearer route', () => {
  it('has no bearerAuth scheme, and says each operation takes no credentials', () => {
    const routeTable = new RouteTable();
    routeTable.mount([procedures('notes', { listNotes: procedure().query(() => []) })], '/api');
    const document = generateOpenApi({ app: { routeTable }, info: { title: 'Notes', version: '1' } });
    expect(document.components.securitySchemes).toEqual({});
    expect(operation(document, '/api/notes', 'get').security).toEqual([]);
  });
});

describe('summaryOfName', () => {
  it('puts a procedure name in words, a run of capitals kept as one', () => {
    expect(
      ['listPosts', 'getPostBySlug', 'create', 'getURL', 'exportCSVReport', 'getPost2fa'].map(summaryOfName),
    ).toEqual(['List posts', 'Get post by slug', 'Create', 'Get URL', 'Export CSV report', 'Get post2fa']);
  });
});
