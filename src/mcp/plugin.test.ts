import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { versionedRecords } from '../../test/fixtures/versioned-records.js';
import { admin, authenticated } from '../auth/guards.js';
import { type AuthContext, authPlugin } from '../auth/plugin.js';
import { MemoryRevocationStore } from '../auth/revocation.js';
import { TokenService } from '../auth/tokens.js';
import { NotFoundError } from '../core/errors.js';
import { guard } from '../core/guards.js';
import { procedure, procedures } from '../core/procedure.js';
import type { BaseContext } from '../core/request-context.js';
import { rateLimit } from '../core/steps.js';
import { idempotencyPlugin, MemoryIdempotencyStore } from '../idempotency/index.js';
import type { App } from '../server/app.js';
import { createApp } from '../server/create-app.js';
import { mcpPlugin, protocolVersions } from './plugin.js';

interface Member {
  id: string;
  role: 'user' | 'admin';
  isActive: boolean;
}
type Ctx = AuthContext<Member>;
const p = () => procedure<Ctx>();
/** A guard that reads the call's path: only the call can decide it, so listing cannot. */
const selfOrAdmin = guard({
  name: 'self or admin',
  requiresUser: true,
  check: (ctx: Ctx & BaseContext) => ctx.user?.role === 'admin' || ctx.user?.id === ctx.request.params.id,
});

/** A refused call's problem: the result's text, never `structuredContent` (docs/mcp.md). */
function problemIn(result: unknown): Record<string, unknown> {
  const { isError, structuredContent, content } = result as {
    isError?: boolean;
    structuredContent?: unknown;
    content: Array<{ text: string }>;
  };
  expect(isError).toBe(true);
  expect(structuredContent).toBeUndefined();
  return JSON.parse(content[0]?.text ?? 'null') as Record<string, unknown>;
}

/**
 * One JSON-RPC message (`jsonrpc` and `id` added) to an app's endpoint through `app.fetch`, as an
 * agent on this machine sends it.
 */
