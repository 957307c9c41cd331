/**
 * `PostgresRevocationStore.userLoader`: the user and the token's revocation in one statement, on
 * PGlite (plain queries) and on a PostgreSQL server (named prepared statements), alone and behind
 * the auth plugin.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ProceedConfigError } from '../core/errors.js';
import { procedure, procedures } from '../core/procedure.js';
import { createApp } from '../server/create-app.js';
import { accessClaims } from './fixtures/claims.js';
import { authenticated } from './guards.js';
import { type AccessClaims, TokenRevokedError } from './jwt.js';
import { type AuthContext, authPlugin } from './plugin.js';
import { MemoryRevocationStore } from './revocation.js';
import { PostgresRevocationStore, type SqlClient } from './revocation-postgres.js';
import { revocationCheckOf, TokenService } from './tokens.js';

/** A store that revokes nothing: reads a token's claims whatever its generation. */
class NothingRevoked extends MemoryRevocationStore {
  override async isRevoked(): Promise<boolean> {
    return false;
  }
}

interface Member {
  id: string;
  name: string;
  isActive: boolean;
}

const secret = `one-round-trip-${'x'.repeat(32)}`;
const memberSql = 'SELECT id, name, is_active AS "isActive" FROM members WHERE id = $1';
const toMember = (row: Record<string, unknown>) => row as unknown as Member;
const postgresUrl = inject('postgresUrl');

/** A client that counts the statements it runs, as `pg` or PGlite would run them. */
function counted(client: SqlClient): SqlClient & { statements: number } {
  const counting = {
    statements: 0,
    query: (sql: string, params?: unknown[]) => {
      counting.statements++;
      return client.query(sql, params);
    },
    ...(client.prepared === undefined
      ? {}
      : {
          prepared: (name: string, sql: string, params: unknown[]) => {
            counting.statements++;
            return client.prepared?.(name, sql, params) ?? Promise.reject(new Error('no prepared'));
          },
        }),
  };
  return counting;
}

/** `GET /api/me`: the signed-in member. */
const meProcedures = () =>
  procedures('me', {
    getMe: procedure<AuthContext<Member>>()
      .rest({ method: 'GET', path: '/me' })
      .guard(authenticated)
      .query(({ ctx }) => ctx.user),
  });

interface Engine {
  client: SqlClient;
  close: () => Promise<void>;
}

