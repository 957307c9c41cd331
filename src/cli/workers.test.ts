import { describe, expect, it } from 'vitest';
import { restartDelay, stopDeadline } from './workers.js';

describe('restartDelay', () => {
  it('waits 0.5 s after a first failure, doubles with each one in a row, and stops at 30 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map(restartDelay)).toEqual([
      500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });
});

describe('stopDeadline', () => {
  it('gives the workers their drain delay on top of 30 s', () => {
    expect(stopDeadline({})).toBe(30_000);
    expect(stopDeadline({ NODE_ENV: 'production' })).toBe(35_000);
    expect(stopDeadline({ SHUTDOWN_DRAIN_MS: '45000' })).toBe(75_000);
    expect(stopDeadline({ SHUTDOWN_DRAIN_MS: 'soon' })).toBe(30_000);
  });
});
