import { afterEach, describe, expect, it, vi } from 'vitest';
import { watchCredentials } from './socket-credentials.js';

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** Watches credentials that lapse at `expiresAt` (as a token's verification would), checked every 100 ms. */
function watched(expiresAt: number, revoked: () => boolean) {
  const closes: { code: number; reason: string }[] = [];
  const stop = watchCredentials(
    {
      expiresAt,
      // A token verifies until the millisecond before `expiresAt` (TokenService.acceptedUntil).
      stillHold: async () => !revoked() && Date.now() < expiresAt - 1,
    },
    100,
    { close: (code, reason) => void closes.push({ code, reason }), log: { warn: () => undefined } },
  );
  return { closes, stop };
}

describe('watchCredentials', () => {
  it('names an expiry an expiry, even when a check lands on the last millisecond before its timer', async () => {
    vi.useFakeTimers({ now: 0 });
    // Every check exactly 100 ms apart: the tenth runs at 1,000 ms, the expiry's timer at 1,001.
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { closes, stop } = watched(1001, () => false);
    await vi.advanceTimersByTimeAsync(1000);
    expect(closes).toEqual([{ code: 4401, reason: 'the token expired' }]);
    stop();
  });

  it('names a revocation found before the expiry a revocation', async () => {
    vi.useFakeTimers({ now: 0 });
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    let revoked = false;
    const { closes, stop } = watched(10_001, () => revoked);
    await vi.advanceTimersByTimeAsync(250);
    expect(closes).toEqual([]);
    revoked = true;
    await vi.advanceTimersByTimeAsync(100);
    expect(closes).toEqual([{ code: 4401, reason: 'the token no longer holds' }]);
    stop();
  });

  it('checks at once when told of a revocation in this process, one check at a time, and no more once stopped', async () => {
    vi.useFakeTimers({ now: 0 });
    let revoked = false;
    let checks = 0;
    let inFlight = 0;
    let mostInFlight = 0;
    let told: (() => void) | undefined;
    let listening = false;
    const closes: { code: number; reason: string }[] = [];
    const stop = watchCredentials(
      {
        stillHold: async () => {
          checks++;
          mostInFlight = Math.max(mostInFlight, ++inFlight);
          await new Promise((resolve) => setTimeout(resolve, 10));
          inFlight--;
          return !revoked;
        },
        revocations: (listener) => {
          told = listener;
          listening = true;
          return () => {
            listening = false;
          };
        },
      },
      60_000,
      { close: (code, reason) => void closes.push({ code, reason }), log: { warn: () => undefined } },
    );
    // Two told at once while the first check runs: one more check after it, not two at once.
    told?.();
    told?.();
    await vi.advanceTimersByTimeAsync(50);
    expect(checks).toBe(2);
    expect(mostInFlight).toBe(1);
    expect(closes).toEqual([]);
    revoked = true;
    told?.();
    await vi.advanceTimersByTimeAsync(50);
    expect(closes).toEqual([{ code: 4401, reason: 'the token no longer holds' }]);
    stop();
    expect(listening).toBe(false);
    told?.();
    await vi.advanceTimersByTimeAsync(50);
    expect(checks).toBe(3);
  });

  it('keeps the retry of a check that failed at its interval when told of a revocation meanwhile', async () => {
    vi.useFakeTimers({ now: 0 });
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    let told: (() => void) | undefined;
    const closes: { code: number; reason: string }[] = [];
    watchCredentials(
      {
        stillHold: () => Promise.reject(new Error('the store did not answer')),
        revocations: (listener) => {
          told = listener;
          return () => undefined;
        },
      },
      200,
      { close: (code, reason) => void closes.push({ code, reason }), log: { warn: () => undefined } },
    );
    await vi.advanceTimersByTimeAsync(210);
    told?.();
    await vi.advanceTimersByTimeAsync(10);
    expect(closes).toEqual([]);
    await vi.advanceTimersByTimeAsync(200);
    expect(closes).toEqual([{ code: 1013, reason: 'the credentials could not be checked' }]);
  });
});
