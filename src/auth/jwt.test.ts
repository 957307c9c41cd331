import { describe, expect, it } from 'vitest';
import { ProceedConfigError, ProceedError, toProblem } from '../core/errors.js';
import {
  createJwtCodec,
  InvalidTokenError,
  JwtCodec,
  resolveSecret,
  TokenAlgorithmError,
  type TokenClaims,
  TokenExpiredError,
  TokenMalformedError,
  TokenNotActiveError,
  TokenSignatureError,
  TokenTypeError,
} from './jwt.js';

const secret = 'jwt-codec-test-secret-with-more-than-32-bytes';
const now = () => Math.floor(Date.now() / 1000);

function claims(overrides: Partial<TokenClaims> = {}): TokenClaims {
  return { sub: 'u1', jti: 'j1', type: 'access', fam: 'f1', iat: now(), exp: now() + 60, ...overrides };
}

describe('JwtCodec', () => {
  const jwt = createJwtCodec({ secret });

  it('round-trips the claims exactly', () => {
    const signed = claims();
    expect(jwt.verify(jwt.sign(signed))).toEqual(signed);
    expect(jwt.verify(jwt.sign(signed), 'access')).toEqual(signed);
  });

  it('reuses one codec per secret and tolerance', () => {
    expect(createJwtCodec({ secret })).toBe(jwt);
    expect(createJwtCodec({ secret: Buffer.from(secret) })).toBe(jwt);
    expect(createJwtCodec({ secret, clockTolerance: 0 })).not.toBe(jwt);
    expect(createJwtCodec({ secret: `${secret}!` })).not.toBe(jwt);
  });

  it('throws named errors that are 401 INVALID_TOKEN problems', () => {
    const cases: Array<[string, new (...args: never[]) => Error, string]> = [
      ['garbage', TokenMalformedError, 'jwt malformed'],
      [`${jwt.sign(claims())}x`, TokenSignatureError, 'invalid signature'],
      [jwt.sign(claims({ iat: now() - 100, exp: now() - 10 })), TokenExpiredError, 'jwt expired'],
      [jwt.sign(claims({ nbf: now() + 100 })), TokenNotActiveError, 'jwt not active'],
      [jwt.sign(claims({ type: 'refresh' })), TokenTypeError, 'expected an access token'],
    ];
    for (const [token, type, detail] of cases) {
      let caught: unknown;
      try {
        jwt.verify(token, 'access');
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(type);
      expect(caught).toBeInstanceOf(InvalidTokenError);
      expect(caught).toBeInstanceOf(ProceedError);
      const problem = toProblem(caught);
      expect(problem.status).toBe(401);
      expect(problem.body).toMatchObject({ code: 'INVALID_TOKEN', detail });
      expect(problem.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('treats an algorithm error as a kind of signature error', () => {
    expect(new TokenAlgorithmError()).toBeInstanceOf(TokenSignatureError);
    expect(new TokenAlgorithmError().message).toBe('invalid algorithm');
  });

  it('accepts a token just past exp within the clock tolerance, and not beyond it', () => {
    const strict = createJwtCodec({ secret, clockTolerance: 0 });
    const token = jwt.sign(claims({ iat: now() - 100, exp: now() - 2 }));
    expect(jwt.verify(token).sub).toBe('u1');
    expect(() => strict.verify(token)).toThrow('jwt expired');
  });

  it('refuses an empty secret', () => {
    expect(() => new JwtCodec({ secret: '' })).toThrow(ProceedConfigError);
  });

  it('refuses a token with a claim of the wrong type', () => {
    expect(() => jwt.verify(jwt.sign({ ...claims(), sub: 42 } as never))).toThrow('jwt malformed');
    expect(() => jwt.verify(jwt.sign({ ...claims(), type: 'id' } as never))).toThrow('jwt malformed');
    expect(() => jwt.verify(jwt.sign({ ...claims(), fam: '' }))).toThrow('jwt malformed');
    const { fam: _, ...contractClaims } = claims();
    expect(jwt.verify(jwt.sign(contractClaims as never)).fam).toBe('j1');
  });
});

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

  it('counts bytes, not characters', () => {
    // 16 characters, 32 bytes in UTF-8.
    expect(resolveSecret({ secret: 'é'.repeat(16), production: true })).toBe('é'.repeat(16));
  });
});
