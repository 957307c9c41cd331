/**
 * The mistakes app developers make, caught at start-up or named in the log (docs/procedures.md,
 * "Mistakes caught early"; docs/auth.md, "Guards"). The compile-time half is in
 * src/auth/plugin.test-d.ts.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { admin, allOf, anyOf, authenticated, hasRole } from '../auth/guards.js';
import { authPlugin } from '../auth/plugin.js';
import { TokenService } from '../auth/tokens.js';
import { guard } from '../core/guards.js';
import { MemoryIdempotencyStore } from '../core/idempotency.js';
import { closestName, refuseUnknownOptions } from '../core/options.js';
import { procedure, procedures } from '../core/procedure.js';
import { webSocket } from '../core/sockets.js';
import { rateLimit } from '../core/steps.js';
import { idempotencyPlugin } from '../idempotency/plugin.js';
import { metricsPlugin } from '../metrics/plugin.js';
import { docsPlugin } from '../openapi/plugin.js';
import { createApp } from './create-app.js';

const secret = 'a-test-secret-that-is-long-enough-32+';

const posts = procedures('posts', {
  listPosts: procedure().query(() => []),
  deletePost: procedure<{ user?: { id: string; role: string } }>()
    .guard(admin)
    .input(z.object({ id: z.string() }))
    .mutation(() => undefined),
});

describe('unknown options', () => {
  it('names the nearest valid key, and lists the known ones', () => {
    expect(closestName('contxt', ['context', 'logger'])).toBe('context');
    expect(closestName('routePrefx', ['routePrefix', 'collections', 'openapi'])).toBe('routePrefix');
    expect(closestName('zzz', ['context', 'logger'])).toBeUndefined();
    expect(() => refuseUnknownOptions('thing', { a: 1, colour: 2 }, ['a', 'color'])).toThrow(
      'thing: unknown option "colour" (did you mean "color"?). Known options: a, color',
    );
    expect(() => refuseUnknownOptions('thing', 'yes', ['a'])).toThrow(
      'thing: options must be an object, got the string "yes"',
    );
    expect(() => refuseUnknownOptions('thing', undefined, ['a'])).not.toThrow();
  });

  it('refuses them on createApp, its nested options, and mount', () => {
    expect(() => createApp({ logger: false, contxt: () => ({}) } as never)).toThrow(
      /^createApp: unknown option "contxt" \(did you mean "context"\?\)/,
    );
    expect(() => createApp({ logger: false, cors: { origin: ['https://a.example'] } } as never)).toThrow(
      /^createApp cors: unknown option "origin" \(did you mean "origins"\?\)/,
    );
    expect(() => createApp({ logger: false, timeouts: { header: 1000 } } as never)).toThrow(
      /did you mean "headers"/,
    );
    expect(() => createApp({ logger: false, compression: false })).not.toThrow();
    expect(() => createApp({ logger: false }).mount([posts], { prefx: '/v1' } as never)).toThrow(
      /^mount: unknown option "prefx" \(did you mean "prefix"\?\)/,
    );
  });

  it('refuses them on every plugin', async () => {
    const app = createApp({ logger: false });
    await expect(
      app.register(docsPlugin, {
        openapi: { info: { title: 'T', version: '1' } },
        routePrefx: '/docs',
      } as never),
    ).rejects.toThrow(/^docsPlugin: unknown option "routePrefx" \(did you mean "routePrefix"\?\)/);
    await expect(
      app.register(docsPlugin, { openapi: { info: { title: 'T', version: '1' }, server: [] } } as never),
    ).rejects.toThrow(/^docsPlugin openapi: unknown option "server" \(did you mean "servers"\?\)/);
    await expect(app.register(authPlugin, { userLoder: () => undefined } as never)).rejects.toThrow(
      /^authPlugin: unknown option "userLoder" \(did you mean "userLoader"\?\)/,
    );
    await expect(app.register(metricsPlugin, { port: 0, hots: '127.0.0.1' } as never)).rejects.toThrow(
      /^metricsPlugin: unknown option "hots" \(did you mean "host"\?\)/,
    );
    // Found out only at listen before.
    await expect(app.register(metricsPlugin, { port: 70_000 })).rejects.toThrow(/an integer from 0 to 65535/);
    await expect(
      app.register(idempotencyPlugin, { store: new MemoryIdempotencyStore(), ttls: 1 } as never),
    ).rejects.toThrow(/^idempotencyPlugin: unknown option "ttls" \(did you mean "ttl"\?\)/);
    // Copied into the document as given: an invalid one (a server with no url), or a typo published.
    for (const [openapi, message] of [
      [{ info: { title: 'T', version: '1', descripton: 'x' } }, /^openapi info: unknown option "descripton"/],
      [
        { info: { title: 'T', version: '1' }, servers: [{ uri: '/' }] },
        /^openapi servers entry: unknown option "uri"/,
      ],
      [
        { info: { title: 'T', version: '1' }, servers: 'https://x' },
        /^openapi servers must be a list of \{ url \}/,
      ],
    ] as const)
      await expect(app.register(docsPlugin, { openapi } as never), JSON.stringify(openapi)).rejects.toThrow(
        message,
      );
    await expect(
      app.register(docsPlugin, {
        openapi: {
          info: { title: 'T', version: '1', 'x-logo': { url: '/l.png' } },
          servers: [{ url: '/{version}', variables: { version: { default: 'v1' } } }],
        },
      }),
    ).resolves.toBeDefined();
  });

  it('refuses them on guard() and .rest()', () => {
    expect(() => guard({ name: 'x', check: () => true, requireUser: true } as never)).toThrow(
      /^guard "x": unknown option "requireUser" \(did you mean "requiresUser"\?\)/,
    );
    expect(() => procedure().rest({ method: 'GET', path: '/x', stauts: 200 } as never)).toThrow(
      /^\.rest\(\): unknown option "stauts" \(did you mean "status"\?\)/,
    );
  });
});

describe('option values of the wrong kind', () => {
  it('refuses them on createApp at once, naming the option (read as given, each had an effect)', () => {
    const refused: Array<[object, RegExp]> = [
      // NaN and '1mb' turned the limit off on Node's http module and app.fetch.
      [{ bodyLimit: Number.NaN }, /bodyLimit must be a whole number of bytes/],
      [{ bodyLimit: '1mb' }, /bodyLimit must be a whole number of bytes/],
      [{ bodyLimit: 0 }, /bodyLimit must be a whole number of bytes/],
      // Read by truthiness: 'no' showed internal messages in 500 answers.
      [{ exposeErrors: 'no' }, /exposeErrors must be true or false/],
      [{ entityTags: 'false' }, /entityTags must be true or false/],
      [{ requestIds: 0 }, /requestIds must be true or false/],
      [{ userFromContext: 'true' }, /userFromContext must be true or false/],
      [{ inspect: 1 }, /inspect must be true or false/],
      // A timer fires after 1 ms for any of these: requests in flight were cut at close().
      [{ shutdownTimeout: Number.NaN }, /shutdownTimeout must be an integer/],
      [{ shutdownTimeout: -5 }, /shutdownTimeout must be an integer/],
      [{ shutdownTimeout: 3e9 }, /shutdownTimeout must be an integer/],
      [{ trustProxy: 0 }, /trustProxy is true, false, a number of proxy hops \(1 or more\)/],
      [{ trustProxy: 1.5 }, /trustProxy is true, false, a number of proxy hops/],
      [{ trustProxy: 'nonsense' }, /^createApp: trustProxy: /],
      [{ context: 42 }, /context must be a function/],
      [{ health: { check: 'x' } }, /health.check must be a function/],
      // Taken as the default logger, or failed with pino's own words.
      [{ logger: { levl: 'debug' } }, /^createApp logger: unknown option "levl" \(did you mean "level"\?\)/],
      [{ logger: 'debug' }, /logger is true, false or \{ level, pretty, stream \}/],
      [{ logger: { level: 'nope' } }, /level is one of fatal, error, warn, info, debug, trace, silent/],
      [{ logger: { pretty: 'yes' } }, /pretty is true or false/],
      // Walked letter by letter, or called a secret too short.
      [{ csrf: { trustedOrigins: 'https://admin.example.com' } }, /csrf.trustedOrigins is a list of origins/],
      [{ cookies: { secrets: 'x'.repeat(40) } }, /cookies.secrets is a list of secrets/],
    ];
    for (const [options, message] of refused)
      expect(() => createApp({ logger: false, ...options } as never), JSON.stringify(options)).toThrow(
        message,
      );
    for (const options of [{ bodyLimit: 10 }, { shutdownTimeout: 0 }, { trustProxy: 'loopback, 10.0.0.0/8' }])
      expect(() => createApp({ logger: false, ...options })).not.toThrow();
  });

  it('refuses them on app.listen before listening: an unknown key, an empty host, a port no socket has', async () => {
    const app = createApp({ logger: false });
    for (const [options, message] of [
      [{ hostname: '0.0.0.0' }, /^app.listen: unknown option "hostname"/],
      [{ handleSignal: false }, /did you mean "handleSignals"/],
      [{ host: '' }, /host must name an interface/],
      [{ port: 70_000 }, /port must be an integer from 0 to 65535/],
      [{ port: '3x' }, /port must be an integer/],
      [{ logRoutes: 'no' }, /logRoutes must be true or false/],
    ] as const)
      await expect(app.listen(options as never), JSON.stringify(options)).rejects.toThrow(message);
    // Digits as text, as `process.env.PORT` gives them, are a port.
    expect(await app.listen({ port: '0' as never, handleSignals: false, logRoutes: false })).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+$/,
    );
    await app.close();
  });
});

describe('the options of steps, plugins and sockets', () => {
  it('refuses a rule, a limit change, a plugin flag or a socket option that would change nothing', async () => {
    // Each was accepted and left the default in place.
    expect(() => rateLimit({ name: 'auth', max: 2, windowMs: 1000 } as never)).toThrow(
      /^rateLimit: unknown option "windowMs"/,
    );
    for (const change of [1, '5', { maxx: 1 }])
      expect(
        () => createApp({ logger: false, rateLimit: { limits: { auth: change as never } } }),
        JSON.stringify(change),
      ).toThrow(/^rateLimit.limits.auth: /);
    for (const creates of ['yes', 1]) {
      const app = createApp({ logger: false });
      await expect(
        app.register(idempotencyPlugin, { store: new MemoryIdempotencyStore(), creates: creates as never }),
      ).rejects.toThrow(/creates is true or false/);
      await app.close();
    }
    const message = z.object({ text: z.string() });
    expect(() => webSocket({ receive: message, send: message, maxMessageBytes: 10 } as never)).toThrow(
      /^webSocket: unknown option "maxMessageBytes"/,
    );
    expect(() => webSocket({ send: message } as never)).toThrow(/webSocket: receive is the schema/);
  });

  it("refuses authPlugin's production beside tokens (ignored), tokens that are no TokenService (a 500 per request)", async () => {
    const app = createApp({ logger: false });
    const userLoader = () => undefined;
    const tokens = new TokenService({ secret });
    await expect(app.register(authPlugin, { userLoader, tokens, production: true })).rejects.toThrow(
      /pass either tokens or secret\/store\/production, not both/,
    );
    await expect(app.register(authPlugin, { userLoader, tokens: {} as never })).rejects.toThrow(
      /tokens is a TokenService/,
    );
    // One of another copy of the package, made before acceptedUntil: a 500 at each socket or stream.
    const older = { verifyAccess: tokens.verifyAccess.bind(tokens), store: tokens.store };
    await expect(app.register(authPlugin, { userLoader, tokens: older as never })).rejects.toThrow(
      /tokens is a TokenService/,
    );
    await expect(
      app.register(authPlugin, { userLoader, secret, production: 'false' as never }),
    ).rejects.toThrow(/production is true or false/);
    await app.close();
  });
});

describe('a guard that needs a user on an app where nothing sets one', () => {
  it('is a start-up error naming the route, the guard and the fix', async () => {
    const app = createApp({ logger: false }).mount([posts]);
    await expect(app.ready()).rejects.toThrow(
      'posts.deletePost (DELETE /api/posts/:id) has guard "admin", which needs a signed-in user, but nothing on this app sets ctx.user: register authPlugin from proceedjs/auth (await app.register(authPlugin, { userLoader })); if your context sets user itself, createApp({ userFromContext: true }); if a plugin of yours sets it, call app.providesUser(\'yourPlugin\') there',
    );
  });

  it("counts a guard that reads the user's fields as one that needs a user", async () => {
    const moderators = procedures('notes', {
      deleteNote: procedure<{ user?: { role: string } }>()
        .guard(
          guard({
            name: 'moderator',
            reads: ['role'],
            check: (ctx: { user?: { role: string } }) => ctx.user?.role === 'mod',
          }),
        )
        .input(z.object({ id: z.string() }))
        .mutation(() => undefined),
    });
    const app = createApp({ logger: false }).mount([moderators]);
    await expect(app.ready()).rejects.toThrow(
      /notes\.deleteNote \(DELETE \/api\/notes\/:id\) has guard "moderator", which needs a signed-in user, but nothing on this app sets ctx\.user/,
    );
  });

  it('starts with the auth plugin, or with a context that sets the user', async () => {
    const withAuth = createApp({ logger: false }).mount([posts]);
    await withAuth.register(authPlugin, { secret, userLoader: (id) => ({ id, role: 'admin' }) });
    await withAuth.ready();
    const fromContext = createApp({ logger: false, userFromContext: true }).mount([posts]);
    await fromContext.ready();
    await Promise.all([withAuth.close(), fromContext.close()]);
  });
});

describe('a user loader that omits a field a guard reads', () => {
  async function appWith(guarded: ReturnType<typeof guard>) {
    const lines: string[] = [];
    const tokens = new TokenService({ secret });
    const app = createApp({
      logger: { level: 'error', stream: { write: (line) => lines.push(line) } },
    }).mount([
      procedures('things', {
        deleteThing: procedure()
          .guard(guarded)
          .input(z.object({ id: z.string() }))
          .mutation(() => undefined),
      }),
    ]);
    // Loads what the database has, which lacks `role`: the mistake under test.
    const findUserWithoutRole = (id: string) => ({ id, isActive: true });
    await app.register(authPlugin, { tokens, userLoader: findUserWithoutRole });
    const { accessToken } = await tokens.issuePair('u1');
    const answer = await app.inject({
      method: 'DELETE',
      url: '/api/things/1',
      headers: { authorization: `Bearer ${accessToken}` },
    });
    await app.close();
    return { answer, logged: lines.map((line) => JSON.parse(line) as { err?: { message: string } }) };
  }

  it('answers 500, not a 403 that blames the caller, and logs one line naming guard, field and loader', async () => {
    const { answer, logged } = await appWith(hasRole('editor'));
    expect(answer.statusCode).toBe(500);
    expect(answer.json()).toMatchObject({ code: 'INTERNAL' });
    expect(answer.body).not.toMatch(/role|loader/);
    expect(logged.map((line) => line.err?.message)).toEqual([
      'Guard "role:editor" of things.deleteThing reads user.role, but the user from authPlugin\'s userLoader (findUserWithoutRole) has no "role": return it from the loader (docs/auth.md, "What guards need from the app")',
    ]);
  });

  it('checks what composite guards read, and what a custom guard declares', async () => {
    // allOf needs every member, so every field; anyOf passes on a member that needs no role.
    expect((await appWith(allOf(authenticated, admin))).answer.statusCode).toBe(500);
    expect((await appWith(anyOf(authenticated, admin))).answer.statusCode).toBe(200);
    const onlyRoles = await appWith(anyOf(admin, hasRole('editor')));
    expect(onlyRoles.answer.statusCode).toBe(500);
    expect(onlyRoles.logged[0]?.err?.message).toMatch(/^Guard "admin" of things.deleteThing reads user.role/);
    const custom = guard({
      name: 'verified',
      requiresUser: true,
      reads: ['emailVerified'],
      check: (ctx: { user?: { emailVerified?: boolean } }) => ctx.user?.emailVerified === true,
    });
    const { logged } = await appWith(custom);
    expect(logged[0]?.err?.message).toMatch(
      /^Guard "verified" of things.deleteThing reads user.emailVerified/,
    );
    // A guard that declares nothing is not second-guessed.
    expect((await appWith(authenticated)).answer.statusCode).toBe(200);
  });
});
