import { resolve } from 'node:path';
import { ProceedConfigError } from 'proceedjs';
import { describe, expect, it, vi } from 'vitest';
import { readSettings } from './settings.js';

const secret = 'k3Jq9vX2mB7tR4wZ8nC1pL6hF5dG0sYe';

describe('readSettings', () => {
  it('reads the environment, with the documented defaults', () => {
    expect(readSettings({}, {})).toEqual({
      production: false,
      database: { kind: 'directory', path: resolve('.data/db') },
      jwtSecret: undefined,
      admin: undefined,
      authRateLimit: 10,
      trustProxy: undefined,
      workers: 1,
      redisUrl: undefined,
      rateLimitOnStoreError: 'allow',
      attachments: { kind: 'directory', path: resolve('.data/db-attachments') },
    });
    expect(
      readSettings(
        {},
        {
          NODE_ENV: 'production',
          JWT_SECRET: secret,
          DATABASE_URL: 'postgres://db.internal/blog',
          ADMIN_EMAIL: 'boss@example.com',
          ADMIN_PASSWORD: 'boss password',
          AUTH_RATE_LIMIT: '5',
          TRUST_PROXY: '10.0.0.0/8',
          REDIS_URL: 'redis://:pw@cache.internal:6379/2',
          RATE_LIMIT_ON_STORE_ERROR: 'refuse',
          METRICS_PORT: '9464',
        },
      ),
    ).toEqual({
      production: true,
      database: { kind: 'postgres', url: 'postgres://db.internal/blog' },
      jwtSecret: secret,
      admin: { email: 'boss@example.com', password: 'boss password' },
      authRateLimit: 5,
      trustProxy: '10.0.0.0/8',
      workers: 1,
      redisUrl: 'redis://:pw@cache.internal:6379/2',
      rateLimitOnStoreError: 'refuse',
      metricsPort: 9464,
      attachments: { kind: 'directory', path: resolve('.data/attachments') },
    });
  });

  it('keeps attachments where ATTACHMENTS_DIR says, else beside the database, else in a temporary directory', () => {
    // A number of hops (the proxy in front appends the client's address), or every hop.
    expect(readSettings({}, { TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(readSettings({}, { TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(readSettings({}, { ATTACHMENTS_DIR: '/srv/files' }).attachments).toEqual({
      kind: 'directory',
      path: '/srv/files',
    });
    expect(
      readSettings({ attachmentsDirectory: 'files' }, { ATTACHMENTS_DIR: '/srv/files' }).attachments,
    ).toEqual({ kind: 'directory', path: resolve('files') });
    expect(readSettings({}, { DATABASE_URL: '/srv/blog/db' }).attachments).toEqual({
      kind: 'directory',
      path: '/srv/blog/db-attachments',
    });
    expect(readSettings({ databaseUrl: 'memory://' }, {}).attachments).toEqual({ kind: 'temporary' });
    const store = { save: vi.fn(), find: vi.fn(), removeFilesOf: vi.fn() };
    expect(() => readSettings({ attachments: store, attachmentsDirectory: '/srv/files' }, {})).toThrow(
      'attachments and attachmentsDirectory both say where attachments go',
    );
  });

  it('lets options win over the environment', () => {
    const settings = readSettings(
      { databaseUrl: 'memory://', jwtSecret: secret, production: true, authRateLimit: 3 },
      { DATABASE_URL: 'postgres://elsewhere/db', NODE_ENV: 'development', AUTH_RATE_LIMIT: 'nonsense' },
    );
    expect(settings).toMatchObject({ database: { kind: 'memory' }, production: true, authRateLimit: 3 });
  });

  it('reads PASSWORD_HASH_COST as N,r,p, and refuses one cheaper than OWASP’s minimum in production', () => {
    expect(readSettings({}, { PASSWORD_HASH_COST: '1024,8,1' }).passwordCost).toEqual({
      N: 1024,
      r: 8,
      p: 1,
    });
    const production = { NODE_ENV: 'production', JWT_SECRET: secret };
    expect(readSettings({}, { ...production, PASSWORD_HASH_COST: '131072, 8, 1' }).passwordCost).toEqual({
      N: 131_072,
      r: 8,
      p: 1,
    });
    expect(() => readSettings({}, { PASSWORD_HASH_COST: '1000,8,1' })).toThrow(/power of two/);
    expect(() => readSettings({}, { PASSWORD_HASH_COST: '1024,8' })).toThrow(/must be N,r,p/);
    expect(() => readSettings({}, { PASSWORD_HASH_COST: '1024,0,1' })).toThrow(/r must be 1 to 32/);
    expect(() => readSettings({}, { ...production, PASSWORD_HASH_COST: '1024,8,1' })).toThrow(
      /cheaper than OWASP's minimum/,
    );
    expect(() => readSettings({ passwordCost: { N: 1024 } }, production)).toThrow(
      /cheaper than OWASP's minimum/,
    );
    // As much work, half the memory: a GPU's way in.
    expect(() => readSettings({}, { ...production, PASSWORD_HASH_COST: '65536,1,10' })).toThrow(
      /cheaper than OWASP's minimum/,
    );
  });

  it('refuses production without a secret of 32 bytes', () => {
    expect(() => readSettings({}, { NODE_ENV: 'production' })).toThrow(ProceedConfigError);
    expect(() => readSettings({}, { NODE_ENV: 'production', JWT_SECRET: 'short' })).toThrow(/5 bytes long/);
  });

  it('refuses several workers on an embedded database or without a secret', () => {
    expect(() => readSettings({ workers: 2, clustered: true }, { JWT_SECRET: secret })).toThrow(
      /--workers needs a PostgreSQL server: an embedded PGlite database \(.*\.data\/db\) lives in one process/,
    );
    // One worker too: --workers means the same on every machine, `auto` on one CPU included.
    expect(() => readSettings({ workers: 1, clustered: true }, {})).toThrow(
      /--workers needs a PostgreSQL server/,
    );
    expect(() => readSettings({ workers: 2, databaseUrl: 'memory://' }, { JWT_SECRET: secret })).toThrow(
      /\(memory:\/\/\) lives in one process/,
    );
    expect(() => readSettings({ workers: 2 }, { DATABASE_URL: 'postgres://db/blog' })).toThrow(
      /JWT_SECRET is not set, and 2 workers/,
    );
    expect(
      readSettings({ workers: 4 }, { DATABASE_URL: 'postgres://db/blog', JWT_SECRET: secret }).workers,
    ).toBe(4);
  });

  it('refuses a PostgreSQL URL that does not parse, without echoing it', () => {
    expect(() => readSettings({}, { DATABASE_URL: 'postgres://user:pa ss@[bad/blog' })).toThrow(
      'DATABASE_URL starts with postgres:// but is not a valid URL',
    );
  });

  it('refuses a URL of another scheme instead of making it a directory, without echoing it', () => {
    for (const typo of ['postgre://admin:s3cret@db/blog', 'mysql://db/blog', 'pg:db']) {
      expect(() => readSettings({}, { DATABASE_URL: typo })).toThrow(
        /DATABASE_URL has the scheme "[a-z]+:"; use postgres/,
      );
      expect(() => readSettings({}, { DATABASE_URL: typo })).not.toThrow(/s3cret|db\/blog/);
    }
    expect(readSettings({}, { DATABASE_URL: 'file:///srv/blog/db' }).database).toEqual({
      kind: 'directory',
      path: '/srv/blog/db',
    });
  });

  it('refuses an AUTH_RATE_LIMIT that is not a positive integer', () => {
    expect(() => readSettings({}, { AUTH_RATE_LIMIT: '0' })).toThrow(
      /AUTH_RATE_LIMIT must be a positive integer/,
    );
  });

  it('refuses a bad drain delay or timeout before anything starts', () => {
    expect(() => readSettings({}, { SHUTDOWN_DRAIN_MS: 'soon' })).toThrow(/SHUTDOWN_DRAIN_MS must be/);
    expect(() => readSettings({}, { REQUEST_TIMEOUT_MS: '-5' })).toThrow(/REQUEST_TIMEOUT_MS must be/);
  });

  it('refuses a REDIS_URL of another scheme, without echoing it, and an unknown store-error policy', () => {
    expect(() => readSettings({}, { REDIS_URL: 'http://:secret@cache:6379' })).toThrow(
      'REDIS_URL must start with redis:// or rediss:// (got http://…)',
    );
    expect(() => readSettings({}, { REDIS_URL: 'cache 6379' })).toThrow(/REDIS_URL is not a URL/);
    expect(() => readSettings({}, { METRICS_PORT: '3030a' })).toThrow(/METRICS_PORT must be a port number/);
    expect(() => readSettings({}, { RATE_LIMIT_ON_STORE_ERROR: 'ignore' })).toThrow(
      /RATE_LIMIT_ON_STORE_ERROR must be "allow" or "refuse"/,
    );
    // Limits counted in the process cannot lose their store: the setting would do nothing.
    expect(() => readSettings({}, { RATE_LIMIT_ON_STORE_ERROR: 'refuse' })).toThrow(
      'RATE_LIMIT_ON_STORE_ERROR applies to limits shared in Redis only: set REDIS_URL too, or unset it',
    );
  });
});
