/**
 * Errors that mean "a service this request needs cannot be reached right now" (docs/errors.md,
 * `UNAVAILABLE`): a connection that could not be obtained ({@link UnavailableError}, thrown where
 * connections are made), the network refusing or dropping one, or the database saying it cannot
 * take one. They are answered 503 with `Retry-After`, never 500: the request was fine and may
 * succeed shortly, which clients and load balancers can act on.
 */
import { ProceedError } from './errors.js';

/** Node's network errors for a peer that is down, unreachable or gone. */
const networkCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

/**
 * SQLSTATEs of a database that cannot serve: class 08 (connection exception), 57P01–57P03
 * (shutting down, crash recovery, not accepting connections yet), 53300 (too many connections).
 */
const unavailableSqlState = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;

/**
 * SQLSTATEs of a statement the database gave up on, which may pass when sent again: 57014 (cancelled:
 * `statement_timeout`, or an administrator), 40001 (a serialization failure), 40P01 (a deadlock),
 * 55P03 (a lock not had within `lock_timeout`). The statement is rolled back and its transaction
 * aborted: the request was fine, the database busy (docs/deployment.md, "Database outages").
 */
const gaveUpSqlState = /^(57014|40001|40P01|55P03)$/;

export const gaveUpDetail =
  'The database could not finish this request in time, or alongside another; try again shortly';

/**
 * node-postgres' own words for a connection it lost or could not make in time, and for one that
 * stopped answering past the pool's `query_timeout` (the pool then drops that connection).
 */
const driverMessages = [
  'Connection terminated unexpectedly',
  'Connection terminated due to connection timeout',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Query read timeout',
];

/** Seconds a client should wait before retrying after an outage answer. */
export const outageRetryAfter = 5;

export const outageDetail = 'A service this request needs is unreachable; try again shortly';

/**
 * An outage, told by where it happened rather than by its code: throw it (with the original as
 * `cause`) wherever a connection is obtained, and the request is answered 503 `UNAVAILABLE` with
 * `Retry-After`, through any wrapping (an ORM's query error, say). Whatever refused the
 * connection (a database closed to connections, too many clients, a password rotated under a
 * running server), the request was fine and may succeed shortly (docs/deployment.md, "Database
 * outages").
 *
 * @example
 * const client = await pool.connect().catch((error) => { throw new UnavailableError(error); });
 */
export class UnavailableError extends ProceedError {
  constructor(cause?: unknown, detail = outageDetail) {
    super('UNAVAILABLE', detail, { headers: { 'retry-after': String(outageRetryAfter) }, cause });
  }
}

function isUnavailableCause(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  if (error instanceof UnavailableError) return true;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (networkCodes.has(code) || unavailableSqlState.test(code))) return true;
  // AggregateError (a host with several addresses, each refusing) carries its code on the parts.
  if (error instanceof AggregateError && error.errors.some(isUnavailableCause)) return true;
  return typeof message === 'string' && driverMessages.some((known) => message.startsWith(known));
}

/**
 * The 503 problem for an error that means an outage, looking through wrapped errors (`cause`,
 * as ORMs wrap driver errors); undefined for any other error.
 *
 * @example
 * unavailableProblem(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))?.status; // 503
 */
export function unavailableProblem(error: unknown): ProceedError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    if (isUnavailableCause(current)) return new UnavailableError(error);
    const { code } = current as { code?: unknown };
    if (typeof code === 'string' && gaveUpSqlState.test(code))
      return new UnavailableError(error, gaveUpDetail);
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A pool that hands out connections as node-postgres' does: `connect()` or `connect(callback)`. */
export interface ConnectingPool {
  connect(...args: never[]): unknown;
}

type Connect = (callback?: (error: unknown, ...rest: unknown[]) => void) => unknown;

const outageOf = (error: unknown) =>
  error instanceof UnavailableError ? error : new UnavailableError(error);

/** The pools whose `connect` already answers failures as outages. */
const guardedPools = new WeakSet<object>();

