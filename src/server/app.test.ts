import { request as httpRequest } from 'node:http';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { notes, notesApp } from '../../test/fixtures/notes.js';
import { outageWarning, unwrappedOutageApp } from '../../test/fixtures/unwrapped-outage.js';
import { eventually } from '../../test/processes.js';
import { ProceedConfigError } from '../core/errors.js';
import { eventStream, serverEvent } from '../core/events.js';
import { download, sendFile } from '../core/files.js';
import { procedure, procedures } from '../core/procedure.js';
import { webSocket } from '../core/sockets.js';
import { cursorInput, cursorPage } from '../pagination/index.js';
import { resource } from '../resource/index.js';
import type { Answer, App } from './app.js';
import { createApp } from './create-app.js';

const problemType = 'application/problem+json; charset=utf-8';

async function call(
  app: App,
  method: string,
  url: string,
  payload?: unknown,
  headers?: Record<string, string>,
) {
  const response = await app.inject({
    method: method as 'GET',
    url,
    ...(payload === undefined ? {} : { payload: payload as string }),
    ...(headers === undefined ? {} : { headers }),
  });
  return {
    status: response.statusCode,
    headers: response.headers,
    json: () => response.json(),
    body: response.body,
  };
}

describe('routes from names', () => {
  it('registers one route per procedure under /api', () => {
    const app = notesApp();
    expect(app.routes.map((route) => `${route.method} ${route.path}`)).toEqual([
      'GET /api/notes',
      'GET /api/notes/:id',
      'POST /api/notes',
      'PUT /api/notes/:id',
      'DELETE /api/notes/:id',
      'POST /api/notes/:id/pin',
      'GET /api/notes-broken',
    ]);
  });

  it('mounts under another prefix', async () => {
    const app = createApp({
      logger: false,
      userFromContext: true,
      context: () => ({ notes: new Map() }),
    }).mount([notes], {
      prefix: '/api/v1',
    });
    expect((await call(app, 'GET', '/api/v1/notes')).status).toBe(200);
    expect((await call(app, 'GET', '/api/v1/health')).json()).toEqual({ status: 'ok' });
    expect((await call(app, 'GET', '/api/notes')).status).toBe(404);
  });
});

