/**
 * The blog's OpenAPI document (docs/openapi.md). Every other suite already validates each answer it
 * receives against this document (harness.ts); this one checks the document itself.
 */

import SwaggerParser from '@apidevtools/swagger-parser';
import { createResponseValidator, exampleErrors, type OpenApiDocument } from 'proceedjs/openapi';
import { describe, expect, it } from 'vitest';
import { createBlogApp } from '../src/app.js';
import { connect, engines, useBlog } from './harness.js';
import { inProcess } from './in-process.js';

const [pglite] = engines();
if (pglite === undefined) throw new Error('No PGlite engine');

const operations = (document: OpenApiDocument) =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(
      item as Record<
        string,
        { operationId: string; tags: string[]; security?: unknown; responses: Record<string, unknown> }
      >,
    ).map(([method, operation]) => ({ method: method.toUpperCase(), path, ...operation })),
  );

const guarded = [
  'logout',
  'me',
  'listUsers',
  'createUser',
  'updateUser',
  'deleteUser',
  'createPost',
  'updatePost',
  'deletePost',
  'publishPost',
  'archivePost',
  'createAttachment',
];

describe('the blog’s OpenAPI document', () => {
  const blog = useBlog(pglite);
  const document = () => blog.instance.document;

  // What makes one run of openapi-tools.test.ts (on Node) stand for every runtime. On Bun and
  // Deno the blog runs from dist/ and this side from src/: run `npm run build` after a change
  // (npm test does), or a stale build shows as two documents.
  it('is the document the same app serves in a Node process, inspected as the CLI reads it', async () => {
    const app = await createBlogApp({ ...blog.instance.settings, inspect: true });
    try {
      const served = await inProcess(app, { method: 'GET', url: '/api/docs/json' });
      expect(served.statusCode).toBe(200);
      expect(document()).toEqual(served.json());
    } finally {
      await app.close();
    }
  });

  it('validates with a standard OpenAPI validator', async () => {
    expect(document().openapi).toMatch(/^3\.1\./);
    await expect(SwaggerParser.validate(structuredClone(document()) as never)).resolves.toBeDefined();
  });

  it('names the API and documents every route under its procedure name and collection', () => {
    expect(document().info).toMatchObject({ title: 'Proceed blog API', version: '1.0.0' });
    // The health routes (readiness and liveness) are the app's own, not a procedure's.
    const isHealth = (op: { path: string }) => op.path.startsWith('/api/health');
    const health = operations(document()).filter(isHealth);
    expect(health.map((op) => `${op.method} ${op.path} ${op.operationId}`)).toEqual([
      'GET /api/health health',
      'GET /api/health/live healthLive',
    ]);
    const documented = operations(document())
      .filter((op) => !isHealth(op))
      .map((op) => `${op.method} ${op.path} ${op.operationId} ${op.tags.join()}`);
    expect(documented.sort()).toEqual(
      [
        'POST /api/auth/register register auth',
        'POST /api/auth/login login auth',
        'POST /api/auth/refresh refresh auth',
        'POST /api/auth/logout logout auth',
        'GET /api/auth/me me auth',
        'POST /api/auth/forgot-password forgotPassword auth',
        'POST /api/auth/reset-password resetPassword auth',
        'GET /api/users listUsers users',
        'POST /api/users createUser users',
        'GET /api/users/{id} getUser users',
        'PUT /api/users/{id} updateUser users',
        'DELETE /api/users/{id} deleteUser users',
        'GET /api/posts listPosts posts',
        'GET /api/posts/live livePosts posts',
        'GET /api/posts/events postEvents posts',
        'POST /api/posts createPost posts',
        'GET /api/posts/{id} getPost posts',
        'PUT /api/posts/{id} updatePost posts',
        'DELETE /api/posts/{id} deletePost posts',
        'POST /api/posts/{id}/publish publishPost posts',
        'POST /api/posts/{id}/archive archivePost posts',
        'POST /api/posts/{id}/attachments createAttachment posts',
        'GET /api/posts/{id}/attachments/{attachmentId} getAttachment posts',
      ].sort(),
    );
  });

  it('requires bearerAuth on exactly the guarded routes, naming the roles they need; elsewhere a token is optional', () => {
    expect(document().components.securitySchemes).toMatchObject({
      bearerAuth: { type: 'http', scheme: 'bearer' },
    });
    // The roles of its role guards (`admin`), as OpenAPI 3.1's role names; selfOrAdmin is no role.
    const roles: Record<string, string[]> = {
      listUsers: ['admin'],
      createUser: ['admin'],
      deleteUser: ['admin'],
    };
    for (const op of operations(document())) {
      if (guarded.includes(op.operationId))
        expect(op.security, op.operationId).toEqual([{ bearerAuth: roles[op.operationId] ?? [] }]);
      // No token is read there at all: an explicit empty requirement, not an inherited one.
      else if (op.operationId === 'health' || op.operationId === 'healthLive')
        expect(op.security, op.operationId).toEqual([]);
      else expect(op.security, op.operationId).toEqual([{ bearerAuth: [] }, {}]);
    }
  });

  it('answers each route with the component of the view it returns', () => {
    const schemaOf = (path: string, method: string, status: string) =>
      JSON.stringify(
        (document().paths[path] as Record<string, { responses: Record<string, unknown> }>)[method]?.responses[
          status
        ],
      );
    expect(schemaOf('/api/users/{id}', 'get', '200')).toContain('#/components/schemas/UserPublic');
    expect(schemaOf('/api/users/{id}', 'put', '200')).toContain('#/components/schemas/UserAuthenticated');
    expect(schemaOf('/api/users', 'get', '200')).toContain('#/components/schemas/UserAdmin');
    expect(schemaOf('/api/users', 'post', '201')).toContain('#/components/schemas/UserAdmin');
    expect(schemaOf('/api/auth/me', 'get', '200')).toContain('#/components/schemas/UserAuthenticated');
    expect(schemaOf('/api/posts', 'get', '200')).toContain('#/components/schemas/PostPublic');
    expect(schemaOf('/api/posts/{id}', 'get', '200')).toContain('#/components/schemas/PostPublic');
    expect(schemaOf('/api/posts/{id}', 'put', '200')).toContain('#/components/schemas/PostAuthenticated');
    expect(schemaOf('/api/posts/{id}/publish', 'post', '200')).toContain(
      '#/components/schemas/PostAuthenticated',
    );
    const schemas = document().components.schemas as Record<string, { properties?: object }>;
    expect(Object.keys(schemas.UserPublic?.properties ?? {}).sort()).toEqual(['id', 'name']);
    expect(Object.keys(schemas.PostPublic?.properties ?? {}).sort()).toEqual(['excerpt', 'id', 'title']);
    expect(JSON.stringify(schemas)).not.toMatch(/passwordHash|password_hash/);
  });

  it('refuses an empty update body in the document, as the server does, and types the ignored id', () => {
    for (const path of ['/api/posts/{id}', '/api/users/{id}']) {
      type Body = { content: Record<string, { schema: Record<string, unknown> }> };
      const put = (document().paths[path] as Record<string, { requestBody?: Body }>).put;
      const schema = put?.requestBody?.content['application/json']?.schema;
      expect(schema?.minProperties, path).toBe(1);
      const properties = schema?.properties as Record<string, { type?: string }> | undefined;
      expect(properties?.id?.type, path).toBe('string');
    }
  });

  it('gives bodies, answers and path parameters examples their schemas accept, the blog’s own where it wrote one', () => {
    expect(exampleErrors(document())).toEqual([]);
    type Media = { example?: Record<string, unknown> };
    type Operation = {
      parameters?: { name: string; in: string; example?: unknown; description?: string }[];
      requestBody?: { content: Record<string, Media> };
      responses: Record<string, { content?: Record<string, Media>; headers?: Record<string, unknown> }>;
    };
    const op = (path: string, method: string) =>
      (document().paths[path] as Record<string, Operation>)[method] as Operation;
    const id = op('/api/posts/{id}', 'get').parameters?.find((parameter) => parameter.in === 'path');
    expect(id).toMatchObject({
      description: 'The `id` of the posts record',
      example: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
    });
    // `.meta({ examples })` in resources.ts wins over the first enum value.
    expect(op('/api/auth/me', 'get').responses['200']?.content?.['application/json']?.example?.role).toBe(
      'user',
    );
    const created = op('/api/posts', 'post').responses['201'];
    expect(created?.content?.['application/json']?.example?.status).toBe('published');
    expect(created?.headers?.Location).toMatchObject({ required: true });
    expect(op('/api/auth/register', 'post').requestBody?.content['application/json']?.example).toEqual({
      email: 'ada@example.com',
      password: 'correct-horse-battery',
      name: 'Ada Lovelace',
    });
    // The ignored `id` of an update body is left out of its example.
    expect(op('/api/posts/{id}', 'put').requestBody?.content['application/json']?.example).not.toHaveProperty(
      'id',
    );
  });

  it('documents attachments: a form of one file part, and a file answer with its range and 304 answers', () => {
    type Operation = {
      requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
      responses: Record<string, { content?: Record<string, unknown> }>;
    };
    const paths = document().paths as Record<string, Record<string, Operation>>;
    const upload = paths['/api/posts/{id}/attachments']?.post;
    expect(Object.keys(upload?.requestBody?.content ?? {})).toEqual(['multipart/form-data']);
    const form = upload?.requestBody?.content['multipart/form-data']?.schema;
    expect(form).toMatchObject({
      properties: { file: { type: 'string', format: 'binary', description: 'At most 10485760 bytes.' } },
      required: ['file'],
    });
    expect(Object.keys((form?.properties as object | undefined) ?? {})).toEqual(['file']);
    expect(Object.keys(upload?.responses ?? {})).toEqual(
      expect.arrayContaining(['201', '403', '404', '413', '415']),
    );
    const download = paths['/api/posts/{id}/attachments/{attachmentId}']?.get;
    expect(Object.keys(download?.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '206', '304', '404', '416']),
    );
    expect(Object.keys(download?.responses['200']?.content ?? {})).toEqual(['*/*']);
  });

  it('has a validator that catches an answer above its view (the harness can fail)', () => {
    const check = createResponseValidator(document());
    const id = crypto.randomUUID();
    expect(check('GET', `/api/users/${id}`, 200, 'application/json', { id, name: 'A' })).toEqual([]);
    expect(
      check('GET', `/api/users/${id}`, 200, 'application/json', { id, name: 'A', email: 'a@b.co' }),
    ).not.toEqual([]);
    expect(check('GET', '/api/posts', 200, 'application/json', { data: [] })).not.toEqual([]);
    expect(check('GET', '/api/posts', 418, 'application/json', {})).not.toEqual([]);
  });

  it('documents the 401 every procedure route answers to a bad token, and an optional bearer on public ones', () => {
    const procedures = operations(document()).filter((op) => !op.path.startsWith('/api/health'));
    expect(procedures.filter((op) => op.responses['401'] === undefined).map((op) => op.operationId)).toEqual(
      [],
    );
    const listPosts = procedures.find((op) => op.operationId === 'listPosts');
    expect(listPosts?.security).toEqual([{ bearerAuth: [] }, {}]);
  });

  it('documents the problems a handler declares: login’s 403 for a deactivated account', () => {
    const login = operations(document()).find((op) => op.operationId === 'login');
    expect(login?.responses['403']).toBeDefined();
  });

  it('documents the blog’s own INVALID_TRANSITION where a post can move, like a built-in code', () => {
    const moving = operations(document())
      .filter((op) => JSON.stringify(op.responses['409']) !== undefined && op.operationId !== undefined)
      .map((op) => op.operationId);
    expect(moving).toEqual(expect.arrayContaining(['updatePost', 'publishPost', 'archivePost']));
    const conflict = JSON.stringify(document().components.responses.Conflict);
    expect(conflict).toContain('INVALID_TRANSITION');
    const problem = document().components.schemas.Problem as { properties: { code: { enum: string[] } } };
    expect(problem.properties.code.enum).toContain('INVALID_TRANSITION');
  });

  it('documents the 429 of each route with the rateLimit step, and its X-RateLimit headers', () => {
    const limited = operations(document())
      .filter((op) => op.responses['429'] !== undefined)
      .map((op) => op.operationId)
      .sort();
    // And the live socket's handshake: a client holding its most sockets (maxSocketsPerClient).
    expect(limited).toEqual(['forgotPassword', 'livePosts', 'login', 'refresh', 'register']);
    const login = operations(document()).find((op) => op.operationId === 'login');
    const success = login?.responses['200'] as { headers?: Record<string, unknown> } | undefined;
    expect(Object.keys(success?.headers ?? {})).toContain('X-RateLimit-Remaining');
  });

  it('accepts a bad token’s 401 on a public route as documented', async () => {
    const client = await connect(blog.origin);
    const reply = await client.request('GET', '/api/posts', { token: 'abc' });
    expect(reply.status).toBe(401);
  });
});
