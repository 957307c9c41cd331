import { generateKeyPairSync } from 'node:crypto';
import { createSigner } from 'fast-jwt';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { entityTagDocumentation } from '../core/documentation.js';
import { ProceedConfigError } from '../core/errors.js';
import { procedure, procedures } from '../core/procedure.js';
import { generateOpenApi } from '../openapi/generate.js';
import { createApp } from '../server/create-app.js';
import { fixtureApp, fixtureSecret } from './fixtures/app.js';
import { accessClaims } from './fixtures/claims.js';
import { authenticated } from './guards.js';
import { createJwtCodec } from './jwt.js';
import { type AuthContext, authDocumentation, authPlugin, bearerTokenOf } from './plugin.js';
import { MemoryRevocationStore, type RevocationStore } from './revocation.js';
import { TokenService } from './tokens.js';

/** A store standing for one that every worker shares (Redis, PostgreSQL): not in this process's memory. */
function sharedStore(): RevocationStore {
  const kept = new MemoryRevocationStore();
  return {
    revokeToken: (jti, expiresAt) => kept.revokeToken(jti, expiresAt),
    revokeFamily: (family, expiresAt) => kept.revokeFamily(family, expiresAt),
    revokeUser: (userId) => kept.revokeUser(userId),
    userGeneration: (userId) => kept.userGeneration(userId),
    isRevoked: (check) => kept.isRevoked(check),
    markUsed: (jti, expiresAt) => kept.markUsed(jti, expiresAt),
    prune: () => kept.prune(),
  };
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const nowSeconds = () => Math.floor(Date.now() / 1000);

const ours = createJwtCodec({ secret: fixtureSecret });

describe('authPlugin: every attack on the bearer token is a 401 INVALID_TOKEN', () => {
  const fixture = fixtureApp();
  const { app } = fixture;
  let good = '';
  let refresh = '';

  beforeAll(async () => {
    await fixture.ready;
    const pair = await fixture.tokens.issuePair('u1');
    good = pair.accessToken;
    refresh = pair.refreshToken;
  });

  async function rejected(authorization: string, detail: string, url = '/api/things') {
    const response = await app.inject({ method: 'GET', url, headers: { authorization } });
    expect(response.statusCode).toBe(401);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.headers['www-authenticate']).toBe('Bearer');
    const body = response.json();
    expect(body).toMatchObject({ status: 401, code: 'INVALID_TOKEN', detail });
    return body;
  }

  it('accepts the genuine token (the baseline the attacks start from)', async () => {
    const response = await app.inject({ url: '/api/things', headers: { authorization: `Bearer ${good}` } });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ viewer: 'u1' });
  });

  it("takes a token from the query string only on a socket procedure's handshake: on another route, an Upgrade header makes none count", async () => {
    for (const upgrade of ['websocket', 'WebSocket']) {
      const response = await app.inject({
        url: `/api/things?access_token=${good}`,
        headers: { upgrade, connection: 'Upgrade' },
      });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ viewer: null });
    }
  });

  it('rejects alg "none" with no signature', async () => {
    const token = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(accessClaims())}.`;
    await rejected(`Bearer ${token}`, 'invalid signature');
  });

  it('rejects alg "none" carrying the original signature', async () => {
    const signature = good.split('.')[2];
    const token = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(accessClaims())}.${signature}`;
    await rejected(`Bearer ${token}`, 'invalid algorithm');
  });

  it('rejects a token signed with HS384 and the right secret', async () => {
    const token = createSigner({ key: fixtureSecret, algorithm: 'HS384', noTimestamp: true })({
      ...accessClaims(),
    });
    await rejected(`Bearer ${token}`, 'invalid algorithm');
  });

  it('rejects a token signed with RS256 (algorithm confusion)', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const token = createSigner({ key: pem, algorithm: 'RS256', noTimestamp: true })({ ...accessClaims() });
    await rejected(`Bearer ${token}`, 'invalid algorithm');
  });

  it('rejects a tampered payload (sub changed to an admin)', async () => {
    const [header, payload, signature] = good.split('.');
    const changed = { ...JSON.parse(Buffer.from(payload as string, 'base64url').toString()), sub: 'u2' };
    await rejected(`Bearer ${header}.${b64(changed)}.${signature}`, 'invalid signature');
  });

  it('rejects a tampered signature', async () => {
    const [header, payload, signature] = good.split('.') as [string, string, string];
    const flipped = (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1);
    await rejected(`Bearer ${header}.${payload}.${flipped}`, 'invalid signature');
  });

  it('rejects a token truncated inside its signature', async () => {
    await rejected(`Bearer ${good.slice(0, -6)}`, 'invalid signature');
  });

  it('rejects a token truncated to header and payload', async () => {
    const [header, payload] = good.split('.');
    await rejected(`Bearer ${header}.${payload}`, 'jwt malformed');
  });

  it('rejects garbage', async () => {
    await rejected('Bearer not-a-jwt', 'jwt malformed');
    await rejected('Bearer a.b.c', 'jwt malformed');
    await rejected(`Bearer ${b64([1])}.${b64('x')}.abc`, 'jwt malformed');
  });

  it('rejects "Bearer" with no token and with two tokens', async () => {
    await rejected('Bearer', 'jwt malformed');
    await rejected(`Bearer ${good} ${good}`, 'jwt malformed');
  });

  it('rejects an oversized token without parsing it', async () => {
    await rejected(`Bearer ${'a'.repeat(5000)}.b.c`, 'jwt malformed');
  });

  it('rejects a token made with another secret', async () => {
    const theirs = createJwtCodec({ secret: 'another-secret-also-at-least-32-bytes!!' });
    await rejected(`Bearer ${theirs.sign(accessClaims())}`, 'invalid signature');
  });

  it('rejects an expired token (past the 5 s clock tolerance)', async () => {
    const iat = nowSeconds() - 1000;
    await rejected(`Bearer ${ours.sign(accessClaims({ iat, exp: iat + 900 }))}`, 'jwt expired');
  });

  it('rejects a token whose nbf lies in the future', async () => {
    await rejected(`Bearer ${ours.sign(accessClaims({ nbf: nowSeconds() + 3600 }))}`, 'jwt not active');
  });

  it('rejects a signed token missing a required claim', async () => {
    const { jti: _jti, ...rest } = accessClaims();
    const token = createSigner({ key: fixtureSecret, algorithm: 'HS256', noTimestamp: true })(rest);
    await rejected(`Bearer ${token}`, 'jwt malformed');
  });

  it('rejects a refresh token used as an access token', async () => {
    await rejected(`Bearer ${refresh}`, 'expected an access token');
  });

  it('rejects an access token used as a refresh token', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/session/refresh',
      payload: { refreshToken: good },
    });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ code: 'INVALID_TOKEN', detail: 'expected a refresh token' });
  });

  it('rejects a revoked (logged-out) token', async () => {
    const { accessToken } = await fixture.tokens.issuePair('u1');
    const logout = await app.inject({
      method: 'DELETE',
      url: '/api/session',
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expect(logout.statusCode).toBe(200);
    expect(logout.json()).toEqual({ success: true });
    await rejected(`Bearer ${accessToken}`, 'jwt revoked');
  });

  it('rejects any scheme other than Bearer', async () => {
    await rejected(`Basic ${Buffer.from('u1:pw').toString('base64')}`, 'authorization scheme must be Bearer');
    await rejected(`Token ${good}`, 'authorization scheme must be Bearer');
    await rejected(good, 'authorization scheme must be Bearer');
  });

  it('accepts the scheme in any case', async () => {
    const response = await app.inject({ url: '/api/things', headers: { authorization: `bearer ${good}` } });
    expect(response.statusCode).toBe(200);
  });

  it('rejects bad tokens on guarded routes with INVALID_TOKEN, not UNAUTHENTICATED', async () => {
    await rejected('Bearer garbage', 'jwt malformed', '/api/things/1');
  });
});