function userLoaderSuite(name: string, open: () => Promise<Engine>, skip = false) {
  describe.skipIf(skip)(`PostgresRevocationStore.userLoader on ${name}`, () => {
    let engine: Engine;
    let client: SqlClient & { statements: number };
    let store: PostgresRevocationStore;
    let tokens: TokenService;
    const ada: Member = { id: randomUUID(), name: 'Ada', isActive: true };

    beforeAll(async () => {
      engine = await open();
      client = counted(engine.client);
      await client.query(
        'CREATE TABLE members (id uuid PRIMARY KEY, name text NOT NULL, is_active boolean NOT NULL)',
      );
      await client.query('INSERT INTO members VALUES ($1, $2, $3)', [ada.id, ada.name, ada.isActive]);
      store = new PostgresRevocationStore(client);
      await store.ensureSchema();
      tokens = new TokenService({ secret, store });
    });
    afterAll(async () => engine?.close());

    it('loads the user of a live token, and nothing for an id with no user', async () => {
      const load = store.userLoader(memberSql, toMember);
      expect(await load(ada.id, accessClaims({ sub: ada.id }))).toEqual(ada);
      const nobody = randomUUID();
      expect(await load(nobody, accessClaims({ sub: nobody }))).toBeUndefined();
    });

    it('creates its table first when the loader is its first use, then reads without waiting on it', async () => {
      const fresh = new PostgresRevocationStore(client, { table: `fresh_${randomBytes(4).toString('hex')}` });
      const load = fresh.userLoader(memberSql, toMember);
      const [first, second] = await Promise.all([
        load(ada.id, accessClaims({ sub: ada.id })),
        load(ada.id, accessClaims({ sub: ada.id })),
      ]);
      expect(first).toEqual(ada);
      expect(second).toEqual(ada);
      expect(await load(ada.id, accessClaims({ sub: ada.id }))).toEqual(ada);
    });

    it('refuses every revoked token, as the store’s own check does', async () => {
      const load = store.userLoader(memberSql, toMember);
      const refused = (claims: AccessClaims) =>
        expect(load(claims.sub, claims)).rejects.toThrow(TokenRevokedError);

      const loggedOut = await tokens.issuePair(ada.id);
      await tokens.revoke(await tokens.verifyAccess(loggedOut.accessToken));
      await refused(await claimsOf(loggedOut.accessToken));

      const reused = await tokens.issuePair(ada.id);
      await tokens.refresh(reused.refreshToken);
      await expect(tokens.refresh(reused.refreshToken)).rejects.toThrow('refresh token already used');
      await refused(await claimsOf(reused.accessToken));

      const before = await tokens.issuePair(ada.id);
      await tokens.revokeAllForUser(ada.id);
      await refused(await claimsOf(before.accessToken));
      const after = await tokens.issuePair(ada.id);
      expect(await load(ada.id, await claimsOf(after.accessToken))).toEqual(ada);
      // A generation the table never reached: its count was lost (a restored backup), so refused.
      await refused({ ...(await claimsOf(after.accessToken)), gen: 99 });
    });

    it('keeps its own verdict whatever the user’s columns are called', async () => {
      const spoofing = store.userLoader(
        'SELECT id, name, is_active AS "isActive", false AS proceed_revoked, false AS proceed_found FROM members WHERE id = $1',
        toMember,
      );
      const claims = await adaClaims();
      expect(await spoofing(ada.id, claims)).toEqual(ada);
      await store.revokeToken(claims.jti, Date.now() + 60_000);
      await expect(Promise.resolve(spoofing(ada.id, claims))).rejects.toThrow(TokenRevokedError);
    });

    it('refuses exactly the revoked tokens, on any mix of revocations, as isRevoked does', async () => {
      const load = store.userLoader(memberSql, toMember);
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            token: fc.boolean(),
            family: fc.boolean(),
            generation: fc.integer({ min: 0, max: 2 }),
            revokedUser: fc.integer({ min: 0, max: 2 }),
            // A token without `gen`, from 0.1, and a 0.1 time cut-off of its user.
            legacy: fc.boolean(),
            cutoff: fc.constantFrom('none', 'before it was issued', 'after it was issued'),
          }),
          async (plan) => {
            const userId = randomUUID();
            const claims = accessClaims({ sub: userId, gen: plan.generation });
            if (plan.legacy) delete (claims as { gen?: number }).gen;
            if (plan.token) await store.revokeToken(claims.jti, Date.now() + 60_000);
            if (plan.family) await store.revokeFamily(claims.fam, Date.now() + 60_000);
            for (let times = 0; times < plan.revokedUser; times++) await store.revokeUser(userId);
            if (plan.cutoff !== 'none') {
              const issued = claims.iat * 1000;
              await client.query(
                `INSERT INTO proceed_revocations (kind, key, value, expires_at) VALUES ('user', $1, $2, $3)`,
                [
                  userId,
                  plan.cutoff === 'before it was issued' ? issued - 5000 : issued + 5000,
                  Date.now() + 60_000,
                ],
              );
            }
            const expected =
              plan.token ||
              plan.family ||
              // Unequal either way: a generation above the store's means it lost its count.
              plan.revokedUser !== (plan.legacy ? 0 : plan.generation) ||
              (plan.legacy && plan.cutoff === 'after it was issued');
            expect(await store.isRevoked(revocationCheckOf(claims))).toBe(expected);
            const loaded = await Promise.resolve(load(userId, claims)).then(
              () => false,
              (error: unknown) => {
                if (error instanceof TokenRevokedError) return true;
                throw error;
              },
            );
            expect(loaded).toBe(expected);
          },
        ),
        { numRuns: 40 },
      );
    });

    it('refuses a statement that is not one SELECT of $1, and a call without the token’s claims', async () => {
      expect(() => store.userLoader(`${memberSql};`, toMember)).toThrow(TypeError);
      expect(() => store.userLoader('DELETE FROM members WHERE id = $1', toMember)).toThrow(TypeError);
      // $2 would be bound to the token's jti.
      expect(() => store.userLoader(`${memberSql} AND name <> $2`, toMember)).toThrow(TypeError);
      expect(() => store.userLoader(`${memberSql} OR id::text = $10`, toMember)).toThrow(TypeError);
      const commented = store.userLoader(`${memberSql} -- the signed-in member`, toMember);
      expect(await commented(ada.id, await adaClaims())).toEqual(ada);
      const load = store.userLoader(memberSql, toMember);
      await expect(Promise.resolve(load(ada.id, accessClaims()))).rejects.toThrow(TypeError);
    });

    it('behind authPlugin: one statement per signed-in request, and a revoked token is a 401', async () => {
      const me = meProcedures();
      const signedIn = async (loader: 'one round trip' | 'two') => {
        const app = createApp<AuthContext<Member>>({ logger: false });
        await app.register(authPlugin, {
          tokens,
          userLoader:
            loader === 'two'
              ? async (id) =>
                  (await client.query(memberSql, [id])).rows.map((row) =>
                    toMember(row as Record<string, unknown>),
                  )[0]
              : store.userLoader(memberSql, toMember),
        });
        app.mount([me]);
        return app;
      };
      const { accessToken } = await tokens.issuePair(ada.id);
      const headers = { authorization: `Bearer ${accessToken}` };
      for (const [loader, statements] of [
        ['one round trip', 1],
        ['two', 2],
      ] as const) {
        const app = await signedIn(loader);
        const before = client.statements;
        const answer = await app.inject({ url: '/api/me', headers });
        expect(answer.json()).toEqual(ada);
        expect(client.statements - before).toBe(statements);
        await app.close();
      }
      await tokens.revoke(await tokens.verifyAccess(accessToken));
      const app = await signedIn('one round trip');
      const refused = await app.inject({ url: '/api/me', headers });
      expect(refused.statusCode).toBe(401);
      expect(refused.json()).toMatchObject({ code: 'INVALID_TOKEN', detail: 'jwt revoked' });
      await app.close();
    });

    it('behind authPlugin: a signed sub the uuid column cannot read is a 401, on both loaders', async () => {
      // No userId option on this TokenService: the database is the first to see the sub.
      for (const userLoader of [
        store.userLoader(memberSql, toMember),
        async (id: string) => (await client.query(memberSql, [id])).rows[0] as Member | undefined,
      ]) {
        const app = createApp<AuthContext<Member>>({ logger: false });
        await app.register(authPlugin, { tokens, userLoader });
        app.mount([meProcedures()]);
        for (const sub of ['not-a-uuid', `${ada.id}x`]) {
          const { accessToken } = await tokens.issuePair(sub);
          const answer = await app.inject({
            url: '/api/me',
            headers: { authorization: `Bearer ${accessToken}` },
          });
          expect(answer.statusCode, answer.body).toBe(401);
          expect(answer.json()).toMatchObject({ code: 'INVALID_TOKEN', detail: 'jwt malformed' });
        }
        await app.close();
      }
    });

    it('behind authPlugin: a wrapped loader (a cache) gets the plugin’s own check', async () => {
      const load = store.userLoader(memberSql, toMember);
      const cache = new Map<string, Member>();
      const cached = async (id: string, claims: AccessClaims) => {
        const hit = cache.get(id);
        if (hit !== undefined) return hit;
        const loaded = await load(id, claims);
        if (loaded) cache.set(id, loaded);
        return loaded;
      };
      // As memoizers do (mimic-fn): the wrapper takes the loader's own properties, symbols too.
      Object.assign(cached, load);
      const app = createApp<AuthContext<Member>>({ logger: false });
      await app.register(authPlugin, { tokens, userLoader: cached });
      app.mount([meProcedures()]);
      const { accessToken } = await tokens.issuePair(ada.id);
      const headers = { authorization: `Bearer ${accessToken}` };
      expect((await app.inject({ url: '/api/me', headers })).json()).toEqual(ada);
      const before = client.statements;
      expect((await app.inject({ url: '/api/me', headers })).json()).toEqual(ada);
      expect(client.statements - before).toBe(1);
      await tokens.revoke(await tokens.verifyAccess(accessToken));
      const refused = await app.inject({ url: '/api/me', headers });
      expect(refused.json()).toMatchObject({ status: 401, code: 'INVALID_TOKEN', detail: 'jwt revoked' });
      await app.close();
    });

    it('behind authPlugin: a TokenService whose verifyAccess adds checks keeps them', async () => {
      class Audited extends TokenService {
        override async verifyAccess(token: string): Promise<AccessClaims> {
          const claims = await super.verifyAccess(token);
          if (claims.sub !== ada.id) throw new TokenRevokedError('only Ada today');
          return claims;
        }
      }
      const audited = new Audited({ secret, store });
      const app = createApp<AuthContext<Member>>({ logger: false });
      await app.register(authPlugin, { tokens: audited, userLoader: store.userLoader(memberSql, toMember) });
      app.mount([meProcedures()]);
      const someone = randomUUID();
      const { accessToken } = await audited.issuePair(someone);
      const refused = await app.inject({
        url: '/api/me',
        headers: { authorization: `Bearer ${accessToken}` },
      });
      expect(refused.json()).toMatchObject({ status: 401, detail: 'only Ada today' });
      await app.close();
    });

    it('is refused by an authPlugin whose TokenService uses another store', async () => {
      const app = createApp<AuthContext<Member>>({ logger: false });
      const elsewhere = new TokenService({ secret, store: new MemoryRevocationStore() });
      await expect(
        app.register(authPlugin, { tokens: elsewhere, userLoader: store.userLoader(memberSql, toMember) }),
      ).rejects.toThrow(ProceedConfigError);
      await app.close();
    });

    /** Claims of a live token of Ada's, at her current generation (a test before revokes her older ones). */
    const adaClaims = async () => accessClaims({ sub: ada.id, gen: await store.userGeneration(ada.id) });

    /** A token's claims, its signature checked and its revocation left to the store under test. */
    const claimsOf = async (token: string): Promise<AccessClaims> => {
      const probe = new TokenService({ secret, store: new NothingRevoked() });
      return probe.verifyAccess(token);
    };
  });
}

