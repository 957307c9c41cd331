import { describe, expect, it } from 'vitest';
import { credentialsOf, holdCredentials } from './credentials.js';

describe('holdCredentials', () => {
  it('keeps them for the context, and refuses an expiry that is no time and a check that is no function', () => {
    const ctx = {};
    expect(credentialsOf(ctx)).toBeUndefined();
    holdCredentials(ctx, { holder: 'u1', expiresAt: 1_000 });
    expect(credentialsOf(ctx)).toEqual({ holder: 'u1', expiresAt: 1_000 });
    expect(() => holdCredentials({}, { expiresAt: Number.NaN })).toThrow(/expiresAt is a time/);
    expect(() => holdCredentials({}, { stillHold: true as never })).toThrow(/stillHold is a function/);
  });
});