describe('authPlugin: users and guards', () => {
  const fixture = fixtureApp();
  const { app, users } = fixture;
  beforeAll(() => fixture.ready);

  const as = async (userId: string) => `Bearer ${(await fixture.tokens.issuePair(userId)).accessToken}`;

  it('leaves ctx.user undefined without a token: public routes work', async () => {
    const response = await app.inject({ url: '/api/things' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ viewer: null });
  });

  it('treats an empty Authorization header as no token', async () => {
    const response = await app.inject({ url: '/api/things', headers: { authorization: '' } });
    expect(response.statusCode).toBe(200);
  });

  it('answers 401 UNAUTHENTICATED with WWW-Authenticate: Bearer on a guarded route without a token', async () => {
    const response = await app.inject({ url: '/api/things/1' });
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer');
    expect(response.json()).toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('loads the user and passes authenticated', async () => {
    const response = await app.inject({ url: '/api/things/7', headers: { authorization: await as('u1') } });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ id: '7', viewer: 'u1', role: 'user' });
  });

  it('names the guard in the 403 detail', async () => {
    const token = await as('u1');
    const deleted = await app.inject({
      method: 'DELETE',
      url: '/api/things/1',
      headers: { authorization: token },
    });
    expect(deleted.statusCode).toBe(403);
    expect(deleted.json()).toMatchObject({ code: 'FORBIDDEN', detail: 'Guard "admin" denied access' });

    const created = await app.inject({
      method: 'POST',
      url: '/api/things',
      headers: { authorization: token },
    });
    expect(created.statusCode).toBe(403);
    expect(created.json()).toMatchObject({ detail: 'Guard "role:editor or admin" denied access' });
  });

  it('lets anyOf pass on either member', async () => {
    for (const userId of ['u2', 'u3']) {
      const response = await app.inject({
        method: 'POST',
        url: '/api/things',
        headers: { authorization: await as(userId) },
      });
      expect(response.statusCode).toBe(201);
      expect(response.json()).toEqual({ id: 't1', by: userId });
    }
  });

  it('lets a custom guard read the path parameters', async () => {
    const token = await as('u1');
    const own = await app.inject({
      method: 'PUT',
      url: '/api/things/u1',
      headers: { authorization: token },
      payload: {},
    });
    expect(own.statusCode).toBe(200);
    const other = await app.inject({
      method: 'PUT',
      url: '/api/things/u2',
      headers: { authorization: token },
      payload: {},
    });
    expect(other.statusCode).toBe(403);
    expect(other.json()).toMatchObject({ detail: 'Guard "self" denied access' });
  });

  it('applies a role change at the next request (the loader runs every time)', async () => {
    const token = await as('u1');
    const before = await app.inject({
      method: 'DELETE',
      url: '/api/things/1',
      headers: { authorization: token },
    });
    expect(before.statusCode).toBe(403);
    const loads = fixture.loads;
    (users.get('u1') as { role: string }).role = 'admin';
    try {
      const after = await app.inject({
        method: 'DELETE',
        url: '/api/things/1',
        headers: { authorization: token },
      });
      expect(after.statusCode).toBe(200);
      expect(fixture.loads).toBe(loads + 1);
    } finally {
      (users.get('u1') as { role: string }).role = 'user';
    }
  });

  it('rejects the tokens of a deactivated user at once, on public routes too', async () => {
    users.set('u9', { id: 'u9', email: 'zed@example.com', role: 'user', isActive: true });
    const token = await as('u9');
    expect((await app.inject({ url: '/api/things', headers: { authorization: token } })).statusCode).toBe(
      200,
    );
    (users.get('u9') as { isActive: boolean }).isActive = false;
    const response = await app.inject({ url: '/api/things', headers: { authorization: token } });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ code: 'INVALID_TOKEN', detail: 'user is deactivated' });
  });

  it('rejects the tokens of a deleted user', async () => {
    users.set('u8', { id: 'u8', email: 'max@example.com', role: 'user', isActive: true });
    const token = await as('u8');
    users.delete('u8');
    const response = await app.inject({ url: '/api/things/1', headers: { authorization: token } });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ code: 'INVALID_TOKEN', detail: 'user not found' });
  });

  it.each<[string, Partial<Record<string, unknown>>]>([
    ['a NUL in the sub', { sub: 'u\u0000' }],
    ['a control character in the jti', { jti: 'a\u001bb' }],
    ['a sub of 256 characters', { sub: 'u'.repeat(256) }],
    ['an empty family', { fam: '' }],
    ['an exp past the year 9999', { exp: 1e300 }],
    ['an iat that is not a number', { iat: '1' }],
  ])('refuses a correctly signed token with %s as malformed, before the loader', async (_, odd) => {
    const loads = fixture.loads;
    const token = createSigner({ key: fixtureSecret, algorithm: 'HS256', noTimestamp: true })({
      ...accessClaims(),
      ...odd,
    });
    const response = await app.inject({ url: '/api/things', headers: { authorization: `Bearer ${token}` } });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ code: 'INVALID_TOKEN', detail: 'jwt malformed' });
    expect(fixture.loads).toBe(loads);
  });

  it('does not consult the loader when the token is bad', async () => {
    const loads = fixture.loads;
    await app.inject({ url: '/api/things', headers: { authorization: 'Bearer x.y.z' } });
    expect(fixture.loads).toBe(loads);
  });
});

