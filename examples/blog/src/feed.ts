/**
 * The live feed (docs/blog.md, "The live feed"): the events the database records each time a post
 * becomes published (migrations/0003_post_events.sql), fanned out to the streams open on this
 * instance. Each instance listens for the database's notification and reads the new events once,
 * whoever wrote them, so a post published through one instance reaches the subscribers of all.
 */
import type { EventLogBounds } from 'proceedjs';
import type { Database } from './db/index.js';

/** One event: its id (ordering, `Last-Event-ID`) and the post's public fields. */
export interface FeedEvent {
  readonly id: string;
  /** Who wrote the post: what the live socket's subscriptions name. Never sent itself. */
  readonly authorId: string;
  readonly post: { readonly id: string; readonly title: string; readonly excerpt: string };
}

/** How many events one read returns at most (the feed keeps at least 100, or 5 minutes). */
export const replayLimit = 1000;

const eventsAfter = `SELECT e.id::text AS event_id, p.id, p.author_id, p.title, p.excerpt
  FROM post_events e JOIN posts p ON p.id = e.post_id
  WHERE e.id > $1 AND p.status = 'published'
  ORDER BY e.id LIMIT ${replayLimit}`;

/**
 * The first id of this database's epoch (the sequence's start, migrations/0005) and the newest
 * one it gave out, committed or not: a client cannot hold a larger one.
 */
const bounds = `SELECT s.seqstart::text AS first,
    coalesce(pg_sequence_last_value(s.seqrelid), s.seqstart - 1)::text AS newest
  FROM pg_sequence s WHERE s.seqrelid = 'post_events_id_seq'::regclass`;

interface EventRow {
  event_id: string;
  id: string;
  author_id: string;
  title: string;
  excerpt: string;
}

const toEvent = (row: EventRow): FeedEvent => ({
  id: row.event_id,
  authorId: row.author_id,
  post: { id: row.id, title: row.title, excerpt: row.excerpt },
});

export class PostFeed {
  readonly #database: Database;
  readonly #log: { error(object: object, message: string): void };
  readonly #subscribers = new Set<(events: readonly FeedEvent[]) => void>();
  /** The newest event fanned out. */
  #last = '0';
  #stop: (() => Promise<void>) | undefined;
  #pulling: Promise<void> | undefined;
  #pullAgain = false;
  #prunedAt = 0;

  private constructor(database: Database, log: { error(object: object, message: string): void }) {
    this.#database = database;
    this.#log = log;
  }

  /** Starts listening: events recorded from now on reach the subscribers. */
  static async start(
    database: Database,
    log: { error(object: object, message: string): void },
  ): Promise<PostFeed> {
    const feed = new PostFeed(database, log);
    const { rows } = await database.query<{ last: string | null }>(
      'SELECT max(id)::text AS last FROM post_events',
    );
    feed.#last = rows[0]?.last ?? '0';
    feed.#stop = await database.listen('post_events', () => feed.#pull());
    return feed;
  }

  /** Calls `listener` with every batch of new events until the returned function is called. */
  subscribe(listener: (events: readonly FeedEvent[]) => void): () => void {
    this.#subscribers.add(listener);
    return () => this.#subscribers.delete(listener);
  }

  /** The retained events after `id`, oldest first, {@link replayLimit} at most: what a reconnecting client missed. */
  async since(id: string): Promise<FeedEvent[]> {
    const { rows } = await this.#database.query<EventRow>(eventsAfter, [id]);
    return rows.map(toEvent);
  }

  /** The ids this database's feed can place: what `resumeAfter` checks a `Last-Event-ID` against. */
  async bounds(): Promise<EventLogBounds> {
    const { rows } = await this.#database.query<{ first: string; newest: string }>(bounds);
    const [row] = rows;
    if (row === undefined) throw new Error('post_events_id_seq is missing: the database is not migrated');
    return row;
  }

  async close(): Promise<void> {
    await this.#stop?.();
    this.#subscribers.clear();
  }

  /** Reads the new events once for every subscriber; notifications during a read join the next. */
  #pull(): void {
    if (this.#pulling !== undefined) {
      this.#pullAgain = true;
      return;
    }
    this.#pulling = this.#read()
      .catch((error: unknown) => this.#log.error({ err: error }, 'The live feed could not read new events'))
      .finally(() => {
        this.#pulling = undefined;
        if (this.#pullAgain) {
          this.#pullAgain = false;
          this.#pull();
        }
      });
  }

  async #read(): Promise<void> {
    const events = await this.since(this.#last);
    const newest = events.at(-1);
    if (newest === undefined) return;
    this.#last = newest.id;
    for (const listener of this.#subscribers) listener(events);
    if (events.length === replayLimit) this.#pullAgain = true;
    await this.#prune();
  }

  /** Drops what is both older than 5 minutes and beyond the newest 100, at most once a minute. */
  async #prune(): Promise<void> {
    if (Date.now() - this.#prunedAt < 60_000) return;
    this.#prunedAt = Date.now();
    await this.#database.query(
      `DELETE FROM post_events WHERE at < now() - interval '5 minutes'
         AND id <= (SELECT max(id) - 100 FROM post_events)`,
    );
  }
}
