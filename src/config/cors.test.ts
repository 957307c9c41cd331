import { describe, expect, it } from 'vitest';
import { corsFromEnv } from './cors.js';

describe('corsFromEnv', () => {
  it('reads CORS_ORIGINS: a comma-separated list, or *; unset or empty is no CORS', () => {
    expect(corsFromEnv({})).toBeUndefined();
    expect(corsFromEnv({ CORS_ORIGINS: ' ' })).toBeUndefined();
    expect(corsFromEnv({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173' })).toEqual({
      origins: ['https://app.example.com', 'http://localhost:5173'],
    });
    expect(corsFromEnv({ CORS_ORIGINS: '*' })).toEqual({ origins: '*' });
  });

  it('refuses what is not an origin, naming the variable and the value', () => {
    expect(() => corsFromEnv({ CORS_ORIGINS: 'https://app.example.com/' })).toThrow(
      'CORS_ORIGINS: "https://app.example.com/" is not an origin (scheme://host[:port], no path or trailing slash)',
    );
    expect(() => corsFromEnv({ CORS_ORIGINS: 'app.example.com' })).toThrow(/CORS_ORIGINS: "app.example.com"/);
  });
});
