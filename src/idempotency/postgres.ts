/**
 * Idempotency keys in PostgreSQL (a server through `pg`, or embedded PGlite), shared by every
 * instance on the database: one table it creates itself, a claim in one `INSERT … ON CONFLICT`
 * statement, so two instances racing with one key cannot both run the request.
 */
import {
  type ClaimResult,
  type IdempotencyStore,
  type StoredAnswer,
  stillRunning,
} from '../core/idempotency.js';
import { durationOption } from '../core/options.js';
import { ExpiringTable, type SqlClient } from '../stores/sql.js';

export interface PostgresIdempotencyStoreOptions {
  /** Table name, optionally schema-qualified. Default `proceed_idempotency_keys`. */
  table?: string;
  /** Delete expired rows at most this often, in ms, piggybacked on a claim. Default 10 minutes. */
  pruneInterval?: number;
}

interface HeldRow {
  fingerprint: string;
  answer: string | null;
}

/**
 * Idempotency keys in a PostgreSQL table it creates on first use (or at {@link ensureSchema}).
 *
 * @example
 * const store = new PostgresIdempotencyStore(pool);
 * await app.register(idempotencyPlugin, { store, creates: true });
 */
export class PostgresIdempotencyStore implements IdempotencyStore {
  readonly #client: SqlClient;
  readonly #schema: ExpiringTable;
  readonly #table: string;
  readonly #pruneInterval: number;
  #lastPrune = 0;

  constructor(client: SqlClient, options: PostgresIdempotencyStoreOptions = {}) {
    this.#client = client;
    this.#schema = new ExpiringTable(
      client,
      options.table ?? 'proceed_idempotency_keys',
      `key text PRIMARY KEY,
        fingerprint text NOT NULL,
        claim text,
        answer text,
        locked_until bigint NOT NULL,
        expires_at bigint NOT NULL`,
    );
    this.#table = this.#schema.name;
    this.#pruneInterval = durationOption(
      'PostgresIdempotencyStore',
      'pruneInterval',
      options.pruneInterval,
      10 * 60_000,
    );
  }

  /** Creates the table and its index when missing. Safe to call often and from many instances. */
  ensureSchema(): Promise<void> {
    return this.#schema.ensure();
  }

  async claim(
    key: string,
    entry: { fingerprint: string; claim: string; lockedUntil: number; expiresAt: number },
  ): Promise<ClaimResult> {
    await this.ensureSchema();
    const now = Date.now();
    if (now - this.#lastPrune >= this.#pruneInterval) await this.prune(now);
    // Two tries: the row that refused the claim may be deleted (released) before it is read.
    for (let attempt = 0; attempt < 2; attempt++) {
      const { rows } = await this.#client.query(
        `INSERT INTO ${this.#table} AS held (key, fingerprint, claim, answer, locked_until, expires_at)
         VALUES ($1, $2, $3, NULL, $4, $5)
         ON CONFLICT (key) DO UPDATE SET
           fingerprint = EXCLUDED.fingerprint, claim = EXCLUDED.claim, answer = NULL,
           locked_until = EXCLUDED.locked_until, expires_at = EXCLUDED.expires_at
         WHERE held.expires_at <= $6 OR (held.answer IS NULL AND held.locked_until <= $6)
         RETURNING claim`,
        [key, entry.fingerprint, entry.claim, entry.lockedUntil, entry.expiresAt, now],
      );
      if (rows.length > 0) return { claimed: true };
      const held = await this.#client.query(`SELECT fingerprint, answer FROM ${this.#table} WHERE key = $1`, [
        key,
      ]);
      const row = held.rows[0] as HeldRow | undefined;
      if (row === undefined) continue;
      return {
        claimed: false,
        fingerprint: row.fingerprint,
        answer: row.answer === null ? undefined : (JSON.parse(row.answer) as StoredAnswer),
      };
    }
    // Claimed and freed twice while being read: as busy as a request still running.
    throw stillRunning();
  }

  async complete(key: string, claim: string, answer: StoredAnswer): Promise<void> {
    await this.#client.query(
      `UPDATE ${this.#table} SET answer = $3, claim = NULL WHERE key = $1 AND claim = $2`,
      [key, claim, JSON.stringify(answer)],
    );
  }

  async release(key: string, claim: string): Promise<void> {
    await this.#client.query(`DELETE FROM ${this.#table} WHERE key = $1 AND claim = $2`, [key, claim]);
  }

  async prune(now = Date.now()): Promise<void> {
    this.#lastPrune = now;
    await this.ensureSchema();
    await this.#client.query(`DELETE FROM ${this.#table} WHERE expires_at <= $1`, [now]);
  }
}
