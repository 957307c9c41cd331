import { describe, expect, it } from 'vitest';
import { ProceedConfigError } from '../core/errors.js';
import { checkSecret, resolveSecret } from './secret.js';

describe('resolveSecret', () => {
  const strong = 's'.repeat(32);

  function capture() {
    const warnings: string[] = [];
    return { warnings, logger: { warn: (message: string) => warnings.push(message) } };
  }

  it('returns a configured strong secret silently', () => {
    const { warnings, logger } = capture();
    expect(resolveSecret({ secret: strong, production: true, logger })).toBe(strong);
    expect(resolveSecret({ secret: strong, production: false, logger })).toBe(strong);
    expect(warnings).toEqual([]);
  });

  it('makes a random per-process secret in development, with a loud warning', () => {
    const { warnings, logger } = capture();
    const one = resolveSecret({ secret: undefined, production: false, logger });
    const two = resolveSecret({ secret: '', production: false, logger });
    expect(Buffer.byteLength(one)).toBeGreaterThanOrEqual(32);
    expect(one).not.toBe(two);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/JWT_SECRET is not set/);
  });

  it('accepts a short secret in development with a warning that does not print it', () => {
    const { warnings, logger } = capture();
    expect(resolveSecret({ secret: 'short-secret', production: false, logger })).toBe('short-secret');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/12 bytes/);
    expect(warnings[0]).not.toContain('short-secret');
  });

  it('refuses to start in production without a secret or with a short one', () => {
    expect(() => resolveSecret({ secret: undefined, production: true })).toThrow(/JWT_SECRET is not set/);
    expect(() => resolveSecret({ secret: 'x'.repeat(31), production: true })).toThrow(ProceedConfigError);
    expect(() => resolveSecret({ secret: 'my-weak-secret', production: true })).not.toThrow(/my-weak-secret/);
    expect(() => resolveSecret({ secret: 'my-weak-secret', production: true })).toThrow(/14 bytes/);
  });

  it('refuses several workers without a configured secret, in every environment', () => {
    expect(() => resolveSecret({ secret: undefined, production: false, workers: 2 })).toThrow(
      /JWT_SECRET is not set, and 2 workers would each sign tokens with a random secret/,
    );
    expect(resolveSecret({ secret: strong, production: false, workers: 2 })).toBe(strong);
    const { warnings, logger } = capture();
    expect(resolveSecret({ secret: 'short', production: false, workers: 4, logger })).toBe('short');
    expect(warnings).toHaveLength(1);
  });

  it('counts bytes, not characters', () => {
    // 16 characters, 32 bytes in UTF-8.
    expect(resolveSecret({ secret: 'é'.repeat(16), production: true })).toBe('é'.repeat(16));
  });
});

describe('checkSecret', () => {
  it('throws what resolveSecret throws, and warns about nothing', () => {
    const warnings: string[] = [];
    const logger = { warn: (message: string) => warnings.push(message) };
    expect(() => checkSecret({ secret: undefined, production: true, logger })).toThrow(
      /JWT_SECRET is not set/,
    );
    expect(() => checkSecret({ secret: undefined, production: false, workers: 3 })).toThrow(/3 workers/);
    expect(checkSecret({ secret: undefined, production: false, logger })).toBeUndefined();
    expect(checkSecret({ secret: 'short', production: false, logger })).toBeUndefined();
    expect(warnings).toEqual([]);
  });
});
