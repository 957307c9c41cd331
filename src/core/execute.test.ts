/** compileRoute on its own: no server, a route planned by planRoutes, calls handed in as data. */

import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileRoute } from './execute.js';
import { requestInfo } from './fixtures/request.js';
import { guard } from './guards.js';
import { type Procedure, procedure, procedures } from './procedure.js';
import { planRoutes } from './routes.js';
import type { MiddlewareNext } from './steps.js';
import { unsendableKind } from './unsendable.js';

type Ctx = { user?: { id: string; role: string }; order: string[] };
const p = () => procedure<Ctx>();
const request = requestInfo();

function compile(name: string, built: Procedure) {
  const [route] = planRoutes([procedures('posts', { [name]: built })]);
  if (route === undefined) throw new Error('not planned');
  return compileRoute(route);
}

function call(
  invoke: ReturnType<typeof compileRoute>,
  parts: {
    params?: Record<string, string>;
    query?: Record<string, unknown>;
    body?: unknown;
    user?: Ctx['user'];
  } = {},
) {
  const order: string[] = [];
  const ctx = { request, order, ...(parts.user === undefined ? {} : { user: parts.user }) };
  return {
    order,
    reply: Promise.resolve(invoke({ ctx, params: parts.params ?? {}, query: parts.query, body: parts.body })),
  };
}

