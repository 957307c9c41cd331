/**
 * Revocations made in this process, told at once to what watches a user's credentials: an open
 * WebSocket or event stream checks its token now, not at its next `credentialsCheck`, after a
 * logout, a password reset or a deactivation made here (docs/sockets.md, "Security").
 * Not on Workers, where one request cannot act on another's socket (`runtime.sharesRequestObjects`).
 * Another process's revocation is seen at that next check, through the shared store.
 */
export class RevocationSignal {
  readonly #listeners = new Map<string, Set<() => void>>();

  /** Calls `listener` after each revocation of `userId`'s tokens made here; returns what stops it. */
  listen(userId: string, listener: () => void): () => void {
    let listeners = this.#listeners.get(userId);
    if (listeners === undefined) {
      listeners = new Set();
      this.#listeners.set(userId, listeners);
    }
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.#listeners.get(userId) === listeners) this.#listeners.delete(userId);
    };
  }

  /** Tells the listeners of `userId` that some of their tokens were revoked. */
  revoked(userId: string): void {
    const listeners = this.#listeners.get(userId);
    if (listeners !== undefined) for (const listener of [...listeners]) listener();
  }
}