describe('start-up errors', () => {
  const p = procedure();
  it('names a procedure without a known prefix', () => {
    const bad = procedures('posts', { publishPost: p.mutation(() => null) });
    expect(() => createApp({ logger: false }).mount([bad])).toThrow(
      /"posts.publishPost" has no conventional prefix/,
    );
  });

  it('names a procedure whose prefix contradicts its kind', () => {
    const bad = procedures('posts', { getPost: p.mutation(() => null) });
    expect(() => createApp({ logger: false }).mount([bad])).toThrow(
      /"posts.getPost" is declared as a mutation, but its "get" prefix means a query/,
    );
  });

  it('names both procedures that map to one method and path', () => {
    const bad = procedures('posts', {
      getPost: p.query(() => null),
      findPost: p.rest({ method: 'GET', path: '/posts/:slug' }).query(() => null),
    });
    expect(() => createApp({ logger: false }).mount([bad])).toThrow(
      new ProceedConfigError(
        'Procedures "posts.getPost" (GET /api/posts/:id) and "posts.findPost" (GET /api/posts/:slug) map to one route: a path parameter matches any segment, whatever its name',
      ),
    );
  });

  it('refuses a path parameter its input does not name: the value would be dropped unseen', () => {
    const closing = procedures('tasks', {
      closeTask: p
        .rest({ method: 'POST', path: '/tasks/:taskId/close' })
        .input(z.object({ id: z.string() }))
        .mutation(({ input }) => input),
    });
    expect(() => createApp({ logger: false }).mount([closing])).toThrow(
      /^tasks\.closeTask: its path names the parameter "taskId", which its input does not: the validator would drop the path's value/,
    );
    // A query input, the same; an input that takes any key, or names the parameter, passes.
    const reading = procedures('tasks', {
      getTask: p
        .rest({ method: 'GET', path: '/tasks/:slug' })
        .input(z.object({ id: z.string() }))
        .query(() => null),
    });
    expect(() => createApp({ logger: false }).mount([reading])).toThrow(/names the parameter "slug"/);
    const fine = procedures('tasks', {
      closeTask: p
        .rest({ method: 'POST', path: '/tasks/:taskId/close' })
        .input(z.object({ taskId: z.string() }))
        .mutation(({ input }) => input),
      reopenTask: p
        .rest({ method: 'POST', path: '/tasks/:taskId/reopen' })
        .input(z.looseObject({}))
        .mutation(({ input }) => input),
    });
    expect(() => createApp({ logger: false }).mount([fine])).not.toThrow();
  });

  it('refuses z.coerce in a query input (it coerces loosely what Proceed would refuse), not in a JSON body', () => {
    const loose = procedures('tasks', {
      listTasks: p.input(z.object({ done: z.coerce.boolean().optional() })).query(() => []),
    });
    expect(() => createApp({ logger: false }).mount([loose])).toThrow(
      /tasks\.listTasks takes its input from the query string and its field "done" is z\.coerce\.boolean\(\).*use z\.boolean\(\)/,
    );
    const inArray = procedures('tasks', {
      listTasks: p.input(z.object({ ids: z.array(z.coerce.number()).default([]) })).query(() => []),
    });
    expect(() => createApp({ logger: false }).mount([inArray])).toThrow(
      /field "ids" is z\.coerce\.number\(\)/,
    );
    const form = procedures('tasks', {
      createTask: p
        .input(z.object({ file: z.file(), pages: z.coerce.number() }))
        .mutation(({ input }) => ({ pages: input.pages })),
    });
    expect(() => createApp({ logger: false }).mount([form])).toThrow(
      /tasks\.createTask takes its input from a form and its field "pages" is z\.coerce\.number\(\)/,
    );
    // A body route's path parameter is text coerced as a query's is, through a pipe too.
    const path = procedures('tasks', {
      pinTask: p
        .rest({ method: 'POST', path: '/tasks/:id/pin' })
        .input(z.object({ id: z.coerce.number().pipe(z.int()) }))
        .mutation(({ input }) => input),
    });
    expect(() => createApp({ logger: false }).mount([path])).toThrow(
      /tasks\.pinTask takes its input from its path and its field "id" is z\.coerce\.number\(\)/,
    );
    // In a union's option, or a field's union, the same.
    const inOption = procedures('tasks', {
      listTasks: p
        .input(
          z.discriminatedUnion('kind', [
            z.object({ kind: z.literal('task'), done: z.coerce.boolean() }),
            z.object({ kind: z.literal('note') }),
          ]),
        )
        .query(() => []),
    });
    expect(() => createApp({ logger: false }).mount([inOption])).toThrow(
      /field "done" is z\.coerce\.boolean\(\)/,
    );
    const inField = procedures('tasks', {
      listTasks: p.input(z.object({ limit: z.coerce.number().or(z.literal('all')) })).query(() => []),
    });
    expect(() => createApp({ logger: false }).mount([inField])).toThrow(
      /field "limit" is z\.coerce\.number\(\)/,
    );
    // Where Proceed reads the field as text (a date in a union, a pipe from a string), z.coerce
    // is the schema's own conversion; what Proceed does not coerce (a bigint) may be z.coerce's.
    const asText = procedures('tasks', {
      listTasks: p
        .input(
          z.object({
            since: z.union([z.coerce.date(), z.literal('now')]).optional(),
            page: z.string().pipe(z.coerce.number()).optional(),
          }),
        )
        .query(() => []),
    });
    expect(() => createApp({ logger: false }).mount([asText])).not.toThrow();
    const big = procedures('tasks', {
      listTasks: p.input(z.object({ after: z.coerce.bigint().optional() })).query(() => []),
    });
    expect(() => createApp({ logger: false }).mount([big])).not.toThrow();
    const body = procedures('tasks', {
      createTask: p.input(z.object({ count: z.coerce.number() })).mutation(({ input }) => input),
      getTask: p.input(z.object({ id: z.coerce.string() })).query(({ input }) => input),
    });
    expect(() => createApp({ logger: false }).mount([body])).not.toThrow();
  });

  it('refuses an input no query string or JSON body can be: an array, a string (a raw file and unions of objects are taken)', () => {
    const bulk = procedures('reports', {
      bulkReports: p
        .rest({ method: 'POST', path: '/reports/bulk' })
        .input(z.array(z.object({ id: z.string() })))
        .mutation(({ input }) => input.length),
    });
    expect(() => createApp({ logger: false }).mount([bulk])).toThrow(
      /reports\.bulkReports takes an array as its whole input, which no request carries.*\.input\(z\.object\(\{ items: … \}\)\)/,
    );
    const text = procedures('reports', {
      listReports: p.input(z.string().nullable()).query(({ input }) => input),
    });
    expect(() => createApp({ logger: false }).mount([text])).toThrow(/reports\.listReports takes a string/);
    const taken = procedures('reports', {
      putReport: p
        .rest({ method: 'PUT', path: '/reports/raw' })
        .input(z.file())
        .mutation(({ input }) => input.size),
      createReport: p
        .input(z.union([z.object({ kind: z.literal('a') }), z.object({ kind: z.literal('b') })]))
        .mutation(({ input }) => input.kind),
      listReports: p.input(z.object({ q: z.string() }).optional()).query(() => []),
    });
    expect(() => createApp({ logger: false }).mount([taken])).not.toThrow();
  });

  it('refuses a mutation on GET, an update* whose JSON input has no data, and a second .input()', () => {
    const onGet = procedures('counters', {
      resetCounter: p.rest({ method: 'GET', path: '/counters/reset' }).mutation(() => ({ reset: true })),
    });
    expect(() => createApp({ logger: false }).mount([onGet])).toThrow(
      /counters\.resetCounter is a mutation but maps to GET.*make it a POST/,
    );
    const flat = procedures('posts', {
      updatePost: p.input(z.object({ id: z.string(), title: z.string() })).mutation(({ input }) => input),
    });
    expect(() => createApp({ logger: false }).mount([flat])).toThrow(
      /posts\.updatePost is an update\*, which takes \{ id, data \}.*\.rest\(\{ method: 'PATCH', path: '\/posts\/:id' \}\)/,
    );
    // An input of the id alone reads no body.
    const touch = procedures('posts', {
      updatePost: p.input(z.object({ id: z.string() })).mutation(({ input }) => input),
    });
    expect(() => createApp({ logger: false }).mount([touch])).not.toThrow();
    // A socket declared as a mutation is told to be a query, not a POST.
    const socketMutation = procedures('rooms', {
      roomSocket: p
        .rest({ method: 'GET', path: '/rooms/socket' })
        .output(webSocket({ receive: z.object({}), send: z.object({}) }))
        .mutation(async () => undefined),
    });
    expect(() => createApp({ logger: false }).mount([socketMutation])).toThrow(
      /rooms\.roomSocket opens a WebSocket and is declared with \.mutation\(\): it is opened with a GET, so declare it with \.query\(\)/,
    );
    // A form (a file among the fields) is read flat, as the update of a cover does.
    const form = procedures('posts', {
      updatePost: p
        .input(z.object({ id: z.string(), cover: z.file() }))
        .mutation(({ input }) => ({ id: input.id })),
    });
    expect(() => createApp({ logger: false }).mount([form])).not.toThrow();
    expect(() => p.input(z.object({ a: z.string() })).input(z.object({ b: z.string() }))).toThrow(
      /\.input\(\) is called once per procedure/,
    );
  });

  it('refuses a file or an event stream declared with a status other than 200 (it answered 200 anyway)', () => {
    const created = procedures('reports', {
      createReport: p.output(download()).mutation(() => sendFile(new Uint8Array(1), { type: 'text/plain' })),
    });
    expect(() => createApp({ logger: false }).mount([created])).toThrow(
      /reports\.createReport answers a file, which is a 200 .*but declares 201 \(a create\* answers 201 with the Location of what it made\)/,
    );
    const accepted = procedures('ticks', {
      listTicks: p
        .rest({ method: 'GET', path: '/ticks', status: 202 })
        .output(eventStream(z.object({ n: z.number() })))
        .query(async function* () {
          yield { n: 1 };
        }),
    });
    expect(() => createApp({ logger: false }).mount([accepted])).toThrow(
      /ticks\.listTicks answers an event stream, which is a 200 .*but declares 202/,
    );
  });

  it('refuses a .mime() no file type can equal: a wildcard, capitals, parameters', () => {
    for (const type of ['image/*', 'Image/PNG', 'text/plain; charset=utf-8']) {
      const photos = procedures('photos', {
        createPhoto: p.input(z.object({ photo: z.file().mime([type]) })).mutation(() => null),
      });
      expect(() => createApp({ logger: false }).mount([photos])).toThrow(
        `photos.createPhoto: .mime() of "photo" lists "${type}", which no file's type ever equals`,
      );
    }
    const photos = procedures('photos', {
      createPhoto: p
        .input(z.object({ photo: z.file().mime(['image/png', 'image/svg+xml']) }))
        .mutation(() => null),
    });
    expect(() => createApp({ logger: false }).mount([photos])).not.toThrow();
  });

  it('refuses a page whose input takes a larger limit than its output holds (a 500 past it)', () => {
    const Item = z.object({ id: z.string() });
    const paged = procedures('items', {
      listItems: p
        .input(cursorInput({ maxLimit: 200 }))
        .output(cursorPage(Item, { maxLimit: 100 }))
        .query(() => ({ data: [], nextCursor: null, prevCursor: null })),
    });
    expect(() => createApp({ logger: false }).mount([paged])).toThrow(
      /items\.listItems takes a limit of up to 200, but its output's data holds at most 100/,
    );
  });

  it('takes a discriminated union of objects in a query, each field coerced where its options agree', async () => {
    const app = createApp({ logger: false }).mount([
      procedures('shapes', {
        listShapes: p
          .input(
            z.discriminatedUnion('kind', [
              z.object({ kind: z.literal('circle'), radius: z.number() }),
              z.object({ kind: z.literal('square'), side: z.number(), filled: z.boolean().optional() }),
            ]),
          )
          .query(({ input }) => input),
      }),
    ]);
    expect((await call(app, 'GET', '/api/shapes?kind=circle&radius=2')).json()).toEqual({
      kind: 'circle',
      radius: 2,
    });
    expect((await call(app, 'GET', '/api/shapes?kind=square&side=3&filled=true')).json()).toEqual({
      kind: 'square',
      side: 3,
      filled: true,
    });
    expect((await call(app, 'GET', '/api/shapes?kind=circle&radius=big')).status).toBe(400);
    await app.close();
  });

  it('refuses a mount once the app is ready: it would be documented and never served', async () => {
    const app = createApp({ logger: false });
    await app.ready();
    expect(() => app.mount([procedures('late', { listLate: p.query(() => []) })])).toThrow(
      'app.mount() after the app is ready: mount collections before listen() or the first request',
    );
    await app.close();
  });

  it('refuses a collision across mounts and with the health route', () => {
    const one = procedures('posts', { listPosts: p.query(() => []) });
    const app = createApp({ logger: false }).mount([one]);
    expect(() => app.mount([one])).toThrow(/both map to GET \/api\/posts/);
    const health = procedures('health', { listHealth: p.query(() => []) });
    expect(() => createApp({ logger: false }).mount([health])).toThrow(
      /takes GET \/api\/health, a health route/,
    );
  });

  it('refuses a bad collection name and a non-procedure', () => {
    expect(() => createApp({ logger: false }).mount([procedures('my posts', {})])).toThrow(
      /cannot be a path segment/,
    );
    expect(() => procedures('posts', { listPosts: {} as never })).toThrow(/"listPosts" is not a procedure/);
  });
});