describe('compileRoute', () => {
  it('assembles query and path into the input, coerced, and serializes the declared output', async () => {
    const invoke = compile(
      'getPost',
      p()
        .input(z.object({ id: z.string(), limit: z.number() }))
        .output(z.object({ id: z.string(), limit: z.number() }))
        .query(({ input }) => ({ ...input, secret: 'never sent' })),
    );
    const { reply } = call(invoke, { params: { id: 'a' }, query: { limit: '5', id: 'ignored' } });
    await expect(reply).resolves.toEqual({
      status: 200,
      body: '{"id":"a","limit":5}',
      location: undefined,
      version: undefined,
    });
  });

  it('answers create* with 201 and the new record’s Location, delete* without output with success', async () => {
    const [created, alone] = planRoutes([
      procedures('posts', {
        createPost: p().mutation(() => ({ id: 'x/1' })),
        getPost: p()
          .input(z.object({ id: z.string() }))
          .query(() => null),
      }),
      procedures('notes', { createNote: p().mutation(() => ({ id: 'n1' })) }),
    ]).filter((route) => route.method === 'POST');
    if (created === undefined || alone === undefined) throw new Error('not planned');
    await expect(call(compileRoute(created), { body: {} }).reply).resolves.toMatchObject({
      status: 201,
      location: '/api/posts/x%2F1',
    });
    // No GET reads a note: a Location there would be a 404.
    const note = await call(compileRoute(alone), { body: {} }).reply;
    expect(note).toMatchObject({ status: 201 });
    expect(note.location).toBeUndefined();
    const deleted = compile(
      'deletePost',
      p()
        .input(z.object({ id: z.string() }))
        .mutation(() => undefined),
    );
    await expect(call(deleted, { params: { id: '1' } }).reply).resolves.toMatchObject({
      status: 200,
      body: '{"success":true}',
    });
  });

  it('puts a nested create’s Location under its own path when a GET reads records there, else under the collection', async () => {
    const [attach, , copy] = planRoutes([
      procedures('posts', {
        createAttachment: p()
          .rest({ method: 'POST', path: '/posts/:id/attachments' })
          .input(z.object({ id: z.string() }))
          .mutation(() => ({ id: 'a 1' })),
        getAttachment: p()
          .rest({ method: 'GET', path: '/posts/:postId/attachments/:attachmentId' })
          .query(() => null),
        createCopy: p()
          .rest({ method: 'POST', path: '/posts/:id/copy' })
          .input(z.object({ id: z.string() }))
          .mutation(() => ({ id: 'c1' })),
        getPost: p()
          .input(z.object({ id: z.string() }))
          .query(() => null),
      }),
    ]);
    if (attach === undefined || copy === undefined) throw new Error('not planned');
    await expect(call(compileRoute(attach), { params: { id: 'p/7' } }).reply).resolves.toMatchObject({
      status: 201,
      location: '/api/posts/p%2F7/attachments/a%201',
    });
    await expect(call(compileRoute(copy), { params: { id: 'p7' } }).reply).resolves.toMatchObject({
      location: '/api/posts/c1',
    });
  });

  it('refuses a query parameter the input does not name, suggesting the one meant; a loose input takes any', async () => {
    const strict = compile(
      'listPosts',
      p()
        .input(z.object({ tag: z.string().optional(), limit: z.number().int().optional() }))
        .query(() => []),
    );
    await expect(call(strict, { query: { tags: 'ts', limit: '5', utm: 'x' } }).reply).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [
        { path: 'tags', message: 'Unknown query parameter; did you mean "tag"?' },
        { path: 'utm', message: 'Unknown query parameter' },
      ],
    });
    await expect(call(strict, { query: { tag: 'ts' } }).reply).resolves.toMatchObject({ status: 200 });
    // A path parameter is never the one meant: it comes from the path.
    const byId = compile(
      'getPost',
      p()
        .input(z.object({ id: z.string() }))
        .query(() => ({})),
    );
    await expect(call(byId, { params: { id: 'p7' }, query: { x: '1' } }).reply).rejects.toMatchObject({
      errors: [{ path: 'x', message: 'Unknown query parameter' }],
    });
    const loose = compile(
      'listPosts',
      p()
        .input(z.looseObject({ tag: z.string().optional() }))
        .query(() => []),
    );
    await expect(call(loose, { query: { tag: 'ts', _: '1700000000' } }).reply).resolves.toMatchObject({
      status: 200,
    });
  });

  it('refuses any key sent to a procedure without .input(): it takes its path alone', async () => {
    let ran = 0;
    const remove = compile(
      'deletePost',
      p().mutation(() => {
        ran += 1;
        return null;
      }),
    );
    await expect(call(remove, { params: { id: 'p7' }, query: { hard: 'true' } }).reply).rejects.toMatchObject(
      {
        code: 'VALIDATION_FAILED',
        errors: [{ path: 'hard', message: 'Unknown query parameter' }],
      },
    );
    const create = compile(
      'createPost',
      p().mutation(() => {
        ran += 1;
        return { id: 'p1' };
      }),
    );
    await expect(call(create, { body: { everywhere: true } }).reply).rejects.toMatchObject({
      errors: [{ path: 'everywhere', message: 'Unknown key' }],
    });
    expect(ran).toBe(0);
    await expect(call(remove, { params: { id: 'p7' } }).reply).resolves.toMatchObject({ status: 200 });
    await expect(call(create, { body: {} }).reply).resolves.toMatchObject({ status: 201 });
    await expect(call(create).reply).resolves.toMatchObject({ status: 201 });
    expect(ran).toBe(3);
  });

  it('refuses a body key the input does not name, at any depth, before the handler; a loose input takes any', async () => {
    let ran = 0;
    const invoke = compile(
      'createPost',
      p()
        .input(
          z.object({
            title: z.string(),
            isPrivate: z.boolean().default(false),
            author: z.object({ profile: z.object({ name: z.string() }) }).optional(),
            tags: z.array(z.object({ label: z.string() })).default([]),
          }),
        )
        .mutation(() => {
          ran++;
          return {};
        }),
    );
    await expect(
      call(invoke, {
        body: { title: 'x', is_private: true, author: { profile: { nmae: 'Ada' } }, tags: [{ lable: 'a' }] },
      }).reply,
    ).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [
        { path: 'is_private', message: 'Unknown key; did you mean "isPrivate"?' },
        { path: 'author.profile.nmae', message: 'Unknown key; did you mean "name"?' },
        { path: 'tags.0.lable', message: 'Unknown key; did you mean "label"?' },
      ],
    });
    expect(ran).toBe(0);
    await expect(call(invoke, { body: { title: 'x', isPrivate: true } }).reply).resolves.toMatchObject({
      status: 201,
    });
    const loose = compile(
      'createPost',
      p()
        .input(z.looseObject({ title: z.string() }))
        .output(z.object({ title: z.string() }))
        .mutation(({ input }) => input),
    );
    // Welcomed, and still never on the wire: the output declares what leaves.
    await expect(call(loose, { body: { title: 'x', extra: 1 } }).reply).resolves.toMatchObject({
      body: '{"title":"x"}',
    });
  });

  it('never counts path parameters as unknown, and checks an update’s body under data', async () => {
    const [publish, update] = planRoutes([
      procedures('posts', {
        publishPost: p()
          .rest({ method: 'POST', path: '/posts/:id/publish' })
          .input(z.object({ id: z.string(), at: z.string().optional() }))
          .mutation(() => ({})),
        updatePost: p()
          .input(z.object({ id: z.string(), data: z.object({ title: z.string() }) }))
          .mutation(({ input }) => input),
      }),
    ]);
    if (publish === undefined || update === undefined) throw new Error('not planned');
    await expect(
      call(compileRoute(publish), { params: { id: '7' }, body: { id: '7', at: 'now' } }).reply,
    ).resolves.toMatchObject({ status: 200 });
    await expect(
      call(compileRoute(update), { params: { id: '7' }, body: { titel: 'x' } }).reply,
    ).rejects.toMatchObject({
      errors: [{ path: 'data.titel', message: 'Unknown key; did you mean "title"?' }],
    });
    await expect(
      call(compileRoute(update), { params: { id: '7' }, body: { title: 'x' } }).reply,
    ).resolves.toMatchObject({ body: '{"id":"7","data":{"title":"x"}}' });
  });

  it('refuses invalid input and a body that is not an object with 400, before the handler', async () => {
    let ran = false;
    const invoke = compile(
      'createPost',
      p()
        .input(z.object({ title: z.string().min(1) }))
        .mutation(() => {
          ran = true;
          return {};
        }),
    );
    await expect(call(invoke, { body: { title: '' } }).reply).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [{ path: 'title' }],
    });
    await expect(call(invoke, { body: [1] }).reply).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(ran).toBe(false);
  });

  it('runs guards, then middleware before the input, validation, middleware after it, the handler', async () => {
    const step =
      (name: string) =>
      async ({ ctx, input, next }: { ctx: Ctx; input: unknown; next: MiddlewareNext }) => {
        ctx.order.push(`${name}:${JSON.stringify(input) ?? 'none'}`);
        return next();
      };
    const invoke = compile(
      'getPost',
      p()
        .guard(guard({ name: 'logged', check: (ctx: Ctx) => ctx.order.push('guard') > 0 }))
        .use(step('before'))
        .input(z.object({ id: z.number() }))
        .use(step('after'))
        .query(({ ctx, input }) => {
          ctx.order.push(`handler:${input.id}`);
          return null;
        }),
    );
    const { order, reply } = call(invoke, { params: { id: '7' } });
    await reply;
    expect(order).toEqual(['guard', 'before:none', 'after:{"id":7}', 'handler:7']);
  });

  it('never runs a middleware after the input when validation fails', async () => {
    const invoke = compile(
      'getPost',
      p()
        .input(z.object({ id: z.uuid() }))
        .use(async ({ ctx, next }) => {
          ctx.order.push('loaded');
          return next();
        })
        .query(() => null),
    );
    const { order, reply } = call(invoke, { params: { id: 'nope' } });
    await expect(reply).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(order).toEqual([]);
  });

  it('answers 401 to an anonymous caller, 403 naming the guard to a signed-in one, by failsWith', async () => {
    const staff = guard({ name: 'staff', check: (ctx: Ctx) => ctx.user?.role === 'staff' });
    const signedIn = guard({ name: 'signed in', failsWith: 'UNAUTHENTICATED', check: () => false });
    const forStaff = compile(
      'listPosts',
      p()
        .guard(staff)
        .query(() => []),
    );
    await expect(call(forStaff).reply).rejects.toMatchObject({ code: 'UNAUTHENTICATED', status: 401 });
    await expect(call(forStaff, { user: { id: 'u', role: 'user' } }).reply).rejects.toMatchObject({
      code: 'FORBIDDEN',
      message: 'Guard "staff" denied access',
    });
    const onlySignIn = compile(
      'listPosts',
      p()
        .guard(signedIn)
        .query(() => []),
    );
    await expect(call(onlySignIn, { user: { id: 'u', role: 'user' } }).reply).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
    });
  });

  it('answers without a promise when every step is synchronous; a failure is always a rejected promise', async () => {
    const staff = guard({ name: 'staff', check: (ctx: Ctx) => ctx.user?.role === 'staff' });
    const invoke = compile(
      'getPost',
      p()
        .guard(staff)
        .input(z.object({ id: z.string().min(2) }))
        .query(({ input }) => ({ id: input.id })),
    );
    const ctx = (role: string) => ({ request, order: [], user: { id: 'u', role } });
    const answered = invoke({ ctx: ctx('staff'), params: { id: 'ab' }, query: undefined, body: undefined });
    expect(answered).not.toBeInstanceOf(Promise);
    expect(answered).toMatchObject({ status: 200, body: '{"id":"ab"}' });
    // Refused by the guard and by validation, both found synchronously: rejections, never throws.
    const refused = invoke({ ctx: ctx('user'), params: { id: 'ab' }, query: undefined, body: undefined });
    await expect(refused).rejects.toMatchObject({ code: 'FORBIDDEN' });
    const invalid = invoke({ ctx: ctx('staff'), params: { id: 'a' }, query: undefined, body: undefined });
    await expect(invalid).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
  });

  it('enforces every guard of a stack: the second refuses though the first passed', async () => {
    const passes = guard({ name: 'passes', check: () => true });
    const refuses = guard({ name: 'refuses', check: () => false });
    const invoke = compile(
      'listPosts',
      p()
        .guard(passes)
        .guard(refuses)
        .query(() => []),
    );
    await expect(call(invoke, { user: { id: 'u', role: 'user' } }).reply).rejects.toMatchObject({
      code: 'FORBIDDEN',
      message: 'Guard "refuses" denied access',
    });
    const reversed = compile(
      'listPosts',
      p()
        .guard(refuses)
        .guard(passes)
        .query(() => []),
    );
    await expect(call(reversed, { user: { id: 'u', role: 'user' } }).reply).rejects.toMatchObject({
      message: 'Guard "refuses" denied access',
    });
  });

  it('passes a guard only on true: a foreign thenable is awaited, anything truthy but true refuses', async () => {
    const thenable = (allowed: unknown) => ({
      // biome-ignore lint/suspicious/noThenProperty: a promise from another realm looks like this
      then: (resolve: (value: unknown) => void) => resolve(allowed),
    });
    const user = { id: 'u', role: 'user' };
    for (const [check, passes] of [
      [() => thenable(true), true],
      [() => thenable(false), false],
      [() => 'yes', false],
      [() => ({ role: 'admin' }), false],
    ] as const) {
      const invoke = compile(
        'listPosts',
        p()
          .guard(guard({ name: 'odd', check: check as never }))
          .query(() => []),
      );
      const reply = call(invoke, { user }).reply;
      if (passes) await expect(reply).resolves.toMatchObject({ status: 200 });
      else await expect(reply).rejects.toMatchObject({ code: 'FORBIDDEN' });
    }
  });

  it('awaits a validator that answers with a thenable, and refuses what it refuses', async () => {
    const later = {
      '~standard': {
        version: 1,
        vendor: 'test',
        // A query string is read by the input's JSON Schema, which a validator must give.
        jsonSchema: {
          input: () => ({ type: 'object', properties: { id: { type: 'string' } } }),
          output: () => ({ type: 'object', properties: { id: { type: 'string' } } }),
        },
        validate: (value: unknown) => ({
          // biome-ignore lint/suspicious/noThenProperty: a validator's own promise-like result
          then: (resolve: (result: unknown) => void) =>
            resolve(
              (value as { id?: string }).id === 'ok'
                ? { value: { id: 'ok' } }
                : { issues: [{ message: 'not ok', path: ['id'] }] },
            ),
        }),
      },
    } as never;
    const invoke = compile(
      'getPost',
      p()
        .input(later)
        .query(({ input }) => input),
    );
    await expect(call(invoke, { params: { id: 'ok' } }).reply).resolves.toMatchObject({ status: 200 });
    await expect(call(invoke, { params: { id: 'no' } }).reply).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
  });

  it('runs guards that answer later in their order, the next only after the previous one passed', async () => {
    const seen: string[] = [];
    const later = (name: string, allowed: boolean) =>
      guard({
        name,
        check: async () => {
          seen.push(name);
          await new Promise((resolve) => setImmediate(resolve));
          return allowed;
        },
      });
    const invoke = compile(
      'listPosts',
      p()
        .guard(later('first', true))
        .guard(later('second', false))
        .guard(later('third', true))
        .query(() => []),
    );
    await expect(call(invoke, { user: { id: 'u', role: 'user' } }).reply).rejects.toMatchObject({
      message: 'Guard "second" denied access',
    });
    expect(seen).toEqual(['first', 'second']);
  });

  it('refuses a second next() from one middleware: the handler runs once', async () => {
    let runs = 0;
    const invoke = compile(
      'listPosts',
      p()
        .use((async ({ next }: { next: MiddlewareNext }) => {
          await next();
          return await next();
        }) as never)
        .query(() => {
          runs += 1;
          return [];
        }),
    );
    await expect(call(invoke).reply).rejects.toThrow('called next() more than once');
    expect(runs).toBe(1);
  });

  it('says so when a middleware does not return what next() gave it', async () => {
    const invoke = compile(
      'listPosts',
      p()
        .use((async () => ({ output: undefined })) as never)
        .query(() => []),
    );
    await expect(call(invoke).reply).rejects.toThrow('did not return what next() returned');
  });
});

