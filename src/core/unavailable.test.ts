import { describe, expect, it } from 'vitest';
import { UnavailableError, unavailableProblem } from './unavailable.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('unavailableProblem', () => {
  it('recognises a peer that is down, a database that cannot serve, and a lost connection', () => {
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
