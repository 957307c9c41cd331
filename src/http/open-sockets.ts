/**
 * The WebSockets open on one app: their count against its `maxSockets`, and each client's against
 * its `maxSocketsPerClient` (docs/sockets.md, "Limits").
 */
export class OpenSockets {
  /** Set once from the app's `maxSockets` (docs/sockets.md, "Limits"). */
  max: number;
  /** Set once from the app's `maxSocketsPerClient`. */
  maxPerClient: number;
  #open = 0;
  /** Sockets open by client (a user, or an address), those with any. */
  readonly #held = new Map<string, number>();

  constructor(max: number, maxPerClient = max) {
    this.max = max;
    this.maxPerClient = maxPerClient;
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

  opened(client: string): void {
    this.#open++;
    this.#held.set(client, this.heldBy(client) + 1);
  }

  closed(client: string): void {
    this.#open--;
    const held = this.heldBy(client) - 1;
    if (held > 0) this.#held.set(client, held);
    else this.#held.delete(client);
  }
}
