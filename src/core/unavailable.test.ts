import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import {
  gaveUpDetail,
  UnavailableError,
  unavailableProblem,
  unavailableWhenConnectFails,
} from './unavailable.js';

const postgresUrl = inject('postgresUrl');

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('unavailableProblem', () => {
  it('recognises a peer that is down, a database that cannot serve, a lost connection and a silent one', () => {
    for (const error of [
      withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      withCode('read ECONNRESET', 'ECONNRESET'),
      withCode('getaddrinfo ENOTFOUND db', 'ENOTFOUND'),
      withCode('terminating connection due to administrator command', '57P01'),
      withCode('the database system is starting up', '57P03'),
      withCode('sorry, too many clients already', '53300'),
      withCode('connection failure', '08006'),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
      // A connection it holds that stopped answering, past the pool's `query_timeout`.
      new Error('Query read timeout'),
      new AggregateError([withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')], ''),
    ]) {
      const problem = unavailableProblem(error);
      expect(problem?.status, error.message).toBe(503);
      expect(problem?.code).toBe('UNAVAILABLE');
      expect(problem?.headers).toEqual({ 'retry-after': '5' });
      // The driver's words stay in the log, never in the answer.
      expect(problem?.message).not.toContain('5432');
    }
  });

  it('answers a statement the database gave up on as a 503 of its own words: a timeout, a deadlock, a serialization failure', () => {
    for (const error of [
      withCode('canceling statement due to statement timeout', '57014'),
      withCode('could not serialize access due to concurrent update', '40001'),
      withCode('deadlock detected', '40P01'),
      withCode('canceling statement due to lock timeout', '55P03'),
    ]) {
      const problem = unavailableProblem(new Error('Failed query: update posts', { cause: error }));
      expect(problem?.status, error.message).toBe(503);
      expect(problem?.headers).toEqual({ 'retry-after': '5' });
      expect(problem?.message).toBe(gaveUpDetail);
    }
  });

  it('looks through errors that wrap the driver’s (an ORM’s query error)', () => {
    const wrapped = new Error('Failed query: select 1', {
      cause: withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
    });
    expect(unavailableProblem(wrapped)?.status).toBe(503);
  });

  it('leaves every other error alone', () => {
    for (const error of [
      new Error('boom'),
      withCode('duplicate key value violates unique constraint', '23505'),
      withCode('syntax error', '42601'),
      new TypeError('x is not a function'),
      'a string',
      undefined,
    ]) {
      expect(unavailableProblem(error)).toBeUndefined();
    }
  });
});

describe('UnavailableError', () => {
  it('is an outage by where it was thrown, whatever the driver said, through any wrapping', () => {
    // A database closed to connections: SQLSTATE 55000, in no list of outage codes.
    const refused = withCode('database "blog" is not currently accepting connections', '55000');
    expect(unavailableProblem(refused)).toBeUndefined();
    const thrown = new UnavailableError(refused);
    expect(thrown).toMatchObject({ status: 503, code: 'UNAVAILABLE', headers: { 'retry-after': '5' } });
    expect(thrown.cause).toBe(refused);
    expect(thrown.message).not.toContain('blog');
    const wrapped = new Error('Failed query: select 1', { cause: thrown });
    expect(unavailableProblem(wrapped)).toMatchObject({ status: 503, code: 'UNAVAILABLE', cause: wrapped });
  });
});

/** Port 1 on the loopback: nothing listens, every connection is refused at once. */
const refusedUrl = 'postgres://postgres@127.0.0.1:1/none';

/** What the callback form of `connect` hands over. */
const connectByCallback = (pool: pg.Pool) =>
  new Promise<{ error: Error | undefined; client: pg.PoolClient | undefined }>((resolve) =>
    pool.connect((error, client, done) => {
      done();
      resolve({ error, client });
    }),
  );

describe('unavailableWhenConnectFails', () => {
  const pools: pg.Pool[] = [];
  const poolOf = (connectionString: string) => {
    const pool = new pg.Pool({ connectionString, connectionTimeoutMillis: 5000 });
    pool.on('error', () => undefined);
    pools.push(pool);
    return pool;
  };
  afterAll(() => Promise.all(pools.map((pool) => pool.end())));

  it('makes a refused connection an outage in both forms of connect, and so in pool.query', async () => {
    const pool = unavailableWhenConnectFails(poolOf(refusedUrl));
    const byPromise = await pool.connect().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(byPromise).toBeInstanceOf(UnavailableError);
    expect((byPromise as UnavailableError).cause).toMatchObject({ code: 'ECONNREFUSED' });
    const { error, client } = await connectByCallback(pool);
    expect(error).toBeInstanceOf(UnavailableError);
    expect(client).toBeUndefined();
    // pool.query connects through the callback form: Drizzle's and the token store's queries.
    await expect(pool.query('SELECT 1')).rejects.toBeInstanceOf(UnavailableError);
  });

  it('wraps a pool once, however often it is given', async () => {
    const pool = poolOf(refusedUrl);
    expect(unavailableWhenConnectFails(pool)).toBe(pool);
    const guarded = pool.connect;
    expect(unavailableWhenConnectFails(pool)).toBe(pool);
    // A second wrapper would cost every query a second closure, for nothing.
    expect(pool.connect).toBe(guarded);
    await expect(pool.connect()).rejects.toBeInstanceOf(UnavailableError);
  });

  describe.skipIf(postgresUrl === null)('on PostgreSQL', () => {
    const elsewhere = (database: string) => {
      const url = new URL(postgresUrl as string);
      url.pathname = `/${database}`;
      return url.href;
    };

    it('makes any refusal an outage, codes no list holds included, and leaves query errors alone', async () => {
      // A database that does not exist: SQLSTATE 3D000, which alone would be a 500.
      const missing = unavailableWhenConnectFails(poolOf(elsewhere(`proceed_missing_${process.pid}`)));
      const refusal = await missing.query('SELECT 1').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refusal).toBeInstanceOf(UnavailableError);
      expect((refusal as UnavailableError).cause).toMatchObject({ code: '3D000' });
      expect(unavailableProblem((refusal as UnavailableError).cause)).toBeUndefined();

      const pool = unavailableWhenConnectFails(poolOf(postgresUrl as string));
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      const syntax = await pool.query('SELEC 1').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(syntax).toMatchObject({ code: '42601' });
      expect(syntax).not.toBeInstanceOf(UnavailableError);
      const client = await pool.connect();
      client.release();
    });

    it('keeps the process up when a connection handed out is ended by the server, and answers its queries 503', async () => {
      const admin = unavailableWhenConnectFails(poolOf(postgresUrl as string));
      const pool = unavailableWhenConnectFails(poolOf(postgresUrl as string));
      // As a transaction holds one: handed out, between two statements, when the server ends it.
      const client = await pool.connect();
      await client.query('BEGIN');
      const {
        rows: [backend],
      } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      // Its 'end' comes just after its 'error', which nothing of the test listens for: unheard, Node
      // throws it, and the process ends.
      const ended = new Promise((resolve) => client.once('end', resolve));
      await admin.query('SELECT pg_terminate_backend($1)', [backend?.pid]);
      await ended;
      const next = await client.query('SELECT 1').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(unavailableProblem(next)?.status).toBe(503);
      client.release();
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    });

    it('lets statement_timeout end a write waiting on a lock: a 503, and nothing written once the lock is gone', async () => {
      const table = `proceed_locked_${process.pid}`;
      const admin = unavailableWhenConnectFails(poolOf(postgresUrl as string));
      await admin.query(`CREATE TABLE ${table} (id int PRIMARY KEY, note text)`);
      await admin.query(`INSERT INTO ${table} VALUES (1, 'before')`);
      const holder = await admin.connect();
      try {
        const pool = unavailableWhenConnectFails(
          new pg.Pool({
            connectionString: postgresUrl as string,
            statement_timeout: 300,
            query_timeout: 2300,
          }),
        );
        pool.on('error', () => undefined);
        await holder.query('BEGIN');
        await holder.query(`SELECT * FROM ${table} WHERE id = 1 FOR UPDATE`);
        const waited = await pool.query(`UPDATE ${table} SET note = 'after' WHERE id = 1`).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(waited).toMatchObject({ code: '57014' });
        expect(unavailableProblem(waited)?.status).toBe(503);
        await holder.query('COMMIT');
        // Given up by the client alone (query_timeout), the UPDATE ran here, once the lock was gone.
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect((await admin.query(`SELECT note FROM ${table}`)).rows).toEqual([{ note: 'before' }]);
        await pool.end();
      } finally {
        holder.release();
        await admin.query(`DROP TABLE ${table}`);
      }
    });

    it('ends a connection whose query outlived query_timeout, so no later query runs in the transaction it left open', async () => {
      const table = `proceed_timeout_${process.pid}`;
      const admin = unavailableWhenConnectFails(poolOf(postgresUrl as string));
      await admin.query(`CREATE TABLE ${table} (note text)`);
      try {
        const pool = unavailableWhenConnectFails(
          new pg.Pool({ connectionString: postgresUrl as string, max: 1, query_timeout: 300 }),
        );
        pool.on('error', () => undefined);
        // As an ORM's transaction does: BEGIN, a statement that takes too long, a ROLLBACK that
        // times out behind it, and the connection given back without an error.
        const client = await pool.connect();
        await client.query('BEGIN');
        await expect(client.query('SELECT pg_sleep(1)')).rejects.toThrow('Query read timeout');
        await client.query('ROLLBACK').catch(() => undefined);
        client.release();
        await pool.query(`INSERT INTO ${table} VALUES ('after the timeout')`);
        // Another connection sees it: it was committed, not left inside the open transaction.
        const { rows } = await admin.query(`SELECT note FROM ${table}`);
        expect(rows).toEqual([{ note: 'after the timeout' }]);
        await pool.end();
      } finally {
        await admin.query(`DROP TABLE ${table}`);
      }
    });
  });
});