function sendRpc(
  app: App,
  message: object,
  headers: Record<string, string> = {},
  host = 'localhost',
  path = '/mcp',
) {
  return app.fetch(
    new Request(`http://${host}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...message }),
    }),
    { ip: '127.0.0.1' },
  );
}

const Note = z.object({ id: z.string(), text: z.string() });
const NoteForAdmin = Note.extend({ secret: z.string() });

async function buildApp() {
  const notes = new Map([['1', { id: '1', text: 'first', secret: 'only admins read this' }]]);
  const meta: Record<string, unknown> = {};
  const members = new Map<string, Member>([
    ['ann', { id: 'ann', role: 'user', isActive: true }],
    ['bob', { id: 'bob', role: 'admin', isActive: true }],
  ]);
  const tokens = new TokenService({
    secret: 'an-mcp-test-secret-of-32-characters!',
    store: new MemoryRevocationStore(),
  });
  const api = procedures('notes', {
    getNote: p()
      .meta({ summary: 'A note' })
      .input(z.object({ id: z.string() }))
      .output({ public: Note, admin: NoteForAdmin }, (ctx) =>
        ctx.user?.role === 'admin' ? 'admin' : 'public',
      )
      .query(({ input }) => {
        const note = notes.get(input.id);
        if (note === undefined) throw new NotFoundError('No such note');
        return note;
      }),
    listNotes: p()
      .input(z.object({ limit: z.number().int().min(1).max(10).default(10) }))
      .output(z.object({ data: z.array(Note) }))
      .query(({ input }) => ({ data: [...notes.values()].slice(0, input.limit) })),
    createNote: p()
      .guard(authenticated)
      .use(rateLimit({ name: 'create', max: 3, window: 60_000 }))
      .input(z.object({ text: z.string().min(1) }))
      .output(Note)
      .mutation(({ input }) => {
        const note = { id: String(notes.size + 1), text: input.text, secret: 'made by a member' };
        notes.set(note.id, note);
        return note;
      }),
    updateNote: p()
      .guard(authenticated)
      .input(z.object({ id: z.string(), data: z.object({ text: z.string() }) }))
      .output(Note)
      .mutation(({ input }) => {
        const note = notes.get(input.id);
        if (note === undefined) throw new NotFoundError('No such note');
        note.text = input.data.text;
        return note;
      }),
    updateNoteMeta: p()
      .guard(authenticated)
      .rest({ method: 'PUT', path: '/notes/:id/meta' })
      // Merges keys into what is there: nothing is lost.
      .mcp({ destructive: false })
      .input(z.object({ id: z.string(), data: z.object({ meta: z.unknown() }) }))
      .output(z.object({ id: z.string() }))
      .mutation(({ input }) => {
        // A merge as apps write it: a `__proto__` key here would change this object's prototype.
        Object.assign(meta, input.data.meta);
        return { id: input.id };
      }),
    updateMember: p()
      .guard(selfOrAdmin)
      .rest({ method: 'PUT', path: '/members/:id' })
      .input(z.object({ id: z.string(), data: z.object({ role: z.literal('user') }) }))
      .output(z.object({ id: z.string() }))
      .mutation(({ input }) => ({ id: input.id })),
    deleteNote: p()
      .guard(admin)
      .input(z.object({ id: z.string() }))
      .mutation(({ input }) => {
        notes.delete(input.id);
      }),
  });
  const app = createApp<Ctx>({ logger: false });
  await app.register(authPlugin, { tokens, userLoader: (id) => members.get(id) });
  await app.register(mcpPlugin, { collections: ['notes'] });
  app.mount([api]);
  const tokenOf = async (id: string) => (await tokens.issuePair(id)).accessToken;
  return { app, meta, tokens, user: await tokenOf('ann'), admin: await tokenOf('bob') };
}

type Built = Awaited<ReturnType<typeof buildApp>>;

const targets: Array<{ name: string; start: (built: Built) => Promise<{ url: URL; fetch?: typeof fetch }> }> =
  [
    {
      name: 'Node (Fastify, a real socket)',
      start: async ({ app }) => ({
        url: new URL(
          '/mcp',
          await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false }),
        ),
      }),
    },
    {
      name: 'app.fetch',
      start: async ({ app }) => ({
        url: new URL('http://api.example/mcp'),
        fetch: ((input: string | URL | Request, init?: RequestInit) =>
          app.fetch(new Request(input, init), { ip: '127.0.0.1' })) as typeof fetch,
      }),
    },
  ];

describe.each(targets)('the MCP endpoint on $name', ({ name, start }) => {
  let built: Built;
  let url: URL;
  let through: typeof fetch | undefined;

  beforeAll(async () => {
    built = await buildApp();
    ({ url, fetch: through } = await start(built));
  });
  afterAll(() => built.app.close());

  const connect = async (token?: string) => {
    const client = new Client({ name: 'proceed-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(url, {
        ...(through === undefined ? {} : { fetch: through }),
        ...(token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
      }),
    );
    return client;
  };
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    (through ?? fetch)(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('speaks the newest protocol version of the SDK', async () => {
    expect(protocolVersions[0]).toBe(LATEST_PROTOCOL_VERSION);
    const client = await connect();
    expect(client.getServerVersion()).toMatchObject({ name: 'proceed' });
    await client.ping();
    await client.close();
  });

  it('lists to each caller the tools its guards let through: anonymous, a user, an admin', async () => {
    const names = async (token?: string) => {
      const client = await connect(token);
      const { tools } = await client.listTools();
      await client.close();
      return tools.map((tool) => tool.name);
    };
    expect(await names()).toEqual(['getNote', 'listNotes']);
    // updateMember's guard reads the path (the caller is the member it names): listed to any
    // signed-in caller, decided by the call.
    const forUsers = ['getNote', 'listNotes', 'createNote', 'updateNote', 'updateNoteMeta', 'updateMember'];
    expect(await names(built.user)).toEqual(forUsers);
    expect(await names(built.admin)).toEqual([...forUsers, 'deleteNote']);
  });

  it('describes each tool with its input and output schemas and hints from its method', async () => {
    const client = await connect(built.admin);
    const { tools } = await client.listTools();
    await client.close();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get('getNote')).toMatchObject({
      title: 'A note',
      inputSchema: {
        type: 'object',
        properties: { id: { type: 'string' } },
        required: ['id'],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
    });
    // Each object whose unknown keys the call refuses says so, as the OpenAPI document does.
    expect(byName.get('updateNote')?.inputSchema).toMatchObject({
      additionalProperties: false,
      properties: { data: { type: 'object', additionalProperties: false } },
    });
    // A view chosen per caller has no one output schema.
    expect(byName.get('getNote')?.outputSchema).toBeUndefined();
    expect(byName.get('listNotes')?.outputSchema).toMatchObject({ type: 'object', required: ['data'] });
    expect(byName.get('createNote')?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
    });
    expect(byName.get('deleteNote')?.annotations).toMatchObject({
      destructiveHint: true,
      idempotentHint: true,
    });
    // An update overwrites what is there, unless its procedure says it does not.
    expect(byName.get('updateNote')?.annotations).toMatchObject({ destructiveHint: true });
    expect(byName.get('updateNoteMeta')?.annotations).toMatchObject({ destructiveHint: false });
  });

  it("answers each caller through its own view: a user's agent never gets a field the admin's does", async () => {
    const call = async (token?: string) => {
      const client = await connect(token);
      const result = await client.callTool({ name: 'getNote', arguments: { id: '1' } });
      await client.close();
      return result;
    };
    const asUser = await call(built.user);
    expect(asUser.structuredContent).toEqual({ id: '1', text: 'first' });
    expect(JSON.stringify(asUser)).not.toContain('only admins');
    const rest = await (through ?? fetch)(new URL('/api/notes/1', url), {
      headers: { authorization: `Bearer ${built.user}` },
    });
    expect(asUser.structuredContent).toEqual(await rest.json());
    expect((await call(built.admin)).structuredContent).toEqual({
      id: '1',
      text: 'first',
      secret: 'only admins read this',
    });
  });

  it('gives refusals as results with isError and the problem, so that a model can correct itself', async () => {
    const client = await connect(built.user);
    // Listed first, as agents do: the SDK then checks each result against the tool's outputSchema.
    await client.listTools();
    const invalid = await client.callTool({ name: 'listNotes', arguments: { limit: 99 } });
    expect(problemIn(invalid)).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    // A read's arguments are no query string to the agent that sent them.
    const misnamed = await client.callTool({ name: 'listNotes', arguments: { limt: 5 } });
    expect(problemIn(misnamed)).toMatchObject({
      errors: [{ path: 'limt', message: expect.stringMatching(/^Unknown argument/) }],
    });
    const missing = await client.callTool({ name: 'getNote', arguments: { id: 'nope' } });
    expect(problemIn(missing)).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    const stray = await client.callTool({
      name: 'updateNote',
      arguments: { id: '1', data: { text: 'x' }, extra: 1 },
    });
    expect(problemIn(stray)).toMatchObject({
      status: 400,
      code: 'VALIDATION_FAILED',
      errors: [{ path: 'extra', message: expect.stringMatching(/^Unknown argument "extra"/) }],
    });

    const renamed = await client.callTool({
      name: 'updateNote',
      arguments: { id: '1', data: { text: 'first' } },
    });
    expect(renamed.structuredContent).toEqual({ id: '1', text: 'first' });
    const forbidden = await client.callTool({ name: 'deleteNote', arguments: { id: '1' } });
    expect(problemIn(forbidden)).toMatchObject({ status: 403, code: 'FORBIDDEN' });
    const self = await client.callTool({
      name: 'updateMember',
      arguments: { id: 'ann', data: { role: 'user' } },
    });
    expect(self.structuredContent).toEqual({ id: 'ann' });
    const other = await client.callTool({
      name: 'updateMember',
      arguments: { id: 'bob', data: { role: 'user' } },
    });
    expect(problemIn(other)).toMatchObject({ status: 403, code: 'FORBIDDEN' });
    await expect(client.callTool({ name: 'noSuchTool', arguments: {} })).rejects.toThrow(/noSuchTool/);
    await client.close();
  });

  it('refuses a key no JSON body may hold (__proto__) in the arguments as the REST route does, and in the envelope', async () => {
    const sent = '{"meta":{"__proto__":{"isAdmin":true}}}';
    const call = await post(
      `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"updateNoteMeta","arguments":{"id":"1","data":${sent}}}}`,
      { authorization: `Bearer ${built.user}` },
    );
    expect(call.status).toBe(200);
    expect(problemIn(((await call.json()) as { result: unknown }).result)).toMatchObject({
      status: 400,
      code: 'VALIDATION_FAILED',
      errors: [{ path: 'data.meta.__proto__' }],
    });
    const rest = await (through ?? fetch)(new URL('/api/notes/1/meta', url), {
      method: 'PUT',
      headers: { authorization: `Bearer ${built.user}`, 'content-type': 'application/json' },
      body: sent,
    });
    expect(rest.status).toBe(400);
    expect(await rest.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [{ path: 'meta.__proto__' }],
    });
    // Spelled with an escape, a constructor's prototype: refused the same way.
    for (const [arguments_, path] of [
      ['{"id":"1","data":{"meta":{"\\u005f_proto__":{}}}}', 'data.meta.__proto__'],
      ['{"id":"1","data":{"meta":{"constructor":{"prototype":{}}}}}', 'data.meta.constructor'],
    ]) {
      const refused = await post(
        `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"updateNoteMeta","arguments":${arguments_}}}`,
        { authorization: `Bearer ${built.user}` },
      );
      expect(problemIn(((await refused.json()) as { result: unknown }).result)).toMatchObject({
        code: 'VALIDATION_FAILED',
        errors: [{ path }],
      });
    }
    // None of the calls reached the handler: the merged object keeps its prototype.
    expect(Object.getPrototypeOf(built.meta)).toBe(Object.prototype);
    for (const envelope of [
      '{"jsonrpc":"2.0","id":4,"method":"ping","params":{"__proto__":{}}}',
      '{"jsonrpc":"2.0","id":4,"method":"ping","__proto__":{}}',
      // Only a tool call's arguments are its procedure's to check: anywhere else, the envelope's.
      '{"jsonrpc":"2.0","id":4,"method":"ping","params":{"arguments":{"__proto__":{"x":1}}}}',
      '{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"arguments":{"__proto__":{}}}}',
    ]) {
      const refused = await post(envelope);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ id: 4, error: { code: -32600 } });
    }
  });

  it("counts a tool call against its procedure's rate limit, as its REST route does", async () => {
    const client = await connect(built.user);
    const statuses: unknown[] = [];
    for (let index = 0; index < 4; index += 1) {
      const result = await client.callTool({ name: 'createNote', arguments: { text: `note ${index}` } });
      statuses.push(result.isError === true ? problemIn(result).code : 'created');
    }
    await client.close();
    expect(statuses).toEqual(['created', 'created', 'created', 'RATE_LIMITED']);
    // Counted before its input is read, as a REST body is: over the limit, a refused key is a 429.
    const over = await post(
      '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"createNote","arguments":{"text":"x","__proto__":{}}}}',
      { authorization: `Bearer ${built.user}` },
    );
    expect(problemIn(((await over.json()) as { result: unknown }).result)).toMatchObject({
      status: 429,
      code: 'RATE_LIMITED',
    });
  });

  it('answers a call that needs a user, sent without one, with 401 and where to learn how to sign in', async () => {
    const answer = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'deleteNote', arguments: { id: '1' } },
    });
    expect(answer.status).toBe(401);
    // The root's name, as the blog's contract binds it for the default path.
    expect(answer.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${url.origin}/.well-known/oauth-protected-resource"`,
    );
    // And where RFC 9728 puts the metadata of a resource with a path: after the well-known name.
    for (const path of [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
    ]) {
      const metadata = await (through ?? fetch)(new URL(path, url));
      expect(await metadata.json()).toEqual({
        resource: url.href,
        authorization_servers: [url.origin],
        bearer_methods_supported: ['header'],
      });
    }
  });

  it('answers every message sent with a bad or revoked token with 401, initialize, ping and notifications included', async () => {
    const revoked = await built.tokens.issuePair('ann');
    await built.tokens.revoke(await built.tokens.verifyAccess(revoked.accessToken));
    const initialize = {
      protocolVersion: protocolVersions[0],
      capabilities: {},
      clientInfo: { name: 't', version: '1' },
    };
    const messages: Record<string, object> = {
      initialize: { jsonrpc: '2.0', id: 1, method: 'initialize', params: initialize },
      ping: { jsonrpc: '2.0', id: 1, method: 'ping' },
      'tools/list': { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      'tools/call without a name': { jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} },
      'tools/call of no tool': { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'nothing' } },
      'tools/call with a bad _meta': {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'getNote', arguments: { id: '1' }, _meta: { 'proceedjs/if-match': 7 } },
      },
      'an unknown method': { jsonrpc: '2.0', id: 1, method: 'resources/list' },
      'a notification': { jsonrpc: '2.0', method: 'notifications/initialized' },
    };
    for (const token of ['not.a.token', revoked.accessToken])
      for (const [what, message] of Object.entries(messages)) {
        const answer = await post(message, { authorization: `Bearer ${token}` });
        expect(answer.status, `${what} with ${token}`).toBe(401);
        expect(answer.headers.get('www-authenticate')).toContain('resource_metadata=');
        expect(await answer.json()).toMatchObject({ code: 'INVALID_TOKEN' });
      }
    // With a token that holds, as without one: the protocol's own answers.
    const notified = await post(messages['a notification'], { authorization: `Bearer ${built.user}` });
    expect(notified.status).toBe(202);
    const unknown = await post(messages['an unknown method'], { authorization: `Bearer ${built.user}` });
    expect(await unknown.json()).toMatchObject({ error: { code: -32601 } });
  });

  it('refuses another origin (DNS rebinding, a page in a browser), a bad message and a stateless GET', async () => {
    const foreign = await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('content-type')).toContain('application/problem+json');
    const own = await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { origin: url.origin });
    expect(await own.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    const text = await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    const coded = await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'content-encoding': 'gzip' });
    expect(coded.status).toBe(415);
    expect(coded.headers.get('accept-encoding')).toBe('identity');
    expect(text.headers.get('content-type')).toContain('application/problem+json');
    const nameless = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call' });
    expect(await nameless.json()).toMatchObject({ id: 2, error: { code: -32602, message: /params\.name/ } });
    const broken = await post('{"jsonrpc":');
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ error: { code: -32700 } });
    for (const params of ['x', [1], null, 5]) {
      const shapeless = await post({ jsonrpc: '2.0', id: 8, method: 'tools/list', params });
      expect(await shapeless.json()).toMatchObject({ id: 8, error: { code: -32602 } });
    }
    const unknown = await post({ jsonrpc: '2.0', id: 7, method: 'resources/list' });
    expect(await unknown.json()).toMatchObject({ id: 7, error: { code: -32601 } });
    const version = await post(
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { 'mcp-protocol-version': '1999-01-01' },
    );
    expect(version.status).toBe(400);
    const notification = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(notification.status).toBe(202);
    // A client's answer to the server (an id and a result or an error) is taken without reply.
    expect((await post({ jsonrpc: '2.0', id: 3, result: {} })).status).toBe(202);
    for (const wrong of [
      { id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: null, method: 'ping' },
      { jsonrpc: '2.0', id: 1, method: 5 },
      // Neither a request, a notification nor an answer.
      { jsonrpc: '2.0', id: 1 },
      { jsonrpc: '2.0' },
      { jsonrpc: '2.0', method: 5 },
    ]) {
      const refused = await post(wrong);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ id: wrong.id ?? null, error: { code: -32600 } });
    }
    // An id too large for a number would be answered to as null: refused, as no id.
    const huge = await post('{"jsonrpc":"2.0","id":1e400,"method":"ping"}');
    expect(huge.status).toBe(400);
    expect(await huge.json()).toMatchObject({ id: null, error: { code: -32600 } });
    // A cursor is only what nextCursor gave: a page's start in decimal digits, within the list.
    for (const cursor of [' 1', '0x1', '1e3', '-1', '01', null, 1, '7', '100']) {
      const paged = await post({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: { cursor } });
      expect(await paged.json(), String(cursor)).toMatchObject({ id: 9, error: { code: -32602 } });
    }
    expect(
      await (await post({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: { cursor: '0' } })).json(),
    ).toMatchObject({
      id: 9,
      result: { tools: expect.any(Array) },
    });
    const stream = await (through ?? fetch)(url, { headers: { accept: 'text/event-stream' } });
    expect(stream.status).toBe(405);
    expect(stream.headers.get('allow')).toBe('POST');
    // Every method but POST says the same: none of them is served.
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const other = await (through ?? fetch)(url, { method });
      expect(other.status).toBe(405);
      expect(other.headers.get('allow')).toBe('POST');
      expect(other.headers.get('content-type')).toContain('application/problem+json');
    }
  });

  it.runIf(name.startsWith('Node'))(
    'listening on a loopback interface, answers to loopback names only: a rebound name is refused',
    async () => {
      const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
      const statusFor = (host: string, origin?: string) =>
        new Promise<number>((resolve, reject) => {
          const sent = request(
            url,
            {
              method: 'POST',
              headers: {
                host,
                'content-type': 'application/json',
                accept: 'application/json, text/event-stream',
                ...(origin === undefined ? {} : { origin }),
              },
            },
            (answer) => {
              answer.resume();
              resolve(answer.statusCode ?? 0);
            },
          );
          sent.on('error', reject);
          sent.end(ping);
        });
      // A page of evil.example.com, whose name now resolves to 127.0.0.1, calling "its own" origin.
      expect(await statusFor('evil.example.com', 'http://evil.example.com')).toBe(403);
      expect(await statusFor('evil.example.com')).toBe(403);
      expect(await statusFor(`localhost:${url.port}`)).toBe(200);
      expect(await statusFor(url.host, url.origin)).toBe(200);
      // The endpoint's own host under another scheme is another origin.
      expect(await statusFor(url.host, `https://${url.host}`)).toBe(403);
      // A loopback name with a port no URL can hold: where the endpoint names its own URL (the
      // 401's challenge, the metadata), a 400 problem, not a 500.
      const answerFor = (host: string, method: string, path: string, body?: string) =>
        new Promise<{ status: number; type: string }>((resolve, reject) => {
          const sent = request(
            new URL(path, url),
            { method, headers: { host, 'content-type': 'application/json', accept: 'application/json' } },
            (answer) => {
              answer.resume();
              resolve({ status: answer.statusCode ?? 0, type: answer.headers['content-type'] ?? '' });
            },
          );
          sent.on('error', reject);
          sent.end(body);
        });
      const needsUser = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'deleteNote', arguments: { id: '1' } },
      });
      for (const host of ['localhost:99999', 'localhost:x', '[::1]zz']) {
        const challenged = await answerFor(host, 'POST', url.pathname, needsUser);
        expect(challenged).toMatchObject({
          status: 400,
          type: expect.stringContaining('application/problem+json'),
        });
        const metadata = await answerFor(host, 'GET', '/.well-known/oauth-protected-resource');
        expect(metadata).toMatchObject({
          status: 400,
          type: expect.stringContaining('application/problem+json'),
        });
      }
      // The metadata names the server by its Host: a rebound name is refused there too.
      expect(
        await answerFor('evil.example.com', 'GET', '/.well-known/oauth-protected-resource'),
      ).toMatchObject({
        status: 403,
        type: expect.stringContaining('application/problem+json'),
      });
      expect((await answerFor(url.host, 'GET', '/.well-known/oauth-protected-resource')).status).toBe(200);
    },
  );
});

