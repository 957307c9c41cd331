/**
 * An idle PostgreSQL connection the server ends (a restart, a failover, an administrator) is an
 * error of the pool, not of a request: the blog logs it as one JSON line at `warn` in its own
 * log, never as plain text among the JSON lines, and serves on with new connections.
 */

import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { App } from 'proceedjs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createBlogApp } from '../src/app.js';
import type { BlogContext } from '../src/context.js';
import { createPostgresDatabase } from './databases.js';
import { inProcess } from './in-process.js';
import { eventually } from './support.js';

const postgresUrl = inject('postgresUrl');

describe.skipIf(postgresUrl === null)('an idle connection the server ends', () => {
  const lines: string[] = [];
  let app: App<BlogContext>;
  let database: { url: string; drop(): Promise<void> };

  beforeAll(async () => {
    database = await createPostgresDatabase(postgresUrl ?? '');
    app = await createBlogApp({
      databaseUrl: database.url,
      jwtSecret: randomBytes(32).toString('hex'),
      production: false,
      logger: { level: 'warn', stream: { write: (line: string) => lines.push(line) } },
    });
  });
  afterAll(async () => {
    await app?.close();
    await database?.drop();
  });

  it('is one warn line in the app’s log, and the next request gets a new connection', async () => {
    expect((await inProcess(app, { method: 'GET', url: '/api/posts' })).statusCode).toBe(200);
    const admin = new pg.Client({ connectionString: postgresUrl ?? '' });
    await admin.connect();
    try {
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [
        new URL(database.url).pathname.slice(1),
      ]);
    } finally {
      await admin.end();
    }
    const logged = () =>
      lines.map((line) => JSON.parse(line) as { level: number; msg: string; err?: { message?: string } });
    await eventually(
      () => logged().some((record) => record.msg === 'PostgreSQL connection error'),
      10_000,
      'the pool’s error in the log',
    );
    const record = logged().find((entry) => entry.msg === 'PostgreSQL connection error');
    expect(record?.level).toBe(40);
    expect(record?.err?.message).toMatch(/terminating connection/);
    expect((await inProcess(app, { method: 'GET', url: '/api/posts' })).statusCode).toBe(200);
  });
});
