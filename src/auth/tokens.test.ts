import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ProceedConfigError } from '../core/errors.js';
import { fixtureApp } from './fixtures/app.js';
import {
  JwtCodec,
  TokenExpiredError,
  TokenMalformedError,
  TokenRevokedError,
  TokenTypeError,
} from './jwt.js';
import { MemoryRevocationStore, type RevocationCheck } from './revocation.js';
import { TokenService, uuidv7 } from './tokens.js';

const secret = 'token-service-test-secret-of-32-bytes-or-more';

function payloadOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString());
}

describe('TokenService', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('issues a pair with the claims docs/auth.md lists', async () => {
    const tokens = new TokenService({ secret });
    const before = Math.floor(Date.now() / 1000);
    const pair = await tokens.issuePair('user-1');
    expect(pair.tokenType).toBe('Bearer');
    expect(pair.expiresIn).toBe(900);

    const access = payloadOf(pair.accessToken);
    const refresh = payloadOf(pair.refreshToken);
    expect(access).toMatchObject({ sub: 'user-1', type: 'access' });
    expect(refresh).toMatchObject({ sub: 'user-1', type: 'refresh' });
    expect(access.iat).toBeGreaterThanOrEqual(before);
    expect((access.exp as number) - (access.iat as number)).toBe(900);
    expect((refresh.exp as number) - (refresh.iat as number)).toBe(7 * 24 * 3600);
    expect(access.jti).not.toBe(refresh.jti);
    expect(access.fam).toBe(refresh.fam);
    expect(JSON.parse(Buffer.from(pair.accessToken.split('.')[0] as string, 'base64url').toString())).toEqual(
      {
        alg: 'HS256',
        typ: 'JWT',
      },
    );

    const claims = await tokens.verifyAccess(pair.accessToken);
    expect(claims.sub).toBe('user-1');
    expect(claims.type).toBe('access');
  });

  it('gives each login its own family', async () => {
    const tokens = new TokenService({ secret });
    const one = payloadOf((await tokens.issuePair('u')).accessToken);
    const two = payloadOf((await tokens.issuePair('u')).accessToken);
    expect(one.fam).not.toBe(two.fam);
  });

  it('honours configured lifetimes', async () => {
    const tokens = new TokenService({ secret, accessTokenTtl: 60, refreshTokenTtl: 3600 });
    const pair = await tokens.issuePair('u');
    expect(pair.expiresIn).toBe(60);
    const refresh = payloadOf(pair.refreshToken);
    expect((refresh.exp as number) - (refresh.iat as number)).toBe(3600);
    expect(() => new TokenService({ secret, accessTokenTtl: 0 })).toThrow(RangeError);
    // Every token of a TTL no 32-bit time holds failed verification as malformed.
    expect(() => new TokenService({ secret, accessTokenTtl: 1e300 })).toThrow(RangeError);
  });

  it('refuses unknown options and a clock tolerance that would accept tokens long expired', () => {
    expect(() => new TokenService({ secret, accessTtl: 60 } as never)).toThrow(
      /^TokenService: unknown option "accessTtl"/,
    );
    for (const clockTolerance of [1e9, -1, Number.NaN, 0.5])
      expect(() => new TokenService({ secret, clockTolerance })).toThrow(/clockTolerance is whole seconds/);
    expect(() => new TokenService({ secret, clockTolerance: 0 })).not.toThrow();
  });

  it('takes a token until its expiry and the clock tolerance, which is when what it opened ends', async () => {
    const tokens = new TokenService({ secret, accessTokenTtl: 1, clockTolerance: 2 });
    const { accessToken } = await tokens.issuePair('u1');
    const claims = await tokens.verifyAccess(accessToken);
    expect(tokens.acceptedUntil(claims)).toBe(claims.exp * 1000 + 2001);
    // Past its expiry, to the last moment of the tolerance: still taken, so a stream it opened
    // still runs; from acceptedUntil on, refused.
    vi.useFakeTimers({ now: claims.exp * 1000 + 1500, toFake: ['Date'] });
    try {
      await expect(tokens.verifyAccess(accessToken)).resolves.toMatchObject({ sub: 'u1' });
      vi.setSystemTime(tokens.acceptedUntil(claims) - 1);
      await expect(tokens.verifyAccess(accessToken)).resolves.toMatchObject({ sub: 'u1' });
      vi.setSystemTime(tokens.acceptedUntil(claims));
      await expect(tokens.verifyAccess(accessToken)).rejects.toThrow();
    } finally {
      vi.useRealTimers();
    }
  });

  it('rotates on refresh: a new pair of the same family, the old refresh token used up', async () => {
    const tokens = new TokenService({ secret });
    const first = await tokens.issuePair('u');
    const second = await tokens.refresh(first.refreshToken);
    expect(second.accessToken).not.toBe(first.accessToken);
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect(payloadOf(second.refreshToken).fam).toBe(payloadOf(first.refreshToken).fam);
    expect((await tokens.verifyAccess(second.accessToken)).sub).toBe('u');
    const third = await tokens.refresh(second.refreshToken);
    expect((await tokens.verifyAccess(third.accessToken)).sub).toBe('u');
  });

  it('revokes the whole family when a refresh token is used twice', async () => {
    const tokens = new TokenService({ secret });
    const first = await tokens.issuePair('u');
    const second = await tokens.refresh(first.refreshToken);
    const replay = tokens.refresh(first.refreshToken);
    await expect(replay).rejects.toBeInstanceOf(TokenRevokedError);
    await expect(replay).rejects.toThrow('refresh token already used');
    // Every token of that login is dead, the legitimate newest ones included…
    await expect(tokens.verifyAccess(first.accessToken)).rejects.toThrow('jwt revoked');
    await expect(tokens.verifyAccess(second.accessToken)).rejects.toThrow('jwt revoked');
    await expect(tokens.refresh(second.refreshToken)).rejects.toThrow('jwt revoked');
    // …and other logins of the same user are untouched.
    const other = await tokens.issuePair('u');
    expect((await tokens.verifyAccess(other.accessToken)).sub).toBe('u');
  });

  it('lets exactly one of two concurrent refreshes with one token win', async () => {
    const tokens = new TokenService({ secret });
    const { refreshToken } = await tokens.issuePair('u');
    const results = await Promise.allSettled([tokens.refresh(refreshToken), tokens.refresh(refreshToken)]);
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    const loser = results.find((result) => result.status === 'rejected');
    expect((loser as PromiseRejectedResult).reason).toBeInstanceOf(TokenRevokedError);
  });

  it('refuses a refresh for a user the app no longer allows, without using the token up', async () => {
    const tokens = new TokenService({ secret });
    const { refreshToken } = await tokens.issuePair('u');
    await expect(tokens.refresh(refreshToken, { allowUser: async () => false })).rejects.toThrow(
      'jwt revoked',
    );
    const pair = await tokens.refresh(refreshToken, { allowUser: (id) => id === 'u' });
    expect(pair.tokenType).toBe('Bearer');
  });

  it('keeps access and refresh tokens apart', async () => {
    const tokens = new TokenService({ secret });
    const pair = await tokens.issuePair('u');
    await expect(tokens.verifyAccess(pair.refreshToken)).rejects.toBeInstanceOf(TokenTypeError);
    await expect(tokens.refresh(pair.accessToken)).rejects.toThrow('expected a refresh token');
  });

  it('logout revokes the access token and its refresh family', async () => {
    const tokens = new TokenService({ secret });
    const pair = await tokens.issuePair('u');
    await tokens.revoke(await tokens.verifyAccess(pair.accessToken));
    await expect(tokens.verifyAccess(pair.accessToken)).rejects.toThrow('jwt revoked');
    await expect(tokens.refresh(pair.refreshToken)).rejects.toThrow('jwt revoked');
  });

  it('logout with an old access token still ends refresh tokens rotated since', async () => {
    const tokens = new TokenService({ secret });
    const first = await tokens.issuePair('u');
    const second = await tokens.refresh(first.refreshToken);
    await tokens.revoke(await tokens.verifyAccess(first.accessToken));
    await expect(tokens.refresh(second.refreshToken)).rejects.toThrow('jwt revoked');
  });

  it('revokeAllForUser ends every existing token of that user, and only those', async () => {
    const tokens = new TokenService({ secret });
    const a = await tokens.issuePair('alice');
    const b = await tokens.issuePair('alice');
    const bob = await tokens.issuePair('bob');
    await tokens.revokeAllForUser('alice');
    for (const token of [a.accessToken, b.accessToken]) {
      await expect(tokens.verifyAccess(token)).rejects.toThrow('jwt revoked');
    }
    await expect(tokens.refresh(a.refreshToken)).rejects.toThrow('jwt revoked');
    expect((await tokens.verifyAccess(bob.accessToken)).sub).toBe('bob');
    // At once, in the same millisecond: no clock decides, the generation does.
    const fresh = await tokens.issuePair('alice');
    expect((await tokens.verifyAccess(fresh.accessToken)).sub).toBe('alice');
  });

  it('issues a login in the generation read before the credentials, so a revocation in between covers it', async () => {
    const tokens = new TokenService({ secret });
    const generation = await tokens.userGeneration('alice');
    await tokens.revokeAllForUser('alice'); // a password reset lands while the login hashes
    const late = await tokens.issuePair('alice', { generation });
    await expect(tokens.verifyAccess(late.accessToken)).rejects.toThrow('jwt revoked');
    await expect(tokens.refresh(late.refreshToken)).rejects.toThrow('jwt revoked');
    const after = await tokens.issuePair('alice');
    expect((await tokens.verifyAccess(after.accessToken)).gen).toBe(1);
  });

  it('asks the store about a 0.1 time cut-off only for a token without gen, with its issue time to the ms', async () => {
    const checks: RevocationCheck[] = [];
    const store = new MemoryRevocationStore();
    const isRevoked = store.isRevoked.bind(store);
    store.isRevoked = (check) => {
      checks.push(check);
      return isRevoked(check);
    };
    const tokens = new TokenService({ secret, store });
    const issuedAt = Date.now();
    const iat = Math.floor(issuedAt / 1000);
    const legacy = new JwtCodec({ secret }).sign({
      sub: 'alice',
      jti: uuidv7(issuedAt),
      type: 'access',
      fam: 'f',
      iat,
      exp: iat + 60,
    });
    await tokens.verifyAccess(legacy);
    await tokens.verifyAccess((await tokens.issuePair('alice')).accessToken);
    expect(checks.map((check) => [check.generation, check.legacyIssuedAt])).toEqual([
      [0, issuedAt],
      [0, undefined],
    ]);
  });

  it('keeps the login’s generation through a refresh, so a revocation during it covers the new pair', async () => {
    const tokens = new TokenService({ secret, store: new MemoryRevocationStore() });
    const pair = await tokens.issuePair('alice');
    const next = await tokens.refresh(pair.refreshToken, {
      allowUser: async () => {
        await tokens.revokeAllForUser('alice'); // revoked while the refresh looks the user up
        return true;
      },
    });
    await expect(tokens.verifyAccess(next.accessToken)).rejects.toThrow('jwt revoked');
  });

  it('is not fooled by clocks: a revocation ends older logins even when they look newer', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const tokens = new TokenService({ secret, store: new MemoryRevocationStore() });
      // An instance 3 s ahead issued this login…
      vi.setSystemTime(new Date('2030-01-01T00:00:03Z'));
      const ahead = await tokens.issuePair('alice');
      // …an instance on time revokes the user a second "earlier", and a new login follows.
      vi.setSystemTime(new Date('2030-01-01T00:00:01Z'));
      await tokens.revokeAllForUser('alice');
      vi.setSystemTime(new Date('2030-01-01T00:00:00Z'));
      const behind = await tokens.issuePair('alice');
      vi.setSystemTime(new Date('2030-01-01T00:00:02Z'));
      await expect(tokens.verifyAccess(ahead.accessToken)).rejects.toThrow('jwt revoked');
      expect((await tokens.verifyAccess(behind.accessToken)).sub).toBe('alice');
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps a used or revoked mark an hour past the token, so an instance whose clock lags still finds it', async () => {
    const store = new MemoryRevocationStore();
    const kept: Array<[string, number]> = [];
    const markUsed = store.markUsed.bind(store);
    const revokeToken = store.revokeToken.bind(store);
    const revokeFamily = store.revokeFamily.bind(store);
    store.markUsed = (jti, expiresAt) => {
      kept.push(['used', expiresAt]);
      return markUsed(jti, expiresAt);
    };
    store.revokeToken = (jti, expiresAt) => {
      kept.push(['token', expiresAt]);
      return revokeToken(jti, expiresAt);
    };
    store.revokeFamily = (family, expiresAt) => {
      kept.push(['family', expiresAt]);
      return revokeFamily(family, expiresAt);
    };
    const tokens = new TokenService({ secret, store, refreshTokenTtl: 60 });
    const pair = await tokens.issuePair('user-1');
    const refreshExp = payloadOf(pair.refreshToken).exp as number;
    const next = await tokens.refresh(pair.refreshToken);
    await expect(tokens.refresh(pair.refreshToken)).rejects.toThrow(TokenRevokedError);
    // The reuse revoked the new pair's family too: its claims, read without a check, for a logout.
    const access = payloadOf(next.accessToken) as { exp: number };
    await tokens.revoke(access as never);
    const hour = 3_600_000;
    const of = (kind: string) => kept.filter(([each]) => each === kind).map(([, expiresAt]) => expiresAt);
    // The first refresh marks its token used; the reuse marks it again and revokes the family.
    expect(of('used')).toEqual([refreshExp * 1000 + 5000 + hour, refreshExp * 1000 + 5000 + hour]);
    expect(of('token')).toEqual([access.exp * 1000 + 5000 + hour]);
    expect(of('family')).toHaveLength(2);
    for (const expiresAt of of('family'))
      expect(expiresAt).toBeGreaterThanOrEqual(Date.now() + 60_000 + hour);
  });

  it('expires access tokens after 15 minutes (5 s tolerance) and refresh tokens after 7 days', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2030-01-01T00:00:00Z'));
    const tokens = new TokenService({ secret, store: new MemoryRevocationStore() });
    const pair = await tokens.issuePair('u');

    vi.setSystemTime(new Date('2030-01-01T00:15:03Z'));
    expect((await tokens.verifyAccess(pair.accessToken)).sub).toBe('u');
    vi.setSystemTime(new Date('2030-01-01T00:15:06Z'));
    await expect(tokens.verifyAccess(pair.accessToken)).rejects.toBeInstanceOf(TokenExpiredError);
    await expect(tokens.verifyAccess(pair.accessToken)).rejects.toThrow('jwt expired');

    vi.setSystemTime(new Date('2030-01-08T00:00:06Z'));
    await expect(tokens.refresh(pair.refreshToken)).rejects.toThrow('jwt expired');
  });

  it('ends a login at its sessionLifetime however often it was refreshed, and refuses a lifetime that is no whole number of seconds', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    // Later than any clock an earlier test set: ids never go back in time (uuidv7).
    vi.setSystemTime(new Date('2031-01-01T00:00:00Z'));
    const tokens = new TokenService({
      secret,
      store: new MemoryRevocationStore(),
      sessionLifetime: 30 * 86_400,
    });
    let pair = await tokens.issuePair('u');
    // Refreshed every 6 days for 4 weeks: each refresh within its 7 days, the login within its 30.
    for (let day = 6; day <= 24; day += 6) {
      vi.setSystemTime(new Date(Date.UTC(2031, 0, 1 + day)));
      pair = await tokens.refresh(pair.refreshToken);
    }
    vi.setSystemTime(new Date('2031-01-30T23:59:00Z'));
    const lastDay = await tokens.refresh(pair.refreshToken);
    vi.setSystemTime(new Date('2031-01-31T00:00:00Z'));
    await expect(tokens.refresh(lastDay.refreshToken)).rejects.toThrow(
      'the login is older than the session lifetime: sign in again',
    );
    // A new login starts its own.
    expect((await tokens.refresh((await tokens.issuePair('u')).refreshToken)).tokenType).toBe('Bearer');
    for (const sessionLifetime of [0, 1.5, -1])
      expect(() => new TokenService({ secret, sessionLifetime })).toThrow(/sessionLifetime/);
  });

  it('refuses an empty user id', async () => {
    const tokens = new TokenService({ secret });
    await expect(tokens.issuePair('')).rejects.toThrow(TypeError);
  });
});