describe('the endpoint URL of the metadata behind a proxy', () => {
  it('takes X-Forwarded-Proto and X-Forwarded-Host from a trusted proxy only', async () => {
    const metadataFrom = async (trustProxy: string | false, ip: string) => {
      const app = createApp({ logger: false, trustProxy });
      await app.register(mcpPlugin, { collections: ['notes'] });
      app.mount([procedures('notes', { listNotes: procedure().query(() => []) })]);
      const answer = await app.fetch(
        new Request('http://api.example/.well-known/oauth-protected-resource', {
          headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'public.example' },
        }),
        { ip },
      );
      await app.close();
      return ((await answer.json()) as { resource: string }).resource;
    };
    // Any client's X-Forwarded-Proto was taken: the metadata named a scheme the client chose.
    expect(await metadataFrom(false, '203.0.113.9')).toBe('http://api.example/mcp');
    expect(await metadataFrom('loopback', '203.0.113.9')).toBe('http://api.example/mcp');
    expect(await metadataFrom('loopback', '127.0.0.1')).toBe('https://public.example/mcp');
  });

  it("takes a page of the proxy's public origin as the endpoint's own (the Origin check and the metadata agree)", async () => {
    const pingFrom = async (trustProxy: string | false, proto = 'https') => {
      const app = createApp({ logger: false, trustProxy });
      await app.register(mcpPlugin, { allowedHosts: ['internal.example'] });
      const headers = {
        origin: 'https://public.example',
        'x-forwarded-host': 'public.example',
        'x-forwarded-proto': proto,
      };
      const answer = await sendRpc(app, { method: 'ping' }, headers, 'internal.example');
      await app.close();
      return answer.status;
    };
    // sendRpc's peer is 127.0.0.1: a trusted proxy under 'loopback'.
    expect(await pingFrom('loopback')).toBe(200);
    expect(await pingFrom(false)).toBe(403);
    // The same host under another scheme is another origin, as for the cross-site check.
    expect(await pingFrom('loopback', 'http')).toBe(403);
  });
});