/**
 * Makes every failure of `pool` to hand out a connection an {@link UnavailableError} (503
 * `UNAVAILABLE` with `Retry-After`), whatever refused it: a server that is down, a database closed
 * to connections, too many clients, a rotated password, a connect timeout. No list of codes can
 * be complete; where the failure happened says it is an outage. Both forms of `connect` are
 * covered: the promise, and the callback through which node-postgres' `pool.query` (so Drizzle's
 * and the token store's queries) connects. Errors of a query on a connection the pool did hand
 * out (a constraint, a syntax error) stay as they are. So does a synchronous throw of `connect`
 * (a connection string it cannot parse): a configuration error, a 500. A failure the pool reports
 * is an outage whatever its source, a pool's own `verify` hook included, and a pool after `end()`
 * (a request that arrives as the app closes). A connection whose query outlived the pool's
 * `query_timeout` is ended, so that no later request runs on it (in a transaction left open
 * there). Returns the same pool (docs/deployment.md, "Database outages").
 *
 * @example
 * const pool = unavailableWhenConnectFails(new pg.Pool({ connectionString, connectionTimeoutMillis: 5000 }));
 */
export function unavailableWhenConnectFails<P extends ConnectingPool>(pool: P): P {
  if (guardedPools.has(pool)) return pool;
  const connect = pool.connect as unknown as Connect;
  const guarded: Connect = function connectOrOutage(this: unknown, callback) {
    if (typeof callback === 'function') {
      return connect.call(this, (error, ...rest) =>
        callback(error === undefined || error === null ? error : outageOf(error), ...rest),
      );
    }
    const pending = connect.call(this);
    // Any promise library's: node-postgres lets the app choose one (`Promise` in its options).
    return typeof (pending as PromiseLike<unknown> | undefined)?.then === 'function'
      ? (pending as PromiseLike<unknown>).then(undefined, (error: unknown) => {
          throw outageOf(error);
        })
      : pending;
  };
  (pool as unknown as { connect: Connect }).connect = guarded;
  (pool as ConnectionEvents).on?.('connect', watchConnection);
  guardedPools.add(pool);
  return pool;
}

/**
 * What each connection the pool opens is given: its end on a query timeout, and a listener for its
 * `error` event. node-postgres' pool listens for that event only while a connection is idle; one
 * lost while handed out (the server restarted, an administrator ended the backend, a network cut
 * in the middle of a transaction) emitted it with no listener, and Node ended the process. The
 * loss needs nothing more here: the query under way fails with it (a 503), a later one fails as
 * "not queryable" (a 503 too), and the pool drops the connection when it comes back.
 */
function watchConnection(client: unknown): void {
  endOnQueryTimeout(client);
  (client as { on?: (event: 'error', listener: () => void) => unknown }).on?.('error', reportedByItsQueries);
}

const reportedByItsQueries = () => undefined;

/** A pool that tells of each connection it opens, as node-postgres' does (its `connect` event). */
interface ConnectionEvents {
  on?(event: 'connect', listener: (client: unknown) => void): unknown;
}

type Query = (...args: unknown[]) => unknown;

const timedOut = (error: unknown) => error instanceof Error && error.message === 'Query read timeout';

/**
 * Ends a connection whose query got no answer within the pool's `query_timeout`. The query is
 * still on that connection, and node-postgres would hand it out again: a transaction's ROLLBACK
 * times out behind it, the connection goes back to the pool, and once the server answers, the
 * next request's statements run inside that old transaction, never committed. Ended, the pool
 * drops it, and the server rolls the transaction back when it sees the connection go.
 */
function endOnQueryTimeout(client: unknown): void {
  const connection = client as { query?: Query; end?: () => Promise<void> | undefined };
  const { query } = connection;
  if (typeof query !== 'function' || typeof connection.end !== 'function') return;
  const end = () => void connection.end?.()?.catch(() => undefined);
  connection.query = function queryOrEnd(this: unknown, ...args: unknown[]) {
    const last = args.at(-1);
    if (typeof last === 'function') {
      // The callback form, through which the pool's own `query` runs.
      args[args.length - 1] = (error: unknown, ...rest: unknown[]) => {
        if (timedOut(error)) end();
        return (last as (...values: unknown[]) => unknown)(error, ...rest);
      };
      return query.apply(this, args);
    }
    const result = query.apply(this, args);
    if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function')
      (result as PromiseLike<unknown>).then(undefined, (error: unknown) => {
        if (timedOut(error)) end();
      });
    return result;
  };
}