describe('TokenService userId', () => {
  const uuid = '0190a4f2-5b6c-7d8e-9f00-112233445566';
  const anyShape = new TokenService({ secret });
  const uuidsOnly = new TokenService({ secret, userId: z.uuid() });

  it('refuses a signed token whose sub has another shape as malformed, access and refresh alike', async () => {
    const pair = await anyShape.issuePair('user-1');
    await expect(uuidsOnly.verifyAccess(pair.accessToken)).rejects.toThrow(TokenMalformedError);
    await expect(uuidsOnly.verifyRefresh(pair.refreshToken)).rejects.toThrow(TokenMalformedError);
    await expect(uuidsOnly.refresh(pair.refreshToken)).rejects.toThrow(TokenMalformedError);
    const good = await uuidsOnly.issuePair(uuid);
    expect((await uuidsOnly.verifyAccess(good.accessToken)).sub).toBe(uuid);
  });

  it('refuses to sign a user id of another shape', async () => {
    await expect(uuidsOnly.issuePair('user-1')).rejects.toThrow(TypeError);
  });

  it('refuses what is not a synchronous Standard Schema at construction', () => {
    expect(() => new TokenService({ secret, userId: /uuid/ as never })).toThrow(ProceedConfigError);
    const later = z.string().refine(async () => true);
    expect(() => new TokenService({ secret, userId: later })).toThrow(/asynchronously/);
  });
});