describe('the tools listed to a caller', () => {
  it("asks each guard with its route's own method and URL, as the call will", async () => {
    const app = createApp({ logger: false });
    await app.register(mcpPlugin, { collections: ['lab'] });
    const onGet = guard({ name: 'on GET', check: (ctx: BaseContext) => ctx.request.method === 'GET' });
    const underLab = guard({
      name: 'under lab',
      check: (ctx: BaseContext) => ctx.request.url.startsWith('/api/lab'),
    });
    const onPost = guard({ name: 'on POST', check: (ctx: BaseContext) => ctx.request.method === 'POST' });
    app.mount([
      procedures('lab', {
        listSamples: p()
          .guard(onGet)
          .guard(underLab)
          .query(() => []),
        getSample: p()
          .guard(onPost)
          .input(z.object({ id: z.string() }))
          .query(() => ({})),
      }),
    ]);
    const listed = await (await sendRpc(app, { method: 'tools/list' })).json();
    // getSample's guard refuses its own GET: listed before, as the carrying request is a POST.
    expect(listed.result.tools.map((tool: { name: string }) => tool.name)).toEqual(['listSamples']);
    const called = await (
      await sendRpc(app, { method: 'tools/call', params: { name: 'listSamples' } })
    ).json();
    expect(called.result.isError).toBeUndefined();
    await app.close();
  });
});

