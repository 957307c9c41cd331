import { describe, expect, it } from 'vitest';
import { defaultMaxConnections, defaultTimeouts, openFileLimit, serverSettingsFromEnv } from './server.js';

describe('serverSettingsFromEnv', () => {
  it('defaults: seconds-long timeouts; a drain delay only in production', () => {
    expect(serverSettingsFromEnv({})).toEqual({
      timeouts: defaultTimeouts,
      drainDelay: 0,
      maxConnections: defaultMaxConnections(openFileLimit()),
    });
    expect(serverSettingsFromEnv({ NODE_ENV: 'production' }).drainDelay).toBe(5000);
  });

  it('reads the environment, and the app’s options win over it', () => {
    const env = {
      NODE_ENV: 'production',
      SHUTDOWN_DRAIN_MS: '0',
      HEADERS_TIMEOUT_MS: '2000',
      REQUEST_TIMEOUT_MS: '4000',
      KEEP_ALIVE_TIMEOUT_MS: '65000',
      SEND_TIMEOUT_MS: '30000',
      MAX_CONNECTIONS: '5000',
    };
    expect(serverSettingsFromEnv(env)).toEqual({
      timeouts: { headers: 2000, request: 4000, keepAlive: 65_000, send: 30_000 },
      drainDelay: 0,
      maxConnections: 5000,
    });
    expect(
      serverSettingsFromEnv(env, {
        drainDelay: 250,
        timeouts: { request: 9000, send: 5000 },
        maxConnections: 300,
      }),
    ).toEqual({
      timeouts: { headers: 2000, request: 9000, keepAlive: 65_000, send: 5000 },
      drainDelay: 250,
      maxConnections: 300,
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
    expect(() => serverSettingsFromEnv({ MAX_CONNECTIONS: '1e3' })).toThrow(
      'MAX_CONNECTIONS must be a positive integer (got "1e3")',
    );
    expect(() => serverSettingsFromEnv({ MAX_CONNECTIONS: '0' })).toThrow(/MAX_CONNECTIONS must be/);
    expect(() => serverSettingsFromEnv({ HEADERS_TIMEOUT_MS: '40000' })).toThrow(
      'timeouts.headers (40000 ms) must not be longer than timeouts.request (30000 ms)',
    );
  });
});

describe('the default connection limit', () => {
  const limits = (soft: string) => () =>
    `Limit                     Soft Limit           Hard Limit           Units\nMax open files            ${soft}                20000                files\n`;

  it('reads the open-file limit, and leaves a tenth (64 to 1,024 descriptors) for everything else', () => {
    expect(openFileLimit(limits('20000'))).toBe(20_000);
    expect(openFileLimit(limits('unlimited'))).toBe(Number.MAX_SAFE_INTEGER);
    expect(defaultMaxConnections(20_000)).toBe(18_976);
    expect(defaultMaxConnections(1_048_576)).toBe(1_047_552);
    expect(defaultMaxConnections(256)).toBe(192);
    expect(defaultMaxConnections(4000)).toBe(3600);
  });

  it('falls back to 10,000 where the limit cannot be read (no /proc)', () => {
    const missing = () => {
      throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
    };
    expect(openFileLimit(missing)).toBeUndefined();
    expect(openFileLimit(() => 'nothing of use')).toBeUndefined();
    expect(defaultMaxConnections(undefined)).toBe(10_000);
  });
});