describe('input assembly and statuses', () => {
  it('answers create with 201 and a Location, refusing an id in the body', async () => {
    const app = notesApp();
    const refused = await call(app, 'POST', '/api/notes', { title: 'Hello', body: 'World', id: 'evil' });
    expect(refused.status).toBe(400);
    expect(refused.json()).toMatchObject({ errors: [{ path: 'id', message: 'Unknown key' }] });
    expect((await call(app, 'GET', '/api/notes/2')).status).toBe(404);
    const created = await call(app, 'POST', '/api/notes', { title: 'Hello', body: 'World' });
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe('/api/notes/2');
    expect(created.json()).toEqual({ id: '2', title: 'Hello', body: 'World', ownerId: 'u1' });
  });

  it('gives update* { id, data }: the path id addresses the record, a body id is no key of data', async () => {
    const app = notesApp();
    const refused = await call(app, 'PUT', '/api/notes/1', { title: 'Renamed', id: '999' });
    expect(refused.json()).toMatchObject({
      status: 400,
      errors: [{ path: 'data.id', message: 'Unknown key' }],
    });
    expect((await call(app, 'GET', '/api/notes/1')).json()).toMatchObject({ title: 'One' });
    const updated = await call(app, 'PUT', '/api/notes/1', { title: 'Renamed' });
    expect(updated.status).toBe(200);
    expect(updated.json()).toMatchObject({ id: '1', title: 'Renamed' });
    expect((await call(app, 'GET', '/api/notes/999')).status).toBe(404);
  });

  it('lets path params win over body fields on custom routes', async () => {
    const app = notesApp();
    expect((await call(app, 'POST', '/api/notes/7/pin', { id: 8 })).json()).toEqual({ pinned: 7 });
    expect((await call(app, 'POST', '/api/notes/7/pin')).json()).toEqual({ pinned: 7 });
  });

  it('answers delete with { success: true }', async () => {
    const app = notesApp({ id: 'a', role: 'admin' });
    // A DELETE reads its input from the path and query: a body's keys are refused, not dropped.
    const withBody = await call(app, 'DELETE', '/api/notes/1', { hard: true });
    expect(withBody.status).toBe(400);
    expect(withBody.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [
        {
          path: 'hard',
          message:
            'A DELETE reads its input from the path and the query string, not its body: send it as ?hard=',
        },
      ],
    });
    expect((await call(app, 'DELETE', '/api/notes/1', [1])).json()).toMatchObject({ errors: [{ path: '' }] });
    expect((await call(app, 'GET', '/api/notes/1')).status).toBe(200);
    // An empty object carries nothing, and passes.
    const deleted = await call(app, 'DELETE', '/api/notes/1', {});
    expect(deleted.status).toBe(200);
    expect(deleted.json()).toEqual({ success: true });
    expect((await call(app, 'DELETE', '/api/notes/1')).json()).toMatchObject({
      status: 404,
      code: 'NOT_FOUND',
    });
  });

  it('coerces the query string from the input schema', async () => {
    const app = notesApp();
    const listed = await call(app, 'GET', '/api/notes?limit=5&pinned=0&after=2024-01-01&tags=a&tags=b');
    expect(listed.json().echo).toEqual({
      limit: 5,
      pinned: false,
      after: '2024-01-01T00:00:00.000Z',
      tags: ['a', 'b'],
    });
    expect((await call(app, 'GET', '/api/notes')).json().echo).toEqual({ limit: 20 });
  });

  it.each([
    ['pinned=yes', 'pinned'],
    ['limit=abc', 'limit'],
    ['limit=0', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=1&limit=2', 'limit'],
    ['after=yesterday', 'after'],
    ['tags=z', 'tags.0'],
  ])('refuses ?%s with a 400 naming %s', async (query, path) => {
    const response = await call(notesApp(), 'GET', `/api/notes?${query}`);
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toBe(problemType);
    const body = response.json();
    expect(body).toMatchObject({ code: 'VALIDATION_FAILED', status: 400, title: 'Validation failed' });
    expect(body.errors.map((error: { path: string }) => error.path)).toContain(path);
  });
});