describe('a readOnly endpoint', () => {
  const notes = () =>
    procedures('notes', {
      listNotes: procedure().query(() => [{ id: '1', text: 'first' }]),
      getNote: procedure()
        .input(z.object({ id: z.string() }))
        .query(({ input }) => ({ id: input.id, text: 'first' })),
      createNote: procedure()
        .input(z.object({ text: z.string() }))
        .mutation(({ input }) => ({ id: '2', text: input.text })),
      deleteNote: procedure()
        .input(z.object({ id: z.string() }))
        .mutation(() => undefined),
    });

  it('lists and calls the reads of its collections only: a write is no tool', async () => {
    const app = createApp({ logger: false });
    await app.register(mcpPlugin, { collections: ['notes'], readOnly: true });
    app.mount([notes()]);
    const listed = await (await sendRpc(app, { method: 'tools/list' })).json();
    expect(listed.result.tools.map((tool: { name: string }) => tool.name)).toEqual(['listNotes', 'getNote']);
    const called = await (
      await sendRpc(app, { method: 'tools/call', params: { name: 'createNote', arguments: { text: 'x' } } })
    ).json();
    expect(called.error.code).toBe(-32602);
    await app.close();
  });

  it('refuses at start-up a write marked .mcp(), and a readOnly that is no boolean', async () => {
    const app = createApp({ logger: false });
    await app.register(mcpPlugin, { readOnly: true });
    app.mount([
      procedures('notes', {
        createNote: procedure()
          .mcp()
          .input(z.object({ text: z.string() }))
          .mutation(({ input }) => ({ id: '2', text: input.text })),
      }),
    ]);
    await expect(app.ready()).rejects.toThrow(
      'notes.createNote cannot be an MCP tool: it writes (POST), and mcpPlugin is readOnly',
    );
    await app.close();
    const misused = createApp({ logger: false });
    await expect(misused.register(mcpPlugin, { readOnly: 'yes' } as never)).rejects.toThrow(
      'mcpPlugin: readOnly is true or false, not "yes"',
    );
    await misused.close();
  });

  it('refuses at start-up .mcp({ destructive }) on a read', async () => {
    const app = createApp({ logger: false });
    await app.register(mcpPlugin, {});
    app.mount([
      procedures('notes', {
        listNotes: procedure()
          .mcp({ destructive: true })
          .query(() => []),
      }),
    ]);
    await expect(app.ready()).rejects.toThrow(
      'notes.listNotes: .mcp({ destructive }) is for a write; a read (GET) never is one',
    );
    await app.close();
  });
});

describe('a tool call with an Idempotency-Key', () => {
  it('replays the first answer to a create sent again with its key, as its REST route does', async () => {
    const notes: Array<{ id: string; text: string }> = [];
    const app = createApp({ logger: false });
    await app.register(idempotencyPlugin, { store: new MemoryIdempotencyStore(), creates: true });
    await app.register(mcpPlugin, { collections: ['notes'] });
    app.mount([
      procedures('notes', {
        createNote: procedure()
          .input(z.object({ text: z.string() }))
          .output(Note)
          .mutation(({ input }) => {
            const note = { id: String(notes.length + 1), text: input.text };
            notes.push(note);
            return note;
          }),
      }),
    ]);
    const create = async (key?: string) => {
      const answer = await sendRpc(
        app,
        { method: 'tools/call', params: { name: 'createNote', arguments: { text: 'once' } } },
        key === undefined ? {} : { 'idempotency-key': key },
        '127.0.0.1',
      );
      const { result } = (await answer.json()) as { result: { structuredContent: { id: string } } };
      return { ...result.structuredContent, replayed: answer.headers.get('idempotency-replayed') };
    };
    expect(await create('key-1')).toEqual({ id: '1', text: 'once', replayed: null });
    // As over REST, the answer says that it is the first one given again.
    expect(await create('key-1')).toEqual({ id: '1', text: 'once', replayed: 'true' });
    expect(await create()).toEqual({ id: '2', text: 'once', replayed: null });
    expect(notes).toHaveLength(2);
    await app.close();
  });
});