describe('bearerTokenOf', () => {
  it('reads the token, tolerating extra spaces', () => {
    expect(bearerTokenOf(undefined)).toBeUndefined();
    expect(bearerTokenOf('   ')).toBeUndefined();
    expect(bearerTokenOf('Bearer abc')).toBe('abc');
    expect(bearerTokenOf('  BEARER   abc  ')).toBe('abc');
  });

  it('throws the named errors', () => {
    expect(() => bearerTokenOf('Basic abc')).toThrow('authorization scheme must be Bearer');
    expect(() => bearerTokenOf('Bearer')).toThrow('jwt malformed');
  });
});

describe('authDocumentation', () => {
  it('is what the plugin documents on its app, for a generator without one', async () => {
    const notes = procedures('notes', {
      listNotes: procedure().query(() => []),
      deleteNote: procedure<AuthContext<{ id: string }>>()
        .input(z.object({ id: z.string() }))
        .guard(authenticated)
        .mutation(() => ({ success: true })),
    });
    const app = createApp({ logger: false });
    await app.register(authPlugin, { secret: fixtureSecret, userLoader: () => undefined });
    app.mount([notes]);
    const info = { title: 'Notes', version: '1' };
    const mounts = [{ prefix: '/api', collections: [notes] }];
    const fromApp = generateOpenApi({ app, info });
    expect(
      generateOpenApi({ mounts, documentation: [entityTagDocumentation, authDocumentation], info }),
    ).toEqual(fromApp);
    // Without it the document misses the plugin's 401 on the open route.
    const bare = generateOpenApi({ mounts, info });
    expect(bare.paths['/api/notes']?.get?.responses['401']).toBeUndefined();
    expect(fromApp.paths['/api/notes']?.get?.responses['401']).toBeDefined();
  });
});

