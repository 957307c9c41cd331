/**
 * What signed a request in, kept for what outlives the request: a WebSocket opened by it lives on
 * after its handshake, an event stream after its request, and each ends once these no longer hold
 * (docs/sockets.md and docs/events.md, "Authentication").
 * Whatever sets `ctx.user` may hold them; the core knows no token.
 */
export interface Credentials {
  /** Whom they sign in (a user's id): one client wherever it connects from, for per-client limits. */
  readonly holder?: string;
  /** When they lapse (ms since the epoch): a token's expiry. */
  readonly expiresAt?: number;
  /**
   * Whether they still hold (not revoked, the user still there and active): false ends what they
   * opened; a rejection says they could not be checked (a store that did not answer).
   */
  readonly stillHold?: () => Promise<boolean>;
  /**
   * Calls `listener` when something in this process may have revoked them (a logout here), so
   * that `stillHold` is asked at once rather than at the next check; returns what stops it.
   */
  readonly revocations?: (listener: () => void) => () => void;
}

const held = new WeakMap<object, Credentials>();

/** Keeps the credentials that signed in the request of `ctx`. */
export function holdCredentials(ctx: object, credentials: Credentials): void {
  const { expiresAt, stillHold } = credentials;
  // A NaN expiry would end the socket at once; a check that is no function, at its first turn.
  if (expiresAt !== undefined && !Number.isFinite(expiresAt))
    throw new TypeError(`holdCredentials: expiresAt is a time in ms since the epoch (got ${expiresAt})`);
  if (stillHold !== undefined && typeof stillHold !== 'function')
    throw new TypeError('holdCredentials: stillHold is a function that resolves to whether they hold');
  held.set(ctx, credentials);
}

/** The credentials that signed in the request of `ctx`, if anything kept them. */
export function credentialsOf(ctx: object): Credentials | undefined {
  return held.get(ctx);
}