describe('a tool call with If-Match', () => {
  it("takes the request's If-Match as its REST route does: a stale tag is a 412 that changes nothing", async () => {
    // The records of the REST tests of If-Match (src/server/http-cache.test.ts), as tools.
    const { record, collection } = versionedRecords();
    const app = createApp({ logger: false });
    await app.register(mcpPlugin, { collections: ['records'] });
    app.mount([collection]);
    const tool = async (name: string, args: object, ifMatch?: string) => {
      const answer = await sendRpc(
        app,
        { method: 'tools/call', params: { name, arguments: args } },
        ifMatch === undefined ? {} : { 'if-match': ifMatch },
      );
      const { result } = (await answer.json()) as {
        result: { isError?: true; content: [{ text: string }] };
      };
      return result.isError === true ? JSON.parse(result.content[0].text) : 'done';
    };
    const tag = (await app.fetch(new Request('http://localhost/api/records/a'))).headers.get(
      'etag',
    ) as string;
    expect(await tool('updateRecord', { id: 'a', data: { title: 'changed' } }, tag)).toBe('done');
    expect(await tool('updateRecord', { id: 'a', data: { title: 'lost update' } }, tag)).toMatchObject({
      status: 412,
      code: 'PRECONDITION_FAILED',
    });
    expect(record).toMatchObject({ title: 'changed', version: 5 });
    // A read compares it with its answer's tag; a write that keeps no versions refuses a tag.
    expect(await tool('getRecord', { id: 'a' }, tag)).toMatchObject({ status: 412 });
    const current = (await app.fetch(new Request('http://localhost/api/records/a'))).headers.get('etag');
    expect(await tool('getRecord', { id: 'a' }, current as string)).toBe('done');
    expect(await tool('logRecord', { id: 'a' }, tag)).toMatchObject({ status: 412 });
    expect(await tool('logRecord', { id: 'a' }, '*')).toBe('done');
    await app.close();
  });
});

describe('a tool whose path has a parameter and no input', () => {
  it('lists the parameter among the arguments, required, and takes it', async () => {
    const app = createApp({ logger: false });
    await app.register(mcpPlugin, { collections: ['members'] });
    app.mount([
      procedures('members', {
        pingMember: procedure()
          .rest({ method: 'POST', path: '/members/:id/ping' })
          .output(z.object({ pinged: z.string() }))
          .mutation(({ ctx }) => ({ pinged: ctx.request.params.id ?? '' })),
      }),
    ]);
    const rpc = async (message: object) =>
      (await (await sendRpc(app, message)).json()) as { result: Record<string, unknown> };
    const { result: listed } = await rpc({ method: 'tools/list' });
    expect((listed.tools as Array<{ inputSchema: unknown }>)[0]?.inputSchema).toMatchObject({
      properties: { id: { type: 'string', minLength: 1, maxLength: 500 } },
      required: ['id'],
    });
    const { result } = await rpc({
      method: 'tools/call',
      params: { name: 'pingMember', arguments: { id: 'ann' } },
    });
    expect(result.structuredContent).toEqual({ pinged: 'ann' });
    await app.close();
  });
});

describe('mcpPlugin options', () => {
  it('refuses at start-up a pageSize that would page forever or break cursors, and a path without /', async () => {
    for (const pageSize of [0, -1, 1.5, Number.NaN]) {
      const app = createApp({ logger: false });
      await expect(app.register(mcpPlugin, { pageSize })).rejects.toThrow(/pageSize is a whole number/);
      await app.close();
    }
    const app = createApp({ logger: false });
    await expect(app.register(mcpPlugin, { path: 'mcp' })).rejects.toThrow(/path starts with \//);
    await app.close();
  });

  it('refuses origins that could never match, a resource that is no URL and a collection never mounted', async () => {
    for (const [options, message] of [
      [
        { allowedOrigins: ['https://app.example.com/'] },
        /allowedOrigins holds origins as a browser names them/,
      ],
      [{ allowedOrigins: 'https://app.example.com' }, /allowedOrigins is a list of origins/],
      [{ allowedOrigins: ['https://app.example.com/path'] }, /allowedOrigins holds origins/],
      [{ allowedOrigins: ['app.example.com'] }, /allowedOrigins holds origins/],
      [
        { authorizationServers: 'https://auth.example.com' },
        /authorizationServers is a list of the issuers' URLs/,
      ],
      [{ resource: 'not a url' }, /resource is the endpoint's absolute URL/],
    ] as const) {
      const app = createApp({ logger: false });
      await expect(app.register(mcpPlugin, options as never), JSON.stringify(options)).rejects.toThrow(
        message,
      );
      await app.close();
    }
    // Origins of any scheme a browser sends: an extension's, an editor's webview.
    for (const origin of [
      'chrome-extension://abcdefghijklmnop',
      'vscode-webview://x1',
      'http://localhost:5173',
    ]) {
      const allowing = createApp({ logger: false });
      await expect(allowing.register(mcpPlugin, { allowedOrigins: [origin] }), origin).resolves.toBeDefined();
      await allowing.close();
    }
    const app = createApp({ logger: false });
    await app.register(mcpPlugin, {
      collections: ['notez'],
      authorizationServers: ['https://auth.example.com/realms/a'],
    });
    app.mount([procedures('notes', { listNotes: procedure().query(() => []) })]);
    // A misspelt collection gave no tools, and no word of it.
    await expect(app.ready()).rejects.toThrow(
      /no collection named "notez" is mounted \(did you mean "notes"\?\)/,
    );
    await app.close();
  });

  it("refuses .mcp()'s unknown keys and values that are not text: a tool is named after its procedure", () => {
    expect(() => procedure().mcp({ name: 'renamed' } as never)).toThrow(/^\.mcp\(\): unknown option "name"/);
    expect(() => procedure().mcp({ titel: 'Notes' } as never)).toThrow(/did you mean "title"/);
    expect(() => procedure().mcp({ title: 42 } as never)).toThrow(/title is text/);
    expect(() => procedure().mcp({ destructive: 'no' } as never)).toThrow(/destructive is true or false/);
    expect(() => procedure().mcp({ title: 'Notes', description: 'All notes' })).not.toThrow();
  });
});

describe('the MCP endpoint with allowedHosts', () => {
  it('answers to the hosts named, whatever interface it listens on', async () => {
    const app = createApp({ logger: false });
    await app.register(mcpPlugin, { allowedHosts: ['api.example'] });
    const ping = (host: string) => sendRpc(app, { method: 'ping' }, {}, host);
    expect((await ping('api.example')).status).toBe(200);
    expect((await ping('api.example:8443')).status).toBe(200);
    const refused = await ping('other.example');
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: 'FORBIDDEN' });
    await app.close();
  });
});

