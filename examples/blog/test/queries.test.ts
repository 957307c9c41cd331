/**
 * What a request costs the database: an edit, a delete, a publish by the author read the post
 * once (the ownership step loads it; the handler takes it from the context), then write; a login
 * does the same work whether or not the email has an account.
 */

import { randomBytes } from 'node:crypto';
import type { App } from 'proceedjs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createBlogApp } from '../src/app.js';
import type { BlogContext } from '../src/context.js';
import { type Database, openDatabase } from '../src/db/index.js';
import { createPostgresDatabase } from './databases.js';
import { inProcess } from './in-process.js';

const postgresUrl = inject('postgresUrl');

const engines = [
  { name: 'PGlite', skip: false, url: async () => ({ url: 'memory://', drop: async () => undefined }) },
  {
    name: 'PostgreSQL',
    skip: postgresUrl === null,
    url: () => createPostgresDatabase(postgresUrl ?? ''),
  },
];

describe.each(engines)('the queries of a request on $name', (engine) => {
  if (engine.skip) {
    it.skip('needs PostgreSQL', () => undefined);
    return;
  }
  const statements: string[] = [];
  let app: App<BlogContext>;
  let database: Database;
  let drop: () => Promise<void>;
  let token: string;

  beforeAll(async () => {
    const created = await engine.url();
    drop = created.drop;
    database = await openDatabase(created.url, { logQuery: (sql) => statements.push(sql) });
    app = await createBlogApp({
      database,
      databaseUrl: created.url,
      jwtSecret: randomBytes(32).toString('hex'),
      production: false,
      logger: false,
      admin: { email: 'admin@example.com', password: 'admin-password' },
    });
    const session = await inProcess(app, {
      method: 'POST',
      url: '/api/auth/register',
      payload: { email: 'writer@example.com', password: 'writer-password', name: 'Writer' },
    });
    token = session.json<{ accessToken: string }>().accessToken;
  });
  afterAll(async () => {
    await app.close();
    await drop();
  });

  /** The statements on `posts` one request runs. */
  async function postStatements(method: 'PUT' | 'DELETE' | 'POST', url: string, payload?: object) {
    statements.length = 0;
    const reply = await inProcess(app, {
      method,
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(payload === undefined ? {} : { payload }),
    });
    expect(reply.statusCode, reply.body).toBeLessThan(300);
    return statements
      .filter((sql) => /"posts"/.test(sql))
      .map((sql) => sql.split(/\s+/, 1)[0]?.toLowerCase());
  }

  async function newPost(): Promise<string> {
    const reply = await inProcess(app, {
      method: 'POST',
      url: '/api/posts',
      headers: { authorization: `Bearer ${token}` },
      payload: { title: 'Counted', content: 'Some words' },
    });
    return reply.json<{ id: string }>().id;
  }

  it('PUT /api/posts/:id reads the post once, then updates it', async () => {
    const id = await newPost();
    expect(
      await postStatements('PUT', `/api/posts/${id}`, { title: 'Edited', content: 'New words' }),
    ).toEqual(['select', 'update']);
  });

  it('a login for an unknown email runs the same statements as a wrong password (no account oracle)', async () => {
    const loginStatements = async (email: string) => {
      statements.length = 0;
      const reply = await inProcess(app, {
        method: 'POST',
        url: '/api/auth/login',
        payload: { email, password: 'not-the-password' },
      });
      expect(reply.statusCode, reply.body).toBe(401);
      return [...statements];
    };
    const known = await loginStatements('writer@example.com');
    expect(known.length).toBeGreaterThanOrEqual(3);
    expect(await loginStatements('nobody@example.com')).toEqual(known);
  });

  it('POST /api/posts/:id/publish and DELETE /api/posts/:id read it once too', async () => {
    const id = await newPost();
    expect(await postStatements('POST', `/api/posts/${id}/publish`)).toEqual(['select', 'update']);
    expect(await postStatements('DELETE', `/api/posts/${id}`)).toEqual(['select', 'delete']);
  });
});
