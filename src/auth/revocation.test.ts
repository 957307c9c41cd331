/**
 * One suite, run against every revocation store: memory, PGlite (embedded PostgreSQL, always
 * available), a PostgreSQL server through pg and Redis through ioredis (when reachable).
 */
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MemoryRevocationStore, type RevocationCheck, type RevocationStore } from './revocation.js';
import { PostgresRevocationStore, type SqlClient } from './revocation-postgres.js';
import { type RedisClient, RedisRevocationStore } from './revocation-redis.js';
import { TokenService } from './tokens.js';

const suffix = () => randomBytes(6).toString('hex');
const hour = 3_600_000;

interface StoreHarness {
  store: RevocationStore;
  /** How many entries the backend holds, expired ones included (undefined: cannot tell). */
  count?: () => Promise<number>;
  close: () => Promise<void>;
  /** Writes a user-wide time cut-off as 0.1 did (undefined: the store keeps nothing across versions). */
  writeLegacyCutoff?: (userId: string, cutoff: number) => Promise<void>;
}

function check(overrides: Partial<RevocationCheck> = {}): RevocationCheck {
  return {
    jti: `j-${suffix()}`,
    family: `f-${suffix()}`,
    userId: `u-${suffix()}`,
    generation: 0,
    ...overrides,
  };
}

function revocationStoreSuite(name: string, open: () => Promise<StoreHarness>, skip = false) {
  describe.skipIf(skip)(`${name} revocation store`, () => {
    let harness: StoreHarness;
    let store: RevocationStore;

    beforeAll(async () => {
      harness = await open();
      store = harness.store;
    });
    afterAll(async () => harness?.close());

    it('knows nothing of a fresh token', async () => {
      expect(await store.isRevoked(check())).toBe(false);
    });

    it('revokes one token by jti, and only that one', async () => {
      const revoked = check();
      await store.revokeToken(revoked.jti, Date.now() + hour);
      expect(await store.isRevoked(revoked)).toBe(true);
      expect(await store.isRevoked({ ...check(), userId: revoked.userId, family: revoked.family })).toBe(
        false,
      );
    });

    it('revokes every token of a family', async () => {
      const family = `f-${suffix()}`;
      await store.revokeFamily(family, Date.now() + hour);
      expect(await store.isRevoked(check({ family }))).toBe(true);
      expect(await store.isRevoked(check({ family }))).toBe(true);
      expect(await store.isRevoked(check())).toBe(false);
    });

    it('revokes a user’s tokens of older generations, not the current one, and no clock decides', async () => {
      const userId = `u-${suffix()}`;
      expect(await store.userGeneration(userId)).toBe(0);
      await store.revokeUser(userId);
      expect(await store.userGeneration(userId)).toBe(1);
      expect(await store.isRevoked(check({ userId, generation: 0 }))).toBe(true);
      expect(await store.isRevoked(check({ userId, generation: 1 }))).toBe(false);
      expect(await store.isRevoked(check({ generation: 0 }))).toBe(false);
    });

    it('still ends the tokens without gen that a 0.1 time cut-off revoked, and only those', async (context) => {
      if (harness.writeLegacyCutoff === undefined) context.skip();
      const userId = `u-${suffix()}`;
      const cutoff = Date.now();
      await harness.writeLegacyCutoff?.(userId, cutoff);
      expect(await store.isRevoked(check({ userId, legacyIssuedAt: cutoff - 1 }))).toBe(true);
      expect(await store.isRevoked(check({ userId, legacyIssuedAt: cutoff }))).toBe(true);
      expect(await store.isRevoked(check({ userId, legacyIssuedAt: cutoff + 1 }))).toBe(false);
      // A token with gen is judged by its generation alone.
      expect(await store.isRevoked(check({ userId }))).toBe(false);
    });

    it('refuses a generation above the user’s: the store lost its count, and a later revocation must still end the token', async () => {
      const userId = `u-${suffix()}`;
      // A token of generation 2 whose user the store knows nothing of (restarted, evicted, restored).
      expect(await store.isRevoked(check({ userId, generation: 2 }))).toBe(true);
      await store.revokeUser(userId);
      expect(await store.isRevoked(check({ userId, generation: 2 }))).toBe(true);
      expect(await store.isRevoked(check({ userId, generation: 1 }))).toBe(false);
    });

    it('moves the generation once per revocation, concurrent ones included', async () => {
      const userId = `u-${suffix()}`;
      await Promise.all(Array.from({ length: 10 }, () => store.revokeUser(userId)));
      expect(await store.userGeneration(userId)).toBe(10);
      expect(await store.isRevoked(check({ userId, generation: 9 }))).toBe(true);
      expect(await store.isRevoked(check({ userId, generation: 10 }))).toBe(false);
    });

    it('treats expired entries as absent, and keeps generations through a prune', async () => {
      const gone = check();
      const past = Date.now() - 1;
      await store.revokeToken(gone.jti, past);
      await store.revokeFamily(gone.family, past);
      expect(await store.isRevoked(gone)).toBe(false);
      const userId = `u-${suffix()}`;
      await store.revokeUser(userId);
      await store.prune();
      expect(await store.isRevoked(check({ userId, generation: 0 }))).toBe(true);
    });

    it('marks a refresh token used exactly once', async () => {
      const jti = `j-${suffix()}`;
      expect(await store.markUsed(jti, Date.now() + hour)).toBe(true);
      expect(await store.markUsed(jti, Date.now() + hour)).toBe(false);
      expect(await store.markUsed(`j-${suffix()}`, Date.now() + hour)).toBe(true);
    });

    it('lets exactly one of many concurrent markUsed calls win', async () => {
      const jti = `j-${suffix()}`;
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => store.markUsed(jti, Date.now() + hour)),
      );
      expect(answers.filter(Boolean)).toHaveLength(1);
    });

    it('prunes expired entries and keeps live ones', async () => {
      const live = check();
      await store.revokeToken(live.jti, Date.now() + hour);
      await store.revokeToken(`j-${suffix()}`, Date.now() - 1);
      await store.prune();
      expect(await store.isRevoked(live)).toBe(true);
      if (harness.count !== undefined) {
        const before = await harness.count();
        await store.revokeFamily(`f-${suffix()}`, Date.now() - 1);
        await store.prune();
        expect(await harness.count()).toBeLessThanOrEqual(before);
      }
    });

    it('backs a TokenService: logout, reuse detection and user-wide revocation', async () => {
      const tokens = new TokenService({ secret: `store-suite-secret-${'x'.repeat(32)}`, store });
      const login = await tokens.issuePair('alice');
      const claims = await tokens.verifyAccess(login.accessToken);

      const next = await tokens.refresh(login.refreshToken);
      await expect(tokens.refresh(login.refreshToken)).rejects.toThrow('refresh token already used');
      await expect(tokens.verifyAccess(next.accessToken)).rejects.toThrow('jwt revoked');

      const second = await tokens.issuePair('alice');
      await tokens.revoke(await tokens.verifyAccess(second.accessToken));
      await expect(tokens.verifyAccess(second.accessToken)).rejects.toThrow('jwt revoked');
      await expect(tokens.refresh(second.refreshToken)).rejects.toThrow('jwt revoked');

      const third = await tokens.issuePair('alice');
      await tokens.revokeAllForUser('alice');
      await expect(tokens.verifyAccess(third.accessToken)).rejects.toThrow('jwt revoked');
      expect(claims.sub).toBe('alice');
    });
  });
}