describe('a tool call of a route with path parameters', () => {
  it("gives the handler the URL its route's own request would have, parameters encoded", async () => {
    const app = createApp({ logger: false });
    await app.register(mcpPlugin, { collections: ['pages'] });
    app.mount([
      procedures('pages', {
        getPage: procedure()
          .rest({ method: 'GET', path: '/pages/:section/:slug' })
          .input(z.object({ section: z.string(), slug: z.string() }))
          .output(z.object({ url: z.string() }))
          .query(({ ctx }) => ({ url: ctx.request.url })),
      }),
    ]);
    const called = await sendRpc(app, {
      method: 'tools/call',
      params: { name: 'getPage', arguments: { section: 'a b', slug: 'c/d' } },
    });
    const rest = await app.fetch(new Request('http://localhost/api/pages/a%20b/c%2Fd'));
    expect(
      ((await called.json()) as { result: { structuredContent: unknown } }).result.structuredContent,
    ).toEqual({ url: '/api/pages/a%20b/c%2Fd' });
    expect(await rest.json()).toEqual({ url: '/api/pages/a%20b/c%2Fd' });
    await app.close();
  });

  it('refuses a path parameter that no path could carry, before a guard reading the path or the handler sees it', async () => {
    const app = createApp({ logger: false });
    await app.register(mcpPlugin, { collections: ['members'] });
    const suspended: unknown[] = [];
    app.mount([
      procedures('members', {
        suspendMember: procedure()
          .rest({ method: 'POST', path: '/members/:id/suspend' })
          // A guard on the path alone, beside an input that takes any value as text.
          .guard(
            guard({
              name: 'not an admin',
              check: (ctx: BaseContext) => ctx.request.params.id !== 'admin',
            }),
          )
          .input(z.object({ id: z.coerce.string(), reasonId: z.string().optional() }))
          .output(z.object({ suspended: z.string() }))
          .mutation(({ input }) => {
            suspended.push(input.id);
            return { suspended: input.id };
          }),
      }),
    ]);
    const call = async (args: unknown) => {
      const answer = await sendRpc(app, {
        method: 'tools/call',
        params: { name: 'suspendMember', arguments: args },
      });
      return answer.status === 200 ? ((await answer.json()) as { result: unknown }).result : answer.status;
    };
    // The guard refuses an anonymous caller: 401, over HTTP as any tool call without credentials.
    expect(await call({ id: 'admin' })).toBe(401);
    for (const id of [['admin'], true, null, { id: 'admin' }, '']) {
      const problem = problemIn(await call({ id }));
      expect(problem).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
      expect(JSON.stringify(problem)).toContain("parameter of the route's path");
    }
    expect(problemIn(await call({}))).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    // Sent under another name: the refusal says which argument it is; never one the input names.
    for (const [sent, message] of [
      [{ memberId: 'ann' }, 'Required (sent as "memberId"? The argument is "id")'],
      [{ idd: 'ann' }, 'Required (sent as "idd"? The argument is "id")'],
      [{ name: 'ann' }, 'Required'],
      [{ reasonId: 'r1' }, 'Required'],
    ] as const)
      expect(problemIn(await call(sent))).toMatchObject({ errors: [{ path: 'id', message }] });
    // Longer than any path parameter a REST request may send (500 characters).
    expect(problemIn(await call({ id: 'a'.repeat(501) }))).toMatchObject({
      status: 400,
      code: 'VALIDATION_FAILED',
    });
    expect(suspended).toEqual([]);
    expect(await call({ id: 7 })).toMatchObject({ structuredContent: { suspended: '7' } });
    expect(suspended).toEqual(['7']);
    await app.close();
  });
});

describe("a tool's output schema", () => {
  it('asserts no format, so that the SDK client takes every value the input validator took', async () => {
    const app = createApp({ logger: false });
    await app.register(mcpPlugin, { collections: ['contacts'] });
    const Contact = z.object({
      email: z.email(),
      id: z.uuid(),
      seen: z.date(),
      // A property named `format` is data, not the keyword: it stays.
      format: z.object({ kind: z.string() }),
      links: z.array(z.object({ href: z.url() })),
    });
    app.mount([
      procedures('contacts', {
        createContact: procedure()
          .input(z.object({ email: z.email() }))
          .output(Contact)
          .mutation(({ input }) => ({
            email: input.email,
            id: '0193c9a2-7d4e-7b1a-9f3e-2a6b1c5d8e90',
            seen: new Date('2026-12-08T00:00:00Z'),
            format: { kind: 'card' },
            links: [{ href: 'https://example.com/a' }],
          })),
      }),
    ]);
    const client = new Client({ name: 'proceed-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('http://api.example/mcp'), {
        fetch: ((input: string | URL | Request, init?: RequestInit) =>
          app.fetch(new Request(input, init), { ip: '127.0.0.1' })) as typeof fetch,
      }),
    );
    const { tools } = await client.listTools();
    const outputSchema = tools[0]?.outputSchema as Record<string, Record<string, Record<string, unknown>>>;
    expect(JSON.stringify(outputSchema)).not.toContain('"format":"');
    expect(outputSchema.properties?.email).toMatchObject({ type: 'string', pattern: expect.any(String) });
    expect(outputSchema.properties?.format).toMatchObject({ type: 'object', required: ['kind'] });
    // An address Zod takes and Ajv's `email` format does not (a label ending in a hyphen): the
    // client checked it against the output schema, and took it.
    const result = await client.callTool({ name: 'createContact', arguments: { email: 'eve@trial-.test' } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      email: 'eve@trial-.test',
      seen: '2026-12-08T00:00:00.000Z',
    });
    await client.close();
    await app.close();
  });
});

