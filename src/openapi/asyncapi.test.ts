import asyncApiSpecs from '@asyncapi/specs';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { authenticated } from '../auth/guards.js';
import { type AuthContext, authPlugin } from '../auth/plugin.js';
import { TokenService } from '../auth/tokens.js';
import { procedure, procedures } from '../core/procedure.js';
import { webSocket } from '../core/sockets.js';
import { createApp } from '../server/create-app.js';
import { asyncApiOf, toDraft07 } from './asyncapi.js';
import { generateOpenApi } from './generate.js';
import { docsPlugin } from './plugin.js';

type Ctx = AuthContext<{ id: string }>;
const p = () => procedure<Ctx>();
const Said = z.object({ text: z.string().min(1).max(500) });
const Echoed = z.object({ text: z.string(), at: z.date() });

async function documentedApp() {
  const app = createApp<Ctx>({ logger: false });
  await app.register(authPlugin, {
    tokens: new TokenService({ secret: 'asyncapi-secret-that-is-at-least-32-bytes' }),
    userLoader: (id) => ({ id }),
  });
  app.mount([
    procedures('rooms', {
      roomSocket: p()
        .rest({ method: 'GET', path: '/rooms/:room/socket' })
        .guard(authenticated)
        .meta({ summary: 'Chat in a room' })
        .input(z.object({ room: z.string().regex(/^[a-z]+$/), since: z.number().int().optional() }))
        .output(webSocket({ receive: Said, send: Echoed, maxMessageSize: 2048 }))
        .query(async function* ({ messages }) {
          for await (const said of messages) yield { text: said.text, at: new Date() };
        }),
      listRooms: p().query(() => [] as string[]),
    }),
    procedures('ticks', {
      tickSocket: p()
        .rest({ method: 'GET', path: '/ticks' })
        .output(webSocket({ receive: z.object({ every: z.number() }), send: z.object({ n: z.number() }) }))
        .query(async () => undefined),
    }),
  ]);
  return app;
}

/** AsyncAPI's own JSON Schema of a 3.0.0 document (the one its parser and Studio check first). */
function asyncApiValidator() {
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
  addFormats.default(ajv);
  return ajv.compile(asyncApiSpecs.schemasWithoutId['3.0.0'] as object);
}

