import { describe, expect, it } from 'vitest';
import { ProceedConfigError } from '../core/errors.js';
import { checkSecret, resolveSecret } from './secret.js';

describe('resolveSecret', () => {
  const strong = 'k3Jq9vX2mB7tR4wZ8nC1pL6hF5dG0sYe';

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

  it('refuses in production a secret of a few characters repeated, however long', () => {
    for (const secret of [
      'a'.repeat(32),
      ' '.repeat(64),
      'ab'.repeat(40),
      'changeme'.repeat(3).slice(0, 7).repeat(5),
    ])
      expect(() => checkSecret({ secret, production: true })).toThrow(
        /different characters?: no random secret is/,
      );
    expect(() => checkSecret({ secret: 'a'.repeat(32), production: false })).not.toThrow();
    // A passphrase long enough passes: it is not a repetition.
    expect(() =>
      checkSecret({ secret: 'correct horse battery staple, and more', production: true }),
    ).not.toThrow();
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
    const accented = 'éèêëàâäîïôöùûüçñ';
    expect(resolveSecret({ secret: accented, production: true })).toBe(accented);
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