describe('authPlugin options', () => {
  it('takes its options from a function once the app gets ready, asked once, and refuses bad ones then', async () => {
    const tokens = new TokenService({ secret: fixtureSecret });
    let asked = 0;
    const app = createApp<AuthContext<{ id: string }>>({ logger: false });
    await app.register(authPlugin, () => {
      asked++;
      return { tokens, userLoader: (id: string) => ({ id }) };
    });
    app.mount([
      procedures('things', {
        listThings: procedure<AuthContext<{ id: string }>>()
          .guard(authenticated)
          .query(({ ctx }) => ({ viewer: ctx.user.id })),
      }),
    ]);
    expect(asked).toBe(0);
    const { accessToken } = await tokens.issuePair('u1');
    for (let request = 0; request < 2; request++) {
      const answer = await app.inject({
        url: '/api/things',
        headers: { authorization: `Bearer ${accessToken}` },
      });
      expect(answer.json()).toEqual({ viewer: 'u1' });
    }
    expect(asked).toBe(1);
    await app.close();

    const refused = createApp({ logger: false });
    await refused.register(authPlugin, () => ({ tokens }) as never);
    await expect(refused.ready()).rejects.toThrow(/needs a userLoader/);
  });

  it('never asks for them on an app that is only inspected, which still documents the bearer token', async () => {
    const app = createApp({ logger: false, inspect: true });
    await app.register(authPlugin, () => {
      throw new Error('asked while inspected');
    });
    app.mount([
      procedures('things', {
        listThings: procedure<AuthContext<{ id: string }>>()
          .guard(authenticated)
          .query(() => []),
      }),
    ]);
    await app.ready();
    expect(app.inspected).toBe(true);
    const document = generateOpenApi({ app, info: { title: 'Things', version: '1' } });
    expect(document.paths['/api/things']?.get?.security).toEqual([{ bearerAuth: [] }]);
    await expect(app.listen({ port: 0 })).rejects.toThrow(/built to be inspected/);
    await app.close();
  });

  it('refuses a revocation store in memory under proceed start --workers N, and takes a shared one', async () => {
    const before = process.env.PROCEED_WORKERS;
    process.env.PROCEED_WORKERS = '2';
    try {
      const memory = createApp({ logger: false });
      await expect(
        memory.register(authPlugin, {
          tokens: new TokenService({ secret: fixtureSecret }),
          userLoader: () => undefined,
        }),
      ).rejects.toThrow(/the revocation store is in memory, and 2 workers would each keep one of their own/);
      await expect(
        createApp({ logger: false }).register(authPlugin, {
          secret: fixtureSecret,
          userLoader: () => undefined,
        }),
      ).rejects.toThrow(ProceedConfigError);
      // A store every worker shares (any other RevocationStore) is taken.
      const app = createApp({ logger: false });
      await app.register(authPlugin, {
        tokens: new TokenService({ secret: fixtureSecret, store: sharedStore() }),
        userLoader: () => undefined,
      });
      await app.close();
      process.env.PROCEED_WORKERS = '1';
      const one = createApp({ logger: false });
      await one.register(authPlugin, {
        tokens: new TokenService({ secret: fixtureSecret }),
        userLoader: () => undefined,
      });
      await one.close();
    } finally {
      if (before === undefined) delete process.env.PROCEED_WORKERS;
      else process.env.PROCEED_WORKERS = before;
    }
  });

  it('refuses the removed rateLimit option instead of running unlimited', async () => {
    const app = createApp({ logger: false });
    await expect(
      app.register(authPlugin, {
        userLoader: () => undefined,
        rateLimit: { routes: ['POST /api/login'] },
      } as never),
    ).rejects.toThrow(/no longer takes rateLimit: put a rateLimit\(\{ name, max \}\) step/);
  });
});