describe('problem responses', () => {
  it('404 ROUTE_NOT_FOUND for an unknown route', async () => {
    const response = await call(notesApp(), 'GET', '/api/nothing');
    expect(response.status).toBe(404);
    expect(response.headers['content-type']).toBe(problemType);
    expect(response.json()).toEqual({
      type: 'urn:proceed:problem:route-not-found',
      title: 'Route not found',
      status: 404,
      detail: 'No route matches GET /api/nothing',
      code: 'ROUTE_NOT_FOUND',
    });
  });

  it('405 with Allow for a known path and another method', async () => {
    const response = await call(notesApp(), 'PATCH', '/api/notes/1');
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD, PUT, DELETE');
    expect(response.json()).toMatchObject({ code: 'METHOD_NOT_ALLOWED' });
  });

  it('404 NOT_FOUND from a handler', async () => {
    expect((await call(notesApp(), 'GET', '/api/notes/nope')).json()).toMatchObject({
      status: 404,
      code: 'NOT_FOUND',
      detail: 'No note nope',
    });
  });

  it('400 INVALID_JSON for malformed JSON', async () => {
    const json = { 'content-type': 'application/json' };
    for (const payload of ['{"title":', ' ']) {
      const response = await call(notesApp(), 'POST', '/api/notes', payload, json);
      expect(response.status).toBe(400);
      expect(response.json().code).toBe('INVALID_JSON');
    }
  });

  it('400 VALIDATION_FAILED naming a prototype key in valid JSON, and why it is refused', async () => {
    const json = { 'content-type': 'application/json' };
    const cases: [payload: string, path: string][] = [
      ['{"__proto__":{"x":1},"title":"a","body":"b"}', '__proto__'],
      ['{"title":"a","body":"b","meta":[{"constructor":{"prototype":{"x":1}}}]}', 'meta.0.constructor'],
    ];
    for (const [payload, path] of cases) {
      const response = await call(notesApp(), 'POST', '/api/notes', payload, json);
      expect(response.status).toBe(400);
      expect(response.json()).toMatchObject({
        code: 'VALIDATION_FAILED',
        detail: `The body holds the key "${path}", which is refused: it could change the prototype of objects on the server`,
        errors: [{ path }],
      });
    }
    // A key merely named "constructor" is no prototype key: it reaches the input, which names no such key.
    const plain = await call(
      notesApp(),
      'POST',
      '/api/notes',
      '{"title":"a","body":"b","constructor":"x"}',
      json,
    );
    expect(plain.json()).toMatchObject({
      status: 400,
      errors: [{ path: 'constructor', message: 'Unknown key' }],
    });
  });

  it('400 VALIDATION_FAILED for a malformed URL and an over-long path parameter', async () => {
    const malformed = await call(notesApp(), 'GET', '/api/notes/%E0%A4%A');
    expect(malformed.status).toBe(400);
    expect(malformed.headers['content-type']).toBe(problemType);
    // Every VALIDATION_FAILED carries its errors, as docs/errors.md says.
    expect(malformed.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      detail: 'The URL is malformed (bad percent-encoding)',
      errors: [{ path: '', message: 'The URL is malformed (bad percent-encoding)' }],
    });
    const long = await call(notesApp(), 'GET', `/api/notes/${'x'.repeat(501)}`);
    expect(long.status).toBe(400);
    expect(long.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      detail: 'A path parameter (id) is longer than 500 characters',
      errors: [{ path: 'id', message: 'Longer than 500 characters' }],
    });
    expect((await call(notesApp(), 'GET', `/api/notes/${'x'.repeat(500)}`)).status).toBe(404);
  });

  it('takes an empty body with a JSON content type as no body', async () => {
    const json = { 'content-type': 'application/json' };
    expect((await call(notesApp(), 'POST', '/api/notes/7/pin', '', json)).json()).toEqual({ pinned: 7 });
    const created = await call(notesApp(), 'POST', '/api/notes', '', json);
    expect(created.status).toBe(400);
    expect(created.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
  });

  it('400 when the body is JSON but not an object', async () => {
    const response = await call(notesApp(), 'POST', '/api/notes', '[1,2]', {
      'content-type': 'application/json',
    });
    expect(response.status).toBe(400);
    expect(response.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      detail: 'input: The request body must be a JSON object',
    });
  });

  it('415 for a body that is not JSON', async () => {
    const response = await call(notesApp(), 'POST', '/api/notes', 'title=x', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(response.status).toBe(415);
    expect(response.json().code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('415 for a text/plain body too', async () => {
    const response = await call(notesApp(), 'POST', '/api/notes', 'hello', { 'content-type': 'text/plain' });
    expect(response.status).toBe(415);
    expect(response.json().code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('takes a +json media type as JSON (a merge patch, JSON:API), not a JSON Patch or a non-application type', async () => {
    const send = (type: string) =>
      call(notesApp(), 'POST', '/api/notes', JSON.stringify({ title: 'A', body: 'B' }), {
        'content-type': type,
      });
    for (const type of ['application/merge-patch+json', 'application/vnd.api+json; charset=utf-8'])
      expect((await send(type)).status).toBe(201);
    for (const type of ['application/json-patch+json', 'text/x+json', 'application/jsonx'])
      expect((await send(type)).json().code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('415 for a multipart body even when a raw route on app.server parses multipart', async () => {
    const app = notesApp();
    let parsed = 0;
    // What @fastify/multipart does: a parser for the media type, meant for raw routes.
    app.server.addContentTypeParser('multipart/form-data', { parseAs: 'string' }, (_request, body, done) => {
      parsed++;
      done(null, { title: String(body).length > 0 ? 'from a form' : '' });
    });
    app.server.post('/upload', async (request) => ({ got: request.body }));
    const form = { 'content-type': 'multipart/form-data; boundary=x' };
    const payload = '--x\r\nContent-Disposition: form-data; name="title"\r\n\r\nHello\r\n--x--\r\n';
    const response = await call(app, 'POST', '/api/notes', payload, form);
    expect(response.status).toBe(415);
    expect(response.json()).toMatchObject({
      code: 'UNSUPPORTED_MEDIA_TYPE',
      detail: 'The request body must be application/json (or a +json media type)',
    });
    // The raw route keeps its parser; JSON still reaches the procedure.
    expect((await call(app, 'POST', '/upload', payload, form)).json()).toEqual({
      got: { title: 'from a form' },
    });
    // Refused before parsing: only the raw route's request reached the parser.
    expect(parsed).toBe(1);
    // An empty body in that media type is refused too: the parser's output never joins the input.
    expect((await call(app, 'POST', '/api/notes', '', form)).status).toBe(415);
    expect(parsed).toBe(1);
    const json = { 'content-type': 'APPLICATION/JSON ; charset=utf-8' };
    expect((await call(app, 'POST', '/api/notes', '{"title":"t","body":"b"}', json)).status).toBe(201);
  });

  it('415 for a body without a media type even when a catch-all parser is registered', async () => {
    const app = notesApp();
    app.server.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    const response = await app.inject({
      method: 'POST',
      url: '/api/notes',
      payload: '{"title":"t","body":"b"}',
    });
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(response.statusCode).toBe(415);
    // No media type and no body is no body, as before.
    expect((await app.inject({ method: 'POST', url: '/api/notes/7/pin' })).json()).toEqual({ pinned: 7 });
  });

  it('413 for a body over 1 MiB', async () => {
    const payload = JSON.stringify({ title: 'x', body: 'y'.repeat(1024 * 1024) });
    const response = await call(notesApp(), 'POST', '/api/notes', payload, {
      'content-type': 'application/json',
    });
    expect(response.status).toBe(413);
    expect(response.json().code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('401 then 403 naming the guard', async () => {
    const anonymous = await call(notesApp(), 'DELETE', '/api/notes/1');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toBe('Bearer');
    expect(anonymous.json().code).toBe('UNAUTHENTICATED');
    const user = await call(notesApp({ id: 'u', role: 'user' }), 'DELETE', '/api/notes/1');
    expect(user.status).toBe(403);
    expect(user.json()).toMatchObject({ code: 'FORBIDDEN', detail: 'Guard "admin" denied access' });
  });

  it('500 INTERNAL for an output that does not fit its schema: the reason is logged, not sent', async () => {
    const lines: string[] = [];
    const logged = createApp({
      userFromContext: true,
      logger: { stream: { write: (line) => lines.push(line) } },
    }).mount([notes]);
    const hidden = await call(logged, 'GET', '/api/notes-broken');
    expect(hidden.status).toBe(500);
    expect(hidden.json()).toEqual({
      type: 'urn:proceed:problem:internal',
      title: 'Internal server error',
      status: 500,
      detail: 'The server could not complete the request',
      code: 'INTERNAL',
    });
    expect(hidden.body).not.toMatch(/at |required/);
    const entry = lines.map((line) => JSON.parse(line)).find((record) => record.msg === 'Unexpected error');
    expect(entry).toMatchObject({ level: 50, reqId: hidden.headers['x-request-id'] });
    // Outside production the answer is validated before it is written: the validator names the field.
    const missing =
      'Output does not match its schema: title: Invalid input: expected string, received undefined';
    expect(entry.err.message).toBe(missing);

    const exposed = createApp({ logger: false, exposeErrors: true, userFromContext: true }).mount([notes]);
    expect((await call(exposed, 'GET', '/api/notes-broken')).json().detail).toBe(missing);
  });

  it('500 for bytes where JSON is declared, on Node and through app.fetch, with the procedure named in the log', async () => {
    const lines: string[] = [];
    const files = procedures('files', {
      getFile: procedure()
        .input(z.object({ id: z.string() }))
        .query(() => Buffer.from([0, 1, 2, 255]) as never),
    });
    const app = createApp({ logger: { stream: { write: (line) => lines.push(line) } } }).mount([files]);
    const onNode = await call(app, 'GET', '/api/files/1');
    const onFetch = await app.fetch(new Request('http://api.example/api/files/1'));
    for (const [status, body] of [
      [onNode.status, onNode.json()],
      [onFetch.status, await onFetch.json()],
    ]) {
      expect(status).toBe(500);
      expect(body).toMatchObject({ code: 'INTERNAL', detail: 'The server could not complete the request' });
    }
    const logged = lines
      .map((line) => JSON.parse(line))
      .filter((record) => record.msg === 'Unexpected error');
    expect(logged).toHaveLength(2);
    for (const record of logged)
      expect(record.err.message).toBe(
        'files.getFile returned bytes (Buffer), which a JSON answer cannot carry: return plain data (docs/procedures.md, "What a handler returns")',
      );
  });

  it('hides thrown errors by default', async () => {
    const boom = procedures('boom', {
      listBoom: procedure().query(() => {
        throw new Error('password=hunter2 at db.ts:12');
      }),
    });
    const app = createApp({ logger: false }).mount([boom]);
    const response = await call(app, 'GET', '/api/boom');
    expect(response.status).toBe(500);
    expect(response.body).not.toContain('hunter2');
  });

  it('503 UNAVAILABLE with Retry-After when a service the handler needs is unreachable, never 500', async () => {
    const outage = procedures('outage', {
      listOutage: procedure().query(async () => {
        const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.9:5432'), {
          code: 'ECONNREFUSED',
        });
        throw new Error('Failed query: select * from "posts"', { cause: refused });
      }),
    });
    const app = createApp({ logger: false }).mount([outage]);
    const response = await call(app, 'GET', '/api/outage');
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('5');
    expect(response.json()).toMatchObject({ code: 'UNAVAILABLE', status: 503 });
    expect(response.body).not.toContain('10.0.0.9');
  });

  it('logs the cause of an UnavailableError thrown unwrapped, which its answer does not name', async () => {
    const lines: string[] = [];
    const app = unwrappedOutageApp(lines);
    const response = await call(app, 'GET', '/api/outage');
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('5');
    expect(response.body).not.toContain('password');
    const warned = outageWarning(lines);
    expect(warned?.level).toBe(40);
    expect(JSON.stringify(warned?.err)).toContain('password authentication failed');
  });
});

describe('response headers', () => {
  it('sends a procedure’s own headers on success, and nosniff on every answer', async () => {
    const tokens = procedures('tokens', {
      createToken: procedure()
        .headers({ 'Cache-Control': 'no-store' })
        .mutation(() => ({ id: 't', token: 'secret' })),
    });
    const app = createApp({ logger: false }).mount([tokens]);
    const created = await call(app, 'POST', '/api/tokens');
    expect(created.headers['cache-control']).toBe('no-store');
    expect(created.headers['x-content-type-options']).toBe('nosniff');
    const missing = await call(app, 'GET', '/api/nothing');
    expect(missing.headers['x-content-type-options']).toBe('nosniff');
    expect(missing.headers['cache-control']).toBeUndefined();
  });
});

describe('context, health and request ids', () => {
  it('503 UNAVAILABLE when the health check fails', async () => {
    let healthy = true;
    const app = createApp({ logger: false, health: { check: () => healthy } }).mount([]);
    expect((await call(app, 'GET', '/api/health')).status).toBe(200);
    healthy = false;
    const unready = await call(app, 'GET', '/api/health');
    expect(unready.json()).toMatchObject({ status: 503, code: 'UNAVAILABLE' });
    // A client polling readiness learns when to ask again, as after any outage.
    expect(unready.headers['retry-after']).toBe('5');
  });

  it('503 UNAVAILABLE when the health check does not answer within its timeout', async () => {
    let hang = false;
    const app = createApp({
      logger: false,
      health: { check: () => (hang ? new Promise<boolean>(() => undefined) : true), timeout: 50 },
    }).mount([]);
    expect((await call(app, 'GET', '/api/health')).status).toBe(200);
    hang = true;
    const unready = await call(app, 'GET', '/api/health');
    expect(unready.json()).toMatchObject({ status: 503, code: 'UNAVAILABLE' });
    expect(unready.headers['retry-after']).toBe('5');
    expect(() => createApp({ logger: false, health: { timeout: 0 } })).toThrow(
      /health.timeout is whole milliseconds from 1 to 60000/,
    );
  });

  it('echoes a well-formed X-Request-Id and makes one otherwise', async () => {
    const app = notesApp();
    const given = await call(app, 'GET', '/api/notes/1', undefined, { 'x-request-id': 'abc-123' });
    expect(given.headers['x-request-id']).toBe('abc-123');
    const replaced = await call(app, 'GET', '/api/notes/1', undefined, { 'x-request-id': 'bad id\u0001' });
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect((await call(app, 'GET', '/api/nope')).headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('runs context resolvers and middlewares in order', async () => {
    const seen: string[] = [];
    const traced = procedures('trace', {
      listTrace: procedure<{ tenant: string }>()
        .use(async ({ ctx, next }) => {
          seen.push(`mw:${ctx.tenant}`);
          return next({ stamp: 42 });
        })
        .query(({ ctx }) => ({
          tenant: ctx.tenant,
          stamp: ctx.stamp,
          plugin: (ctx as { plugin?: string }).plugin,
        })),
    });
    const app = createApp<{ tenant: string }>({ logger: false, context: () => ({ tenant: 't1' }) })
      .extendContext((ctx) => {
        seen.push('resolver');
        ctx.plugin = 'yes';
      })
      .mount([traced]);
    expect((await call(app, 'GET', '/api/trace')).json()).toEqual({ tenant: 't1', stamp: 42, plugin: 'yes' });
    expect(seen).toEqual(['resolver', 'mw:t1']);
  });
});

it('gives the context the request: id, method, url, headers, params and the client address', async () => {
  const echo = procedures('echo', {
    getEcho: procedure()
      .input(z.object({ id: z.string() }))
      .query(({ ctx }) => ({ ip: ctx.request.ip, request: JSON.parse(JSON.stringify(ctx.request)) })),
  });
  const direct = await call(createApp({ logger: false }).mount([echo]), 'GET', '/api/echo/7', undefined, {
    'x-request-id': 'req-1',
    'x-forwarded-for': '203.0.113.9',
  });
  expect(direct.json()).toEqual({
    ip: '127.0.0.1',
    request: {
      id: 'req-1',
      method: 'GET',
      url: '/api/echo/7',
      ip: '127.0.0.1',
      headers: expect.objectContaining({ 'x-forwarded-for': '203.0.113.9' }),
      params: { id: '7' },
    },
  });
  // Behind a trusted proxy, the address the proxy forwarded.
  const proxied = createApp({ logger: false, trustProxy: true }).mount([echo]);
  const forwarded = await call(proxied, 'GET', '/api/echo/7', undefined, {
    'x-forwarded-for': '203.0.113.9',
  });
  expect(forwarded.json()).toMatchObject({ ip: '203.0.113.9', request: { ip: '203.0.113.9' } });
  // A proxy that appends (nginx's $proxy_add_x_forwarded_for, a load balancer) after what the
  // client wrote: one hop trusted reads the address the proxy added; `true` reads the client's own.
  const chain = { 'x-forwarded-for': '198.51.100.66, 203.0.113.9' };
  const oneHop = createApp({ logger: false, trustProxy: 1 }).mount([echo]);
  expect((await call(oneHop, 'GET', '/api/echo/7', undefined, chain)).json()).toMatchObject({
    ip: '203.0.113.9',
  });
  const twoHops = createApp({ logger: false, trustProxy: 2 }).mount([echo]);
  expect((await call(twoHops, 'GET', '/api/echo/7', undefined, chain)).json()).toMatchObject({
    ip: '198.51.100.66',
  });
  expect((await call(proxied, 'GET', '/api/echo/7', undefined, chain)).json()).toMatchObject({
    ip: '198.51.100.66',
  });
});

describe('app.observe', () => {
  it('tells an observer of every answer: its route (one object per route), status, problem code and time', async () => {
    const app = notesApp();
    const answers: Answer[] = [];
    app.observe((answer) => answers.push(answer));
    await call(app, 'GET', '/api/notes/1');
    await call(app, 'GET', '/api/notes/1');
    await call(app, 'GET', '/api/notes/404');
    await call(app, 'GET', '/api/nothing-here');
    await call(app, 'GET', '/api/health');
    expect(
      answers.map(({ route, status, problem }) => [route?.procedure, route?.path, status, problem]),
    ).toEqual([
      ['notes.getNote', '/api/notes/:id', 200, undefined],
      ['notes.getNote', '/api/notes/:id', 200, undefined],
      ['notes.getNote', '/api/notes/:id', 404, 'NOT_FOUND'],
      [undefined, undefined, 404, 'ROUTE_NOT_FOUND'],
      [undefined, '/api/health', 200, undefined],
    ]);
    expect(answers[0]?.route).toBe(answers[1]?.route);
    await expect(async () => app.observe(() => undefined)).rejects.toThrow(ProceedConfigError);
    for (const answer of answers) {
      expect(answer.method).toBe('GET');
      expect(answer.seconds).toBeGreaterThanOrEqual(0);
    }
  });
});

describe('app.observe, a failing observer', () => {
  it('costs neither the other observers nor the answer', async () => {
    const app = notesApp();
    const seen: number[] = [];
    app.observe(() => {
      throw new Error('observer bug');
    });
    app.observe((answer) => seen.push(answer.status));
    const response = await call(app, 'GET', '/api/notes/1');
    expect(response.status).toBe(200);
    expect(seen).toEqual([200]);
  });
});

describe('views never leak', () => {
  const Thing = resource('Thing', {
    public: { id: z.string(), name: z.string() },
    authenticated: { email: z.string() },
    admin: { note: z.string() },
  });

  it('writes only the fields of the view, whatever the handler returns', async () => {
    const record = fc.dictionary(
      fc.string({ minLength: 1, maxLength: 8 }).filter((key) => key !== '__proto__'),
      fc.oneof(fc.string(), fc.integer(), fc.boolean()),
    );
    await fc.assert(
      fc.asyncProperty(
        record,
        fc.constantFrom('public', 'authenticated', 'admin' as const),
        async (extra, level) => {
          const value = { ...extra, id: 'i', name: 'n', email: 'e', note: 'x' };
          const things = procedures('things', {
            getThing: procedure()
              .output(Thing[level])
              .query(() => value),
          });
          const app = createApp({ logger: false }).mount([things]);
          const body = (await call(app, 'GET', '/api/things/1')).json();
          const allowed = Object.keys(Thing[level].shape);
          expect(Object.keys(body).sort()).toEqual([...allowed].sort());
        },
      ),
      { numRuns: 60 },
    );
  });

  it('chooses the view per request from the context', async () => {
    expect((await call(notesApp(), 'GET', '/api/notes/1')).json()).toEqual({ id: '1', title: 'One' });
    expect((await call(notesApp({ id: 'a', role: 'admin' }), 'GET', '/api/notes/1')).json()).toEqual({
      id: '1',
      title: 'One',
      body: 'b',
      ownerId: 'u1',
      createdAt: '1970-01-01T00:00:00.000Z',
    });
  });
});

describe('over a real socket', () => {
  let app: App | undefined;
  afterEach(async () => {
    await app?.close();
  });

  it('serves, then drains an in-flight request on close', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = procedures('slow', {
      listSlow: procedure().query(async () => {
        await gate;
        return { done: true };
      }),
    });
    app = createApp({ logger: false }).mount([slow]);
    const requestsInFlight = app.countRequestsInFlight();
    const address = await app.listen({ port: 0, handleSignals: false });
    const health = await fetch(`${address}/api/health`);
    expect(await health.json()).toEqual({ status: 'ok' });

    const arrived = eventually(() => requestsInFlight() === 1, 10_000, 'the request to arrive');
    const inFlight = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpRequest(`${address}/api/slow`, (response) => {
        let body = '';
        response.on('data', (chunk) => {
          body += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      request.on('error', reject);
      request.end();
    });
    // Closing begins once the server has the request.
    await arrived;
    const closing = app.close();
    release();
    await closing;
    expect(await inFlight).toEqual({ status: 200, body: '{"done":true}' });
    await expect(fetch(`${address}/api/health`)).rejects.toThrow();
    app = undefined;
  });
});

describe('requests in flight', () => {
  it('are counted through app.fetch as on Node: a plain answer until it is made, a stream until its client leaves', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const Tick = z.object({ n: z.number() });
    const counted = procedures('ticks', {
      getTick: procedure()
        .rest({ method: 'GET', path: '/ticks/slow' })
        .query(async () => {
          await held;
          return { n: 1 };
        }),
      listTicks: procedure()
        .output(eventStream(Tick))
        .query(async function* ({ signal }) {
          yield serverEvent({ n: 1 });
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        }),
    });
    const app = createApp({ logger: false }).mount([counted]);
    const inFlight = app.countRequestsInFlight();
    const slow = app.fetch(new Request('http://api.example/api/ticks/slow'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(inFlight()).toBe(1);
    release();
    expect((await slow).status).toBe(200);
    expect(inFlight()).toBe(0);
    const stream = await app.fetch(new Request('http://api.example/api/ticks'));
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    expect(inFlight()).toBe(1);
    await reader.cancel();
    expect(inFlight()).toBe(0);
    await app.close();
  });
});
