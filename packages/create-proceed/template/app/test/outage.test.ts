/**
 * A PostgreSQL database closed to new connections, as during maintenance or a failover: every
 * request that needs it answers 503 `UNAVAILABLE` with `Retry-After`, never 500, and the app
 * serves again once it opens, without a restart. PostgreSQL only: PGlite runs inside the process.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { engines, postgresUrl, useApp } from './databases.js';

const postgres = engines.find((engine) => engine.name === 'PostgreSQL');

describe('a PostgreSQL database closed to new connections', () => {
  if (postgres === undefined || postgres.skip || postgresUrl === undefined) {
    it.skip('needs TEST_DATABASE_URL', () => {});
    return;
  }
  const served = useApp(postgres);
  let name: string | undefined;
  const asAdmin = async (sql: string, params: unknown[] = []) => {
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    try {
      await admin.query(sql, params);
    } finally {
      await admin.end();
    }
  };
  // Runs before useApp's own (after hooks run last-registered first): the app's pool then ends
  // cleanly and its database can be dropped.
  afterAll(async () => {
    if (name !== undefined) await asAdmin(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`);
  });

  const send = (method: string, path: string, body?: unknown) =>
    fetch(`${served.origin}${path}`, {
      method,
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
  const account = { email: 'closed@example.com', password: 'correct horse', name: 'Closed' };

  it('answers 503 with Retry-After on every route that needs it, then 200 once it opens', async () => {
    expect((await send('POST', '/api/auth/register', account)).status).toBe(201);
    const { rows } = await served.database.sql.query('SELECT current_database() AS name');
    name = (rows[0] as { name?: string } | undefined)?.name;
    if (name === undefined) throw new Error('no database name');
    await asAdmin(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
    await asAdmin('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);

    for (const [method, path, body] of [
      ['GET', '/api/notes', undefined],
      ['POST', '/api/auth/login', { email: account.email, password: account.password }],
      ['POST', '/api/auth/register', { ...account, email: 'another@example.com' }],
    ] as const) {
      const reply = await send(method, path, body);
      expect(reply.status, `${method} ${path}`).toBe(503);
      expect(reply.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(reply.headers.get('retry-after'), `${method} ${path}`).toBe('5');
      expect(((await reply.json()) as { code?: string }).code).toBe('UNAVAILABLE');
    }
    // Readiness says so too, and the load balancer takes the instance out; liveness does not
    // restart it.
    const readiness = await send('GET', '/api/health');
    expect(readiness.status).toBe(503);
    expect(((await readiness.json()) as { code?: string }).code).toBe('UNAVAILABLE');
    expect((await send('GET', '/api/health/live')).status).toBe(200);

    await asAdmin(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`);
    expect((await send('GET', '/api/notes')).status).toBe(200);
    expect(
      (await send('POST', '/api/auth/login', { email: account.email, password: account.password })).status,
    ).toBe(200);
    // The account refused during the closure was not made.
    expect(
      (await send('POST', '/api/auth/login', { email: 'another@example.com', password: account.password }))
        .status,
    ).toBe(401);
  });
});
