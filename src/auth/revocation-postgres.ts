/**
 * A revocation store in PostgreSQL (a server through `pg`, or embedded PGlite): one table, one
 * indexed query per verified token, and `INSERT … ON CONFLICT DO NOTHING` to mark a refresh token
 * used, so that two instances racing with one token cannot both win.
 */
import { createHash } from 'node:crypto';
import { ExpiringTable, type SqlClient } from '../stores/sql.js';
import type { RevocationCheck, RevocationStore } from './revocation.js';

export type { SqlClient } from '../stores/sql.js';

export interface PostgresRevocationStoreOptions {
  /** Table name, optionally schema-qualified. Default `proceed_revocations`. */
  table?: string;
  /** Delete expired rows at most this often, in ms, piggybacked on a write. Default 10 minutes. */
  pruneInterval?: number;
}

/** The expiry of entries never pruned (generations): the largest bigint. */
const keptForGood = '9223372036854775807';

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
    // One name per table, short and distinct (`a.b_c` and `a_b.c` must not share one).
    this.#checkStatement = `proceed_is_revoked_${createHash('sha256').update(this.#table).digest('hex').slice(0, 16)}`;
    this.#pruneInterval = options.pruneInterval ?? 10 * 60_000;
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
    // Runs on every authenticated request: a prepared statement where the client offers one.
    const sql = `SELECT 1 AS revoked FROM ${this.#table}
        WHERE expires_at > $5
          AND ((kind = 'token' AND key = $1)
            OR (kind = 'family' AND key = $2)
            OR (kind = 'generation' AND key = $3 AND value > $4)
            OR (kind = 'user' AND key = $3 AND value >= $6))
        LIMIT 1`;
    const params = [
      check.jti,
      check.family,
      check.userId,
      check.generation,
      Date.now(),
      check.legacyIssuedAt ?? null,
    ];
    const { rows } =
      this.#client.prepared === undefined
        ? await this.#client.query(sql, params)
        : await this.#client.prepared(this.#checkStatement, sql, params);
    return rows.length > 0;
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
