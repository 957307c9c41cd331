import { ProceedError } from '../core/errors.js';
import { clientKey } from './rate-limit.js';

/**
 * The long-lived answers open on one app, WebSockets or event streams: their count against its
 * `maxSockets`, and each client's against its `maxSocketsPerClient` or `maxStreamsPerClient`
 * (docs/sockets.md, "Limits"; docs/events.md, "Limits").
 */
export class OpenSockets {
  /** Set once from the app's `maxSockets` (docs/sockets.md, "Limits"). */
  max: number;
  /** Set once from the app's `maxSocketsPerClient` (or `maxStreamsPerClient`). */
  maxPerClient: number;
  /** What is counted, as refusals name it: `WebSockets`, `event streams`. */
  readonly #kind: string;
  #open = 0;
  /** Sockets open by client (a user, or an address), those with any. */
  readonly #held = new Map<string, number>();

  constructor(max: number, maxPerClient = max, kind = 'WebSockets') {
    this.max = max;
    this.maxPerClient = maxPerClient;
    this.#kind = kind;
  }

  /**
   * Why one more for `client` is refused, before it opens: 503 with the instance full, 429 with
   * the client's share taken; undefined when it may open.
   */
  refusal(client: string): ProceedError | undefined {
    const headers = { 'retry-after': '1' };
    if (this.full)
      return new ProceedError(
        'UNAVAILABLE',
        `This instance holds its most ${this.#kind} (${this.max}); retry`,
        {
          headers,
        },
      );
    if (this.heldBy(client) >= this.maxPerClient)
      return new ProceedError(
        'RATE_LIMITED',
        `This client holds its most ${this.#kind} (${this.maxPerClient}); close one first`,
        { headers },
      );
    return undefined;
  }

  /** How many sockets `client` holds open: one more past `maxPerClient` is refused with 429. */
  heldBy(client: string): number {
    return this.#held.get(client) ?? 0;
  }

  get open(): number {
    return this.#open;
  }

  /** Whether one more may open: refused with 503 before the upgrade otherwise. */
  get full(): boolean {
    return this.#open >= this.max;
  }

  /**
   * Takes a place for the socket of a handshake just accepted. It counts from now, not once the
   * runtime reports the socket open: Deno does so only after the 101 is sent, and handshakes sent
   * at once all passed the limits before any of them counted.
   */
  take(client: string): SocketPlace {
    return new SocketPlace((by) => {
      this.#open += by;
      const held = this.heldBy(client) + by;
      if (held > 0) this.#held.set(client, held);
      else this.#held.delete(client);
    });
  }
}

/**
 * How long a place is kept for a handshake the runtime has not completed: one it never completes
 * (the client left during it) gives its place back then rather than never.
 */
const handshakeWait = 10_000;

/** One socket's place in the counts, from its accepted handshake until it ends. */
export class SocketPlace {
  readonly #count: (by: 1 | -1) => void;
  #counted = true;
  #expiry: ReturnType<typeof setTimeout> | undefined;

  constructor(count: (by: 1 | -1) => void) {
    this.#count = count;
    count(1);
    this.#expiry = setTimeout(() => this.release(), handshakeWait);
    (this.#expiry as { unref?: () => void }).unref?.();
  }

  /**
   * The socket is open: counted until released. False when its place is gone (released, or given
   * back after the wait): uncounted, it would pass the caps, and it is to be closed.
   */
  opened(): boolean {
    clearTimeout(this.#expiry);
    return this.#counted;
  }

  /** The socket ended, its handshake failed or outlasted the wait: the place is free, once. */
  release(): void {
    clearTimeout(this.#expiry);
    if (!this.#counted) return;
    this.#counted = false;
    this.#count(-1);
  }
}

/**
 * Who holds a socket or a stream, as the per-client limits count: a signed-in user wherever it
 * connects from, anyone else its address as the rate limits read it (an IPv6 host by its /64).
 */
export function holderOf(user: string | undefined, ip: string): string {
  return user === undefined ? `address ${clientKey(ip)}` : `user ${user}`;
}