revocationStoreSuite('memory', async () => {
  const store = new MemoryRevocationStore();
  return { store, count: async () => store.size, close: async () => {} };
});

revocationStoreSuite('PGlite', async () => {
  const db = new PGlite();
  const client: SqlClient = db;
  const store = new PostgresRevocationStore(client, { table: 'auth_revocations' });
  await store.ensureSchema();
  await store.ensureSchema();
  const count = async () => {
    const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM auth_revocations');
    return rows[0]?.n ?? 0;
  };
  const writeLegacyCutoff = async (userId: string, cutoff: number) => {
    await db.query(
      `INSERT INTO auth_revocations (kind, key, value, expires_at) VALUES ('user', $1, $2, $3)`,
      [userId, cutoff, Date.now() + hour],
    );
  };
  return { store, count, close: () => db.close(), writeLegacyCutoff };
});

const postgresUrl = inject('postgresUrl');

revocationStoreSuite(
  'PostgreSQL',
  async () => {
    // Imported here so that a loader problem with pg fails this suite alone, not the file.
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: postgresUrl as string, max: 4 });
    const schema = `proceed_auth_${suffix()}`;
    await pool.query(`CREATE SCHEMA ${schema}`);
    // With named prepared statements, as the blog passes its pool (the PGlite suite runs the
    // plain path): the revocation check then goes through `prepared`.
    let preparedRuns = 0;
    const client = {
      query: (sql: string, params?: unknown[]) => pool.query(sql, params),
      prepared: (name: string, sql: string, params: unknown[]) => {
        preparedRuns++;
        return pool.query({ name, text: sql, values: params });
      },
    };
    const store = new PostgresRevocationStore(client, { table: `${schema}.revocations` });
    // Two instances creating the schema at once must both succeed.
    await Promise.all([
      store.ensureSchema(),
      new PostgresRevocationStore(pool, { table: `${schema}.revocations` }).ensureSchema(),
    ]);
    const count = async () => {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${schema}.revocations`,
      );
      return rows[0]?.n ?? 0;
    };
    const close = async () => {
      // The suite checked tokens: through the prepared statement, every time.
      if (preparedRuns === 0) throw new Error('the revocation check never ran as a prepared statement');
      await pool.query(`DROP SCHEMA ${schema} CASCADE`);
      await pool.end();
    };
    const writeLegacyCutoff = async (userId: string, cutoff: number) => {
      await pool.query(
        `INSERT INTO ${schema}.revocations (kind, key, value, expires_at) VALUES ('user', $1, $2, $3)`,
        [userId, cutoff, Date.now() + hour],
      );
    };
    return { store, count, close, writeLegacyCutoff };
  },
  postgresUrl === null,
);

const redisUrl = inject('redisUrl');

revocationStoreSuite(
  'Redis',
  async () => {
    const redis = new Redis(redisUrl as string, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    const client: RedisClient = redis;
    const prefix = `proceed-test:${suffix()}:`;
    const store = new RedisRevocationStore(client, { prefix });
    const close = async () => {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    };
    const writeLegacyCutoff = async (userId: string, cutoff: number) => {
      await redis.set(`${prefix}user:${userId}`, String(cutoff), 'PX', hour);
    };
    return { store, close, writeLegacyCutoff };
  },
  redisUrl === null,
);

describe('PostgresRevocationStore options', () => {
  it('refuses a table name that is not an identifier', () => {
    const client: SqlClient = { query: async () => ({ rows: [] }) };
    expect(() => new PostgresRevocationStore(client, { table: 'x; DROP TABLE users' })).toThrow(TypeError);
    expect(() => new PostgresRevocationStore(client, { table: 'a.b.c' })).toThrow(TypeError);
    expect(() => new PostgresRevocationStore(client, { table: 'auth.revoked_tokens' })).not.toThrow();
  });
});
