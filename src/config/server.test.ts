import { describe, expect, it } from 'vitest';
import { defaultTimeouts, serverSettingsFromEnv } from './server.js';

describe('serverSettingsFromEnv', () => {
  it('defaults: seconds-long timeouts; a drain delay only in production', () => {
    expect(serverSettingsFromEnv({})).toEqual({ timeouts: defaultTimeouts, drainDelay: 0 });
    expect(serverSettingsFromEnv({ NODE_ENV: 'production' }).drainDelay).toBe(5000);
  });

  it('reads the environment, and the app’s options win over it', () => {
    const env = {
      NODE_ENV: 'production',
      SHUTDOWN_DRAIN_MS: '0',
      HEADERS_TIMEOUT_MS: '2000',
      REQUEST_TIMEOUT_MS: '4000',
      KEEP_ALIVE_TIMEOUT_MS: '65000',
    };
    expect(serverSettingsFromEnv(env)).toEqual({
      timeouts: { headers: 2000, request: 4000, keepAlive: 65_000 },
      drainDelay: 0,
    });
    expect(serverSettingsFromEnv(env, { drainDelay: 250, timeouts: { request: 9000 } })).toEqual({
      timeouts: { headers: 2000, request: 9000, keepAlive: 65_000 },
      drainDelay: 250,
    });
  });

  it('names the variable of a bad value', () => {
    expect(() => serverSettingsFromEnv({ SHUTDOWN_DRAIN_MS: '5s' })).toThrow(
      'SHUTDOWN_DRAIN_MS must be an integer number of milliseconds from 0 to 2147483647 (got "5s")',
    );
    // A Node timer longer than 2^31-1 ms fires at once: the drain would silently not happen.
    expect(() => serverSettingsFromEnv({ SHUTDOWN_DRAIN_MS: '3000000000' })).toThrow(/from 0 to 2147483647/);
    expect(() => serverSettingsFromEnv({}, { timeouts: { request: 2 ** 31 } })).toThrow(
      /timeouts.request must be an integer number of ms from 1 to 2147483647/,
    );
    expect(() => serverSettingsFromEnv({ HEADERS_TIMEOUT_MS: '0' })).toThrow(/HEADERS_TIMEOUT_MS must be/);
    expect(() => serverSettingsFromEnv({ HEADERS_TIMEOUT_MS: '40000' })).toThrow(
      'timeouts.headers (40000 ms) must not be longer than timeouts.request (30000 ms)',
    );
  });
});
