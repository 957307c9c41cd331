import { createHmac } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { ProceedConfigError, ProceedError, toProblem } from '../core/errors.js';
import {
  createJwtCodec,
  InvalidTokenError,
  JwtCodec,
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
  return {
    sub: 'u1',
    jti: 'j1',
    type: 'access',
    fam: 'f1',
    gen: 0,
    iat: now(),
    exp: now() + 60,
    ...overrides,
  };
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

  it('accepts HS256 only: a token signed with the same secret under HS384, HS512 or none is refused', () => {
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const signed = claims();
    const payload = encode(signed);
    for (const [alg, hash] of [
      ['HS384', 'sha384'],
      ['HS512', 'sha512'],
    ] as const) {
      const unsigned = `${encode({ alg, typ: 'JWT' })}.${payload}`;
      const token = `${unsigned}.${createHmac(hash, secret).update(unsigned).digest('base64url')}`;
      expect(() => jwt.verify(token), alg).toThrow(TokenAlgorithmError);
    }
    expect(() => jwt.verify(`${encode({ alg: 'none', typ: 'JWT' })}.${payload}.`)).toThrow(InvalidTokenError);
    // The same claims under HS256 and this secret pass: the refusals above are the algorithm's.
    const unsigned = `${encode({ alg: 'HS256', typ: 'JWT' })}.${payload}`;
    expect(
      jwt.verify(`${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`),
    ).toEqual(signed);
  });

  it('takes a signature in its one base64url spelling: the spare bits of its last character set are refused', () => {
    const token = jwt.sign(claims());
    const last = token.charAt(token.length - 1);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const base = alphabet.indexOf(last) & ~3;
    const spellings = [0, 1, 2, 3].map((spare) => `${token.slice(0, -1)}${alphabet.charAt(base + spare)}`);
    expect(spellings).toContain(token);
    for (const spelling of spellings) {
      if (spelling === token) expect(jwt.verify(spelling).sub).toBe('u1');
      else expect(() => jwt.verify(spelling)).toThrow(TokenSignatureError);
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

  it('keeps a verified token no longer than its exp, and never keeps a refusal', () => {
    vi.useFakeTimers({ now: Date.UTC(2026, 0, 1) });
    try {
      const codec = new JwtCodec({ secret, clockTolerance: 5 });
      // Not valid for another 6 s: refused now, accepted once that time has come.
      const early = codec.sign({ ...claims(), nbf: now() + 6 } as TokenClaims);
      expect(() => codec.verify(early)).toThrow(TokenNotActiveError);
      vi.advanceTimersByTime(2000);
      expect(codec.verify(early).sub).toBe('u1');
      // Verified (and cached) once, then refused when its exp plus the tolerance has passed.
      const short = codec.sign(claims({ exp: now() + 1 }));
      expect(codec.verify(short).sub).toBe('u1');
      vi.advanceTimersByTime(7000);
      expect(() => codec.verify(short)).toThrow(TokenExpiredError);
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses an empty secret', () => {
    expect(() => new JwtCodec({ secret: '' })).toThrow(ProceedConfigError);
  });

  it('refuses a token with a claim of the wrong type', () => {
    expect(() => jwt.verify(jwt.sign({ ...claims(), sub: 42 } as never))).toThrow('jwt malformed');
    expect(() => jwt.verify(jwt.sign({ ...claims(), type: 'id' } as never))).toThrow('jwt malformed');
    expect(() => jwt.verify(jwt.sign({ ...claims(), fam: '' }))).toThrow('jwt malformed');
    expect(() => jwt.verify(jwt.sign({ ...claims(), gen: -1 }))).toThrow('jwt malformed');
    expect(() => jwt.verify(jwt.sign({ ...claims(), gen: '1' } as never))).toThrow('jwt malformed');
    const { fam: _, gen: __, ...contractClaims } = claims();
    const verified = jwt.verify(jwt.sign(contractClaims as never));
    expect(verified.fam).toBe('j1');
    expect(verified.gen).toBeUndefined(); // counts as generation 0; see tokens.test.ts
  });
});