describe('authPlugin: a user loader that cannot read the claims', () => {
  const loaderError = (code: string) => Object.assign(new Error(`database error ${code}`), { code });

  async function answerWith(failure: unknown) {
    const tokens = new TokenService({ secret: fixtureSecret });
    const app = createApp<AuthContext<{ id: string }>>({ logger: false });
    await app.register(authPlugin, {
      tokens,
      userLoader: () => {
        throw failure;
      },
    });
    app.mount([
      procedures('things', {
        listThings: procedure<AuthContext<{ id: string }>>().query(() => ({ ok: true })),
      }),
    ]);
    const { accessToken } = await tokens.issuePair('not-a-uuid');
    return app.inject({ url: '/api/things', headers: { authorization: `Bearer ${accessToken}` } });
  }

  it('answers 401 INVALID_TOKEN when the database refused a claim as data (SQLSTATE class 22)', async () => {
    // As Drizzle wraps it: the driver's error is the cause.
    const wrapped = new Error('Failed query', { cause: loaderError('22P02') });
    for (const failure of [loaderError('22P02'), loaderError('22021'), wrapped]) {
      const response = await answerWith(failure);
      expect(response.statusCode).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Bearer');
      expect(response.json()).toMatchObject({ code: 'INVALID_TOKEN', detail: 'jwt malformed' });
    }
  });

  it('leaves any other loader failure alone: a bug is a 500, an outage a 503', async () => {
    expect((await answerWith(loaderError('42P01'))).statusCode).toBe(500);
    expect((await answerWith(new TypeError('bug'))).statusCode).toBe(500);
    expect((await answerWith(loaderError('ECONNREFUSED'))).statusCode).toBe(503);
  });
});