describe('the AsyncAPI document of the socket procedures', () => {
  it("is a valid AsyncAPI 3.0.0 document, by AsyncAPI's own schema", async () => {
    const openapi = generateOpenApi({
      app: await documentedApp(),
      info: { title: 'Rooms', version: '2.0.0' },
      servers: [{ url: 'https://api.example.com/v2', description: 'production' }, { url: '/' }],
    });
    const document = asyncApiOf(openapi);
    const validate = asyncApiValidator();
    const valid = validate(document);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
    // The check can fail: AsyncAPI 2's action is not one of 3.0's.
    const broken = structuredClone(document) as { operations: Record<string, { action: string }> };
    for (const operation of Object.values(broken.operations)) operation.action = 'publish';
    expect(validate(broken)).toBe(false);
    expect(document?.servers).toEqual({
      default: { host: 'api.example.com', protocol: 'wss', pathname: '/v2', description: 'production' },
    });
  });

  it('has a channel per socket route: its path, messages both ways, the error frame and the query binding', async () => {
    const openapi = generateOpenApi({
      app: await documentedApp(),
      info: { title: 'Rooms', version: '2.0.0' },
    });
    const document = asyncApiOf(openapi);
    expect(Object.keys(document?.channels ?? {})).toEqual(['roomSocket', 'tickSocket']);
    const room = document?.channels.roomSocket;
    expect(room).toMatchObject({
      address: '/api/rooms/{room}/socket',
      title: 'Chat in a room',
      parameters: { room: { description: expect.any(String) } },
      'x-proceed-max-message-size': 2048,
      bindings: { ws: { method: 'GET', bindingVersion: '0.1.0' } },
    });
    expect(Object.keys(room?.bindings.ws.query?.properties ?? {})).toEqual(['since']);
    const received = document?.components.messages.roomSocketReceived;
    // The same schema the OpenAPI document gives the socket's messages, components and all.
    const switching = openapi.paths['/api/rooms/{room}/socket']?.get?.responses['101'] as unknown as
      | { 'x-proceed-socket': { receive: unknown; send: unknown } }
      | undefined;
    const socket = switching?.['x-proceed-socket'];
    expect(socket).toBeDefined();
    expect(received?.payload).toEqual(socket?.receive);
    // A key the message schema does not name is refused, and the schema says so.
    expect(document?.components.messages.tickSocketReceived?.payload).toMatchObject({
      type: 'object',
      additionalProperties: false,
    });
    expect(document?.components.messages.roomSocketSent?.payload).toEqual(socket?.send);
    expect(document?.operations.roomSocketReceive).toMatchObject({
      action: 'receive',
      channel: { $ref: '#/channels/roomSocket' },
      messages: [{ $ref: '#/channels/roomSocket/messages/received' }],
      security: [{ $ref: '#/components/securitySchemes/accessToken' }],
    });
    expect(document?.operations.roomSocketSend?.messages).toEqual([
      { $ref: '#/channels/roomSocket/messages/sent' },
      { $ref: '#/channels/roomSocket/messages/error' },
    ]);
    // No guard, no security; no query, a binding that says WebSocket all the same.
    expect(document?.operations.tickSocketSend?.security).toBeUndefined();
    expect(document?.channels.tickSocket?.bindings).toEqual({
      ws: { method: 'GET', bindingVersion: '0.1.0' },
    });
    expect(document?.components.securitySchemes?.accessToken).toMatchObject({
      in: 'query',
      name: 'access_token',
    });
    expect(Object.keys(document?.components.schemas ?? {})).toContain('Problem');
  });

  it('is undefined for an app without sockets', () => {
    const app = createApp({ logger: false }).mount([
      procedures('rooms', { listRooms: procedure().query(() => []) }),
    ]);
    expect(asyncApiOf(generateOpenApi({ app, info: { title: 'Rooms', version: '1' } }))).toBeUndefined();
  });

  it('is served beside the OpenAPI document by the docs plugin, a 404 problem for an app without sockets', async () => {
    const app = await documentedApp();
    await app.register(docsPlugin, { openapi: { info: { title: 'Rooms', version: '2.0.0' } } });
    const json = await app.inject({ url: '/api/docs/asyncapi/json' });
    expect(json.statusCode).toBe(200);
    expect(json.json()).toEqual(
      asyncApiOf(generateOpenApi({ app, info: { title: 'Rooms', version: '2.0.0' } })),
    );
    const yaml = await app.inject({ url: '/api/docs/asyncapi/yaml' });
    expect(yaml.headers['content-type']).toMatch(/^application\/x-yaml/);
    expect(yaml.body).toContain('asyncapi: 3.0.0');

    const plain = createApp({ logger: false }).mount([
      procedures('rooms', { listRooms: procedure().query(() => []) }),
    ]);
    await plain.register(docsPlugin, { openapi: { info: { title: 'Rooms', version: '1' } } });
    const missing = await plain.inject({ url: '/api/docs/asyncapi/json' });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it("writes its schemas in AsyncAPI's format (draft 07's superset): tuples, a $ref beside other keywords, $defs", () => {
    expect(
      toDraft07({
        type: 'object',
        properties: {
          pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false },
          author: { $ref: '#/components/schemas/User', description: 'who wrote it' },
          node: { $ref: '#/$defs/Node' },
          examples: { type: 'string', examples: [{ $ref: 'not a schema' }] },
        },
        $defs: { Node: { type: 'object' } },
      }),
    ).toEqual({
      type: 'object',
      properties: {
        pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }], additionalItems: false },
        author: { description: 'who wrote it', allOf: [{ $ref: '#/components/schemas/User' }] },
        node: { $ref: '#/definitions/Node' },
        examples: { type: 'string', examples: [{ $ref: 'not a schema' }] },
      },
      definitions: { Node: { type: 'object' } },
    });
  });
});