describe('TokenService issuer and audience', () => {
  const issuer = 'https://auth.example.com';
  const here = new TokenService({ secret, issuer, audience: 'blog-api' });
  const elsewhere = new TokenService({ secret, issuer, audience: 'billing-api' });
  const unnamed = new TokenService({ secret });
  const codec = new JwtCodec({ secret });
  const now = () => Math.floor(Date.now() / 1000);
  const signed = (claims: Record<string, unknown>) =>
    codec.sign({
      sub: 'user-1',
      jti: uuidv7(),
      type: 'access',
      iat: now(),
      exp: now() + 60,
      ...claims,
    } as never);

  it('writes its issuer and audience into every token and takes them back', async () => {
    const pair = await here.issuePair('user-1');
    expect(payloadOf(pair.accessToken)).toMatchObject({ iss: issuer, aud: 'blog-api' });
    expect(payloadOf(pair.refreshToken)).toMatchObject({ iss: issuer, aud: 'blog-api' });
    expect(await here.verifyAccess(pair.accessToken)).toMatchObject({ iss: issuer, aud: 'blog-api' });
    const next = await here.refresh(pair.refreshToken);
    expect(payloadOf(next.accessToken)).toMatchObject({ iss: issuer, aud: 'blog-api' });
  });

  it("refuses another service's tokens signed with the same secret, and tokens that name none", async () => {
    const theirs = await elsewhere.issuePair('user-1');
    await expect(here.verifyAccess(theirs.accessToken)).rejects.toThrow('jwt audience invalid');
    // A refresh token of theirs is refused before it is used up: it still refreshes there.
    await expect(here.refresh(theirs.refreshToken)).rejects.toThrow('jwt audience invalid');
    expect((await elsewhere.refresh(theirs.refreshToken)).accessToken).toBeTypeOf('string');

    const plain = await unnamed.issuePair('user-1');
    await expect(here.verifyAccess(plain.accessToken)).rejects.toThrow('jwt issuer invalid');
    await expect(
      here.verifyAccess(signed({ iss: 'https://other.example.com', aud: 'blog-api' })),
    ).rejects.toThrow('jwt issuer invalid');
    await expect(here.verifyAccess(signed({ iss: issuer }))).rejects.toThrow('jwt audience invalid');
    // A service without either option takes tokens that carry them (they are signed with its secret).
    expect((await unnamed.verifyAccess((await here.issuePair('user-1')).accessToken)).sub).toBe('user-1');
  });

  it('takes an audience list that names it', async () => {
    const both = signed({ iss: issuer, aud: ['billing-api', 'blog-api'] });
    expect((await here.verifyAccess(both)).aud).toEqual(['billing-api', 'blog-api']);
    await expect(here.verifyAccess(signed({ iss: issuer, aud: ['billing-api'] }))).rejects.toThrow(
      'jwt audience invalid',
    );
  });

  it('refuses a mistyped iss or aud as malformed, whatever the options', async () => {
    for (const claims of [
      { iss: 5 },
      { iss: '' },
      { aud: [] },
      { aud: [5] },
      { aud: { name: 'blog-api' } },
    ]) {
      await expect(unnamed.verifyAccess(signed(claims))).rejects.toThrow(TokenMalformedError);
      await expect(here.verifyAccess(signed({ iss: issuer, aud: 'blog-api', ...claims }))).rejects.toThrow(
        TokenMalformedError,
      );
    }
  });

  it('refuses an issuer or audience no token could carry', () => {
    for (const wrong of ['', 5, 'a\u0000b', 'x'.repeat(256)]) {
      expect(() => new TokenService({ secret, issuer: wrong as string })).toThrow(ProceedConfigError);
      expect(() => new TokenService({ secret, audience: wrong as string })).toThrow(ProceedConfigError);
    }
  });
});