describe('the MCP endpoint called from a page of another origin', () => {
  it("lets the page send MCP-Protocol-Version, which the SDK's client sends after initialize", async () => {
    const page = 'https://agent.example';
    const app = createApp({ logger: false, cors: { origins: [page] } });
    await app.register(mcpPlugin, { collections: ['notes'], allowedOrigins: [page] });
    app.mount([
      procedures('notes', {
        listNotes: procedure()
          .input(z.object({}))
          .query(() => ({ data: [] })),
      }),
    ]);
    const preflight = await app.fetch(
      new Request('http://api.example/mcp', {
        method: 'OPTIONS',
        headers: {
          origin: page,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type,mcp-protocol-version',
        },
      }),
    );
    expect(preflight.status).toBe(204);
    const allowed = (preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(', ');
    expect(allowed).toEqual(expect.arrayContaining(['content-type', 'mcp-protocol-version']));
    await app.close();
  });
});

describe("a tool call's _meta: the record's version and a key, per call", () => {
  it('gives each result the tag its REST answer carries, and takes If-Match and Idempotency-Key from _meta', async () => {
    const { record, collection } = versionedRecords();
    const notes: string[] = [];
    const app = createApp({ logger: false });
    await app.register(idempotencyPlugin, { store: new MemoryIdempotencyStore(), creates: true });
    await app.register(mcpPlugin, { collections: ['records', 'notes'] });
    app.mount([
      collection,
      procedures('notes', {
        createNote: procedure()
          .input(z.object({ text: z.string() }))
          .output(Note)
          .mutation(({ input }) => {
            notes.push(input.text);
            return { id: String(notes.length), text: input.text };
          }),
      }),
    ]);
    const client = new Client({ name: 'proceed-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('http://localhost/mcp'), {
        fetch: ((input: string | URL | Request, init?: RequestInit) =>
          app.fetch(new Request(input, init), { ip: '127.0.0.1' })) as typeof fetch,
      }),
    );
    const etag = (result: { _meta?: Record<string, unknown> | undefined }) =>
      result._meta?.['proceedjs/etag'];
    const read = await client.callTool({ name: 'getRecord', arguments: { id: 'a' } });
    const rest = await app.fetch(new Request('http://localhost/api/records/a'));
    expect(etag(read)).toBe(rest.headers.get('etag'));
    const update = (title: string, ifMatch: unknown) =>
      client.callTool({
        name: 'updateRecord',
        arguments: { id: 'a', data: { title } },
        _meta: { 'proceedjs/if-match': ifMatch },
      });
    const updated = await update('changed', etag(read));
    expect(updated.isError).toBeFalsy();
    // A write's result carries its new version's tag, as its REST answer's ETag does.
    expect(etag(updated)).toMatch(/^"/);
    expect(etag(updated)).not.toBe(etag(read));
    const stale = await update('lost update', etag(read));
    expect(stale.isError).toBe(true);
    expect(JSON.parse((stale.content as [{ text: string }])[0].text)).toMatchObject({
      status: 412,
      code: 'PRECONDITION_FAILED',
    });
    expect(record.title).toBe('changed');
    expect((await update('again', etag(updated))).isError).toBeFalsy();
    await expect(update('x', 42)).rejects.toThrow(/proceedjs\/if-match/);
    // Nothing a header could not carry reaches ctx.request.headers.
    await expect(update('x', '"1"\r\nX-Injected: 1')).rejects.toThrow(/printable ASCII/);

    const create = (key: string) =>
      client.callTool({
        name: 'createNote',
        arguments: { text: 'once' },
        _meta: { 'proceedjs/idempotency-key': key },
      });
    const first = await create('key-1');
    expect(first.structuredContent).toEqual({ id: '1', text: 'once' });
    // Not versioned: no tag a later write could take.
    expect(first._meta).toBeUndefined();
    expect((await create('key-1')).structuredContent).toEqual({ id: '1', text: 'once' });
    expect((await create('key-2')).structuredContent).toEqual({ id: '2', text: 'once' });
    expect(notes).toEqual(['once', 'once']);
    // A create's argument the input does not name: said as a read's is, not as a body's key.
    const misspelt = await client.callTool({ name: 'createNote', arguments: { txt: 'x' } });
    expect(problemIn(misspelt)).toMatchObject({
      errors: expect.arrayContaining([{ path: 'txt', message: expect.stringMatching(/^Unknown argument/) }]),
    });
    await client.close();
    await app.close();
  });
});

describe('an endpoint on another path', () => {
  it('serves its metadata where RFC 9728 puts it, and its 401 names that', async () => {
    const app = createApp({ logger: false });
    const tokens = new TokenService({ secret: 'a'.repeat(32), store: new MemoryRevocationStore() });
    await app.register(authPlugin, { tokens, userLoader: () => undefined });
    await app.register(mcpPlugin, { path: '/agents/mcp', collections: ['notes'] });
    app.mount([
      procedures('notes', {
        createNote: p()
          .guard(authenticated)
          .input(z.object({ text: z.string() }))
          .mutation(() => ({ id: '1' })),
      }),
    ]);
    const answer = await sendRpc(
      app,
      { method: 'tools/call', params: { name: 'createNote', arguments: { text: 'x' } } },
      {},
      'localhost',
      '/agents/mcp',
    );
    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toBe(
      'Bearer resource_metadata="http://localhost/.well-known/oauth-protected-resource/agents/mcp"',
    );
    const metadata = await app.fetch(
      new Request('http://localhost/.well-known/oauth-protected-resource/agents/mcp'),
    );
    expect(await metadata.json()).toMatchObject({ resource: 'http://localhost/agents/mcp' });
    expect(
      (await app.fetch(new Request('http://localhost/.well-known/oauth-protected-resource'))).status,
    ).toBe(404);
    await app.close();
  });
});