describe('what a JSON answer cannot carry', () => {
  async function* events() {
    yield 1;
  }
  function* numbers() {
    yield 1;
  }
  const unsendable: Array<[string, () => unknown]> = [
    ['bytes (Buffer)', () => Buffer.from([0, 1, 2, 255])],
    ['bytes (Uint8Array)', () => new Uint8Array(2)],
    ['bytes (ArrayBuffer)', () => new ArrayBuffer(2)],
    ['a Blob', () => new Blob(['x'])],
    ['a ReadableStream', () => new ReadableStream()],
    ['a Node.js stream', () => Readable.from(['x'])],
    ['an async iterable (an async generator?)', () => events()],
    ['an iterator (a generator?)', () => numbers()],
  ];

  it.each(unsendable)('refuses %s with a 500 that names the procedure', async (kind, make) => {
    const invoke = compile(
      'getBlob',
      p().query(() => make() as never),
    );
    await expect(call(invoke).reply).rejects.toThrow(
      `posts.getBlob returned ${kind}, which a JSON answer cannot carry: return plain data`,
    );
    // Awaited results are checked as well.
    const later = compile(
      'getBlob',
      p().query(async () => make() as never),
    );
    await expect(call(later).reply).rejects.toThrow(`posts.getBlob returned ${kind}`);
  });

  it('lets plain data through: objects, arrays, dates, null, primitives, class instances', () => {
    class Row {
      id = 1;
    }
    for (const value of [
      { a: 1 },
      Object.create(null),
      [1, 2],
      new Date(),
      null,
      undefined,
      'x',
      3,
      new Row(),
    ])
      expect(unsendableKind(value)).toBeUndefined();
    expect(unsendableKind(() => 1)).toBe('a function');
  });
});
