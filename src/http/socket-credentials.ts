/**
 * A WebSocket lives on after the handshake its credentials signed in, an event stream after its
 * request: it ends once they lapse (a token's expiry) or no longer hold (a logout, a password
 * reset, the user deactivated), or once the route's guards refuse the user as it now is (a
 * demotion), checked about every `credentialsCheck` ms, so that neither is a way to outlive a
 * revoked token or a withdrawn right (docs/sockets.md and docs/events.md, "Authentication").
 * The codes are a socket's close codes; a stream ends with the frame that stands for each.
 */
import type { Credentials } from '../core/credentials.js';

export const credentialsCloseCodes = Object.freeze({
  /** The credentials could not be checked (their store did not answer): reconnect later. */
  tryAgain: 1013,
  /** The credentials that opened the socket lapsed or were revoked: open it again with fresh ones. */
  credentialsLapsed: 4401,
  /** The route's guards refuse the user the credentials now load: opening it again is a 403. */
  noLongerAllowed: 4403,
});

interface Watcher {
  close(code: number, reason: string): void;
  readonly log: { warn(object: object, message: string): void };
}

/** The longest wait a timer holds (2^31 - 1 ms, about 24.8 days). */
const longestTimer = 2 ** 31 - 1;

/** Watches `credentials` for the socket `watcher` closes; returns what stops watching. */
export function watchCredentials(
  credentials: Credentials,
  every: number,
  watcher: Watcher,
  stillAllowed?: () => Promise<boolean>,
): () => void {
  const stops = [
    credentials.expiresAt === undefined ? undefined : watchExpiry(credentials.expiresAt, watcher),
    credentials.stillHold === undefined
      ? undefined
      : watchHolding(credentials.stillHold, credentials, every, watcher, stillAllowed),
  ];
  return () => {
    for (const stop of stops) stop?.();
  };
}

/** Closes at the expiry; an expiry past what one timer holds is waited for in steps. */
function watchExpiry(expiresAt: number, watcher: Watcher): () => void {
  let expiry: ReturnType<typeof setTimeout> | undefined;
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
  return () => clearTimeout(expiry);
}

/**
 * Asks whether the credentials still hold, and the route's guards whether they still let the
 * user through, about every `every` ms, and at once when told of a revocation in this process.
 * Each socket's checks spread over ±10 % of the interval, so that the sockets of one deploy do
 * not ask the store all at once; one failed check is tried again before the socket goes.
 */
function watchHolding(
  stillHold: () => Promise<boolean>,
  { expiresAt, revocations }: Credentials,
  every: number,
  watcher: Watcher,
  stillAllowed: (() => Promise<boolean>) | undefined,
): () => void {
  let check: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  let failures = 0;
  // One check at a time: a revocation told while one runs asks for another once it is done.
  let running = false;
  let again = false;
  const next = () => {
    if (stopped) return;
    if (again) {
      again = false;
      run();
      return;
    }
    check = setTimeout(run, Math.round(every * (0.9 + Math.random() * 0.2)));
    (check as { unref?: () => void }).unref?.();
  };
  const ended = (state: 'lapsed' | 'refused' | 'holds') => {
    running = false;
    // A check that lands on the token's last millisecond, before the expiry's own timer has run,
    // finds it lapsed by its expiry, not by a revocation.
    if (state === 'lapsed')
      watcher.close(
        credentialsCloseCodes.credentialsLapsed,
        expiresAt !== undefined && Date.now() >= expiresAt - 1
          ? 'the token expired'
          : 'the token no longer holds',
      );
    else if (state === 'refused')
      watcher.close(credentialsCloseCodes.noLongerAllowed, 'the route no longer allows this user');
    else {
      failures = 0;
      next();
    }
  };
  const failed = (error: unknown) => {
    running = false;
    watcher.log.warn(
      { err: error },
      'The credentials of an open WebSocket or event stream could not be checked',
    );
    if (++failures < 2) next();
    else watcher.close(credentialsCloseCodes.tryAgain, 'the credentials could not be checked');
  };
  const run = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    clearTimeout(check);
    stillHold()
      .then(async (holds) => {
        if (!holds) return 'lapsed';
        return stillAllowed === undefined || (await stillAllowed()) ? 'holds' : 'refused';
      })
      .then(ended, failed);
  };
  next();
  // A logout made in this process is checked at once, not at the next interval; after a check
  // that failed (the store did not answer), its retry keeps its time.
  const stopListening = revocations?.(() => {
    if (failures === 0) run();
  });
  return () => {
    stopped = true;
    stopListening?.();
    clearTimeout(check);
  };
}