userLoaderSuite('PGlite', async () => {
  const db = new PGlite();
  return { client: db, close: () => db.close() };
});

// The prepared path everywhere, where no PostgreSQL server runs (PGlite prepares each query anyway).
userLoaderSuite('PGlite through prepared()', async () => {
  const db = new PGlite();
  return {
    client: {
      query: (sql, params) => db.query(sql, params),
      prepared: (_name, sql, params) => db.query(sql, params),
    },
    close: () => db.close(),
  };
});

userLoaderSuite(
  'PostgreSQL',
  async () => {
    const { default: pg } = await import('pg');
    const schema = `proceed_loader_${randomBytes(6).toString('hex')}`;
    // Every connection works in a scratch schema of its own.
    const pool = new pg.Pool({
      connectionString: postgresUrl as string,
      max: 4,
      options: `-c search_path=${schema}`,
    });
    await pool.query(`CREATE SCHEMA ${schema}`);
    return {
      client: {
        query: (sql: string, params?: unknown[]) => pool.query(sql, params),
        prepared: (name: string, sql: string, params: unknown[]) =>
          pool.query({ name, text: sql, values: params }),
      },
      close: async () => {
        await pool.query(`DROP SCHEMA ${schema} CASCADE`);
        await pool.end();
      },
    };
  },
  postgresUrl === null,
);