describe('uuidv7', () => {
  it('makes version-7 ids that sort by time', () => {
    const early = uuidv7(1_700_000_000_000);
    const late = uuidv7(1_700_000_000_001);
    expect(early).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(early < late).toBe(true);
  });

  it('makes ids that sort in the order they were made, within a millisecond too', () => {
    const ids = Array.from({ length: 20_000 }, () => uuidv7());
    const outOfOrder = ids.findIndex((id, index) => index > 0 && (ids[index - 1] as string) >= id);
    expect(outOfOrder).toBe(-1);
    const shape = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(ids.filter((id) => !shape.test(id))).toEqual([]);
  });

  it('keeps counting when the clock steps back', () => {
    const clock = vi.spyOn(Date, 'now');
    try {
      clock.mockReturnValue(2_000_000_000_000);
      const before = uuidv7();
      clock.mockReturnValue(1_999_999_999_000);
      const after = uuidv7();
      expect(before < after).toBe(true);
      expect(after.slice(0, 13)).toBe(before.slice(0, 13));
    } finally {
      clock.mockRestore();
    }
  });
});

describe('token lifecycle over HTTP', () => {
  const fixture = fixtureApp();
  const { app } = fixture;

  beforeAll(async () => {
    await fixture.ready;
    await fixture.setPassword('u1', 'correct horse battery');
  });

  const login = (password: string, email = 'ann@example.com') =>
    app.inject({ method: 'POST', url: '/api/session', payload: { email, password } });
  const refresh = (refreshToken: string) =>
    app.inject({ method: 'POST', url: '/api/session/refresh', payload: { refreshToken } });
  const me = (accessToken: string) =>
    app.inject({ url: '/api/things/me', headers: { authorization: `Bearer ${accessToken}` } });

  it('logs in, refreshes with rotation, detects reuse and logs out', async () => {
    const wrong = await login('wrong password');
    expect(wrong.statusCode).toBe(401);
    const unknown = await login('wrong password', 'nobody@example.com');
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json()).toEqual(wrong.json());

    const signedIn = await login('correct horse battery');
    expect(signedIn.statusCode).toBe(200);
    const first = signedIn.json();
    expect(first).toMatchObject({ tokenType: 'Bearer', expiresIn: 900 });
    expect((await me(first.accessToken)).json()).toMatchObject({ viewer: 'u1' });

    const rotated = await refresh(first.refreshToken);
    expect(rotated.statusCode).toBe(200);
    const second = rotated.json();
    expect((await me(second.accessToken)).statusCode).toBe(200);

    const replay = await refresh(first.refreshToken);
    expect(replay.statusCode).toBe(401);
    expect(replay.headers['www-authenticate']).toBe('Bearer');
    expect(replay.json()).toMatchObject({ code: 'INVALID_TOKEN', detail: 'refresh token already used' });
    expect((await me(second.accessToken)).json()).toMatchObject({
      code: 'INVALID_TOKEN',
      detail: 'jwt revoked',
    });

    const again = (await login('correct horse battery')).json();
    const logout = await app.inject({
      method: 'DELETE',
      url: '/api/session',
      headers: { authorization: `Bearer ${again.accessToken}` },
    });
    expect(logout.json()).toEqual({ success: true });
    expect((await me(again.accessToken)).statusCode).toBe(401);
    expect((await refresh(again.refreshToken)).json()).toMatchObject({ detail: 'jwt revoked' });
  });

  it('refuses to refresh for a deactivated user', async () => {
    const pair = await fixture.tokens.issuePair('u3');
    (fixture.users.get('u3') as { isActive: boolean }).isActive = false;
    const response = await refresh(pair.refreshToken);
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ code: 'INVALID_TOKEN' });
  });

  it('refuses a refresh body that is no token at all with 401, not 500', async () => {
    const response = await refresh('garbage');
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ code: 'INVALID_TOKEN', detail: 'jwt malformed' });
  });
});
