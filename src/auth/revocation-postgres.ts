/**
 * A revocation store in PostgreSQL (a server through `pg`, or embedded PGlite): one table, one
 * indexed query per verified token, and `INSERT … ON CONFLICT DO NOTHING` to mark a refresh token
 * used, so that two instances racing with one token cannot both win.
 */
import { createHash } from 'node:crypto';
import { durationOption } from '../core/options.js';
import { ExpiringTable, type SqlClient } from '../stores/sql.js';
import { type AccessClaims, TokenRevokedError } from './jwt.js';
import type { UserLoader } from './plugin.js';
import { loadersCheckingRevocation, type RevocationCheck, type RevocationStore } from './revocation.js';
import { revocationCheckOf } from './tokens.js';

export type { SqlClient } from '../stores/sql.js';

export interface PostgresRevocationStoreOptions {
  /** Table name, optionally schema-qualified. Default `proceed_revocations`. */
  table?: string;
  /** Delete expired rows at most this often, in ms, piggybacked on a write. Default 10 minutes. */
  pruneInterval?: number;
}

/** The expiry of entries never pruned (generations): the largest bigint. */
const keptForGood = '9223372036854775807';

/** A short statement name, distinct per text (`a.b_c` and `a_b.c` must not share one). */
const statementName = (prefix: string, text: string) =>
  `${prefix}_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;

/**
 * Whether a token is revoked, as a boolean expression; its parameters, from `$first` on: jti,
 * family, user id, generation, now, the 0.1 issue time. A generation unequal to the user's is
 * refused either way: one above it (or above a row that is missing) means the table lost the
 * count, and failing open would let a later revocation miss the token (docs/auth.md).
 */
function revokedExpression(table: string, first: number): string {
  const [jti, family, user, generation, now, legacyIssuedAt] = [0, 1, 2, 3, 4, 5].map((n) => `$${first + n}`);
  return `(EXISTS (SELECT 1 FROM ${table} WHERE expires_at > ${now}
          AND ((kind = 'token' AND key = ${jti})
            OR (kind = 'family' AND key = ${family})
            OR (kind = 'generation' AND key = ${user} AND value <> ${generation})
            OR (kind = 'user' AND key = ${user} AND value >= ${legacyIssuedAt})))
        OR (${generation}::bigint > 0
          AND NOT EXISTS (SELECT 1 FROM ${table} WHERE kind = 'generation' AND key = ${user})))`;
}

const revokedParams = (check: RevocationCheck) => [
  check.jti,
  check.family,
  check.userId,
  check.generation,
  Date.now(),
  check.legacyIssuedAt ?? null,
];

/** The user's own columns of a row of {@link PostgresRevocationStore.userLoader}'s statement. */
type UserRow = Record<string, unknown>;

/**
 * Revocations in a PostgreSQL table it creates on first use (or at {@link ensureSchema}).
 *
 * @example
 * const store = new PostgresRevocationStore(pool);
 * await store.ensureSchema(); // optional: the first call does it anyway
 * const tokens = new TokenService({ secret, store });
 */
export class PostgresRevocationStore implements RevocationStore {
  readonly #client: SqlClient;
  readonly #schema: ExpiringTable;
  readonly #checkSql: string;
  readonly #checkStatement: string;
  readonly #table: string;
  readonly #pruneInterval: number;
  #lastPrune = 0;

  constructor(client: SqlClient, options: PostgresRevocationStoreOptions = {}) {
    this.#client = client;
    this.#schema = new ExpiringTable(
      client,
      options.table ?? 'proceed_revocations',
      `kind text NOT NULL,
        key text NOT NULL,
        value bigint NOT NULL DEFAULT 0,
        expires_at bigint NOT NULL,
        PRIMARY KEY (kind, key)`,
    );
    this.#table = this.#schema.name;
    this.#checkSql = `SELECT ${revokedExpression(this.#table, 1)} AS revoked`;
    this.#checkStatement = statementName('proceed_is_revoked', this.#checkSql);
    this.#pruneInterval = durationOption(
      'PostgresRevocationStore',
      'pruneInterval',
      options.pruneInterval,
      10 * 60_000,
    );
  }

  /** Creates the table and its index when missing. Safe to call often and from many instances. */
  ensureSchema(): Promise<void> {
    return this.#schema.ensure();
  }

  async revokeToken(jti: string, expiresAt: number): Promise<void> {
    await this.#upsert('token', jti, 0, expiresAt);
  }

  async revokeFamily(family: string, expiresAt: number): Promise<void> {
    await this.#upsert('family', family, 0, expiresAt);
  }

  async revokeUser(userId: string): Promise<void> {
    await this.ensureSchema();
    // One statement: two revocations at once each move the generation on.
    await this.#client.query(
      `INSERT INTO ${this.#table} AS t (kind, key, value, expires_at) VALUES ('generation', $1, 1, $2)
        ON CONFLICT (kind, key) DO UPDATE SET value = t.value + 1`,
      [userId, keptForGood],
    );
  }

  async userGeneration(userId: string): Promise<number> {
    await this.ensureSchema();
    const { rows } = await this.#client.query(
      `SELECT value FROM ${this.#table} WHERE kind = 'generation' AND key = $1`,
      [userId],
    );
    return Number((rows[0] as { value?: unknown } | undefined)?.value ?? 0);
  }

  async isRevoked(check: RevocationCheck): Promise<boolean> {
    await this.ensureSchema();
    const { rows } = await this.#run(this.#checkStatement, this.#checkSql, revokedParams(check));
    return (rows[0] as { revoked?: unknown } | undefined)?.revoked === true;
  }

  /**
   * A user loader for `authPlugin` that loads the user and checks the token's revocation in one
   * statement: one round trip per signed-in request where the plugin's own check and a loader
   * make two (docs/auth.md, "One round trip"). The plugin sees that this loader checks
   * revocation and leaves its own check out; it refuses one made by another store than its
   * TokenService's. Called by anything else, the loader still checks: a revoked token throws
   * `TokenRevokedError`, never returns a user.
   *
   * `userSql` is one `SELECT` of the user whose id is `$1` (no other parameter, no `;`): at most
   * one row, its columns named as the app's user fields (`is_active AS "isActive"`; the names
   * `proceed_revoked` and `proceed_found` are the store's). The row, as `pg` or PGlite returns
   * it, is the user; `toUser` converts it where it is not.
   *
   * @example
   * const store = new PostgresRevocationStore(pool);
   * const tokens = new TokenService({ secret, store });
   * await app.register(authPlugin, {
   *   tokens,
   *   userLoader: store.userLoader<User>('SELECT id, name, role, is_active AS "isActive" FROM users WHERE id = $1'),
   * });
   */
  userLoader<User>(
    userSql: string,
    toUser: (row: UserRow) => User = (row) => row as unknown as User,
  ): UserLoader<User> {
    // $2 and up would silently read the token's values, which the statement binds after $1.
    if (/;\s*$/.test(userSql) || !/^\s*(select|with)\b/i.test(userSql) || /\$(?:[02-9]|1\d)/.test(userSql)) {
      throw new TypeError(
        'PostgresRevocationStore.userLoader: userSql is one SELECT of the user whose id is $1, with no other parameter and no ";"',
      );
    }
    // The user's query keeps $1 to itself: its id column may be a uuid, the table's keys are
    // text. The store's own columns come last, so that a user column of the same name can never
    // stand in for them (of two equal names, the driver keeps the last).
    const sql = `SELECT u.*, r.proceed_revoked
      FROM (SELECT ${revokedExpression(this.#table, 2)} AS proceed_revoked) AS r
      LEFT JOIN LATERAL (SELECT s.*, true AS proceed_found FROM (
${userSql}
) AS s LIMIT 1) AS u ON true`;
    const name = statementName('proceed_user', sql);
    const userOf = ({ rows }: { rows: unknown[] }): User | undefined => {
      const { proceed_revoked: revoked, proceed_found: found, ...user } = (rows[0] ?? {}) as UserRow;
      if (revoked !== false) throw new TokenRevokedError();
      return found === true ? toUser(user) : undefined;
    };
    // Runs on every signed-in request: the driver's promise continued once, without waiting on
    // the table's creation once it is known to exist (docs/performance.md, "The blog by hand").
    const load = (userId: string, claims: AccessClaims): Promise<User | undefined> => {
      if (claims?.sub !== userId) {
        return Promise.reject(
          new TypeError(
            'PostgresRevocationStore.userLoader: call it with the user id and the claims of its token',
          ),
        );
      }
      const read = () =>
        this.#run(name, sql, [userId, ...revokedParams(revocationCheckOf(claims))]).then(userOf);
      return this.#schema.created ? read() : this.ensureSchema().then(read);
    };
    loadersCheckingRevocation.set(load, this);
    return load;
  }

  /** Runs on every signed-in request: a prepared statement where the client offers one. */
  #run(name: string, sql: string, params: unknown[]): Promise<{ rows: unknown[] }> {
    return this.#client.prepared === undefined
      ? this.#client.query(sql, params)
      : this.#client.prepared(name, sql, params);
  }

  async markUsed(jti: string, expiresAt: number): Promise<boolean> {
    await this.ensureSchema();
    await this.#maybePrune();
    const { rows } = await this.#client.query(
      `INSERT INTO ${this.#table} (kind, key, value, expires_at) VALUES ('used', $1, 0, $2)
        ON CONFLICT (kind, key) DO NOTHING
        RETURNING 1 AS inserted`,
      [jti, Math.ceil(expiresAt)],
    );
    return rows.length === 1;
  }

  async prune(): Promise<void> {
    await this.ensureSchema();
    this.#lastPrune = Date.now();
    await this.#client.query(`DELETE FROM ${this.#table} WHERE expires_at <= $1`, [Date.now()]);
  }

  async #upsert(kind: string, key: string, value: number, expiresAt: number): Promise<void> {
    await this.ensureSchema();
    await this.#maybePrune();
    await this.#client.query(
      `INSERT INTO ${this.#table} AS t (kind, key, value, expires_at) VALUES ($1, $2, $3, $4)
        ON CONFLICT (kind, key) DO UPDATE SET
          value = GREATEST(t.value, EXCLUDED.value),
          expires_at = GREATEST(t.expires_at, EXCLUDED.expires_at)`,
      [kind, key, Math.floor(value), Math.ceil(expiresAt)],
    );
  }

  async #maybePrune(): Promise<void> {
    if (Date.now() - this.#lastPrune < this.#pruneInterval) return;
    await this.prune();
  }
}
