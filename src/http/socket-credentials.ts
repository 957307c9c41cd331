/**
 * A WebSocket lives on after the handshake its credentials signed in: it ends once they lapse (a
 * token's expiry) or no longer hold (a logout, a password reset, the user deactivated), checked
 * every `credentialsCheck` ms, so that a socket is never a way to outlive a revoked token
 * (docs/sockets.md, "Authentication").
 */
import type { Credentials } from '../core/credentials.js';

export const credentialsCloseCodes = Object.freeze({
  /** The credentials could not be checked (their store did not answer): reconnect later. */
  tryAgain: 1013,
  /** The credentials that opened the socket lapsed or were revoked: open it again with fresh ones. */
  credentialsLapsed: 4401,
});

interface Watcher {
  close(code: number, reason: string): void;
  readonly log: { warn(object: object, message: string): void };
}

/** Watches `credentials` for the socket `watcher` closes; returns what stops watching. */
export function watchCredentials(credentials: Credentials, every: number, watcher: Watcher): () => void {
  const { expiresAt, stillHold } = credentials;
  let expiry: ReturnType<typeof setTimeout> | undefined;
  if (expiresAt !== undefined) {
    // Timers hold at most 2^31 - 1 ms: a later expiry is met by the checks.
    const wait = Math.min(Math.max(expiresAt - Date.now(), 0), 2 ** 31 - 1);
    expiry = setTimeout(
      () => watcher.close(credentialsCloseCodes.credentialsLapsed, 'the token expired'),
      wait,
    );
    (expiry as { unref?: () => void }).unref?.();
  }
  let checks: ReturnType<typeof setInterval> | undefined;
  if (stillHold !== undefined) {
    let checking = false;
    checks = setInterval(() => {
      if (checking) return;
      checking = true;
      stillHold().then(
        (holds) => {
          checking = false;
          if (!holds) watcher.close(credentialsCloseCodes.credentialsLapsed, 'the token no longer holds');
        },
        (error: unknown) => {
          checking = false;
          watcher.log.warn({ err: error }, "A WebSocket's credentials could not be checked");
          watcher.close(credentialsCloseCodes.tryAgain, 'the credentials could not be checked');
        },
      );
    }, every);
    (checks as { unref?: () => void }).unref?.();
  }
  return () => {
    if (expiry !== undefined) clearTimeout(expiry);
    if (checks !== undefined) clearInterval(checks);
  };
}
