/**
 * A WebSocket lives on after the handshake its credentials signed in: it ends once they lapse (a
 * token's expiry) or no longer hold (a logout, a password reset, the user deactivated), checked
 * about every `credentialsCheck` ms, so that a socket is never a way to outlive a revoked token
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

/** The longest wait a timer holds (2^31 - 1 ms, about 24.8 days). */
const longestTimer = 2 ** 31 - 1;

/** Watches `credentials` for the socket `watcher` closes; returns what stops watching. */
export function watchCredentials(credentials: Credentials, every: number, watcher: Watcher): () => void {
  const { expiresAt, stillHold } = credentials;
  let expiry: ReturnType<typeof setTimeout> | undefined;
  let check: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  if (expiresAt !== undefined) {
    // An expiry past what one timer holds is waited for in steps.
    const arm = () => {
      const wait = expiresAt - Date.now();
      expiry =
        wait > longestTimer
          ? setTimeout(arm, longestTimer)
          : setTimeout(
              () => watcher.close(credentialsCloseCodes.credentialsLapsed, 'the token expired'),
              Math.max(wait, 0),
            );
      (expiry as { unref?: () => void }).unref?.();
    };
    arm();
  }
  if (stillHold !== undefined) {
    // Each socket's checks spread over ±10 % of the interval, so that the sockets of one deploy
    // do not ask the store all at once; one failed check is tried again before the socket goes.
    let failures = 0;
    const next = () => {
      if (stopped) return;
      check = setTimeout(run, Math.round(every * (0.9 + Math.random() * 0.2)));
      (check as { unref?: () => void }).unref?.();
    };
    const run = () => {
      stillHold().then(
        (holds) => {
          failures = 0;
          if (holds) next();
          else watcher.close(credentialsCloseCodes.credentialsLapsed, 'the token no longer holds');
        },
        (error: unknown) => {
          watcher.log.warn({ err: error }, "A WebSocket's credentials could not be checked");
          if (++failures < 2) next();
          else watcher.close(credentialsCloseCodes.tryAgain, 'the credentials could not be checked');
        },
      );
    };
    next();
  }
  return () => {
    stopped = true;
    if (expiry !== undefined) clearTimeout(expiry);
    if (check !== undefined) clearTimeout(check);
  };
}
