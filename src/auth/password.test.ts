import { describe, expect, it, vi } from 'vitest';

/** Every scrypt the module runs (cost options and key length), passed through to the real one. */
const scryptCalls = vi.hoisted(() => [] as { length: number; N: unknown; r: unknown; p: unknown }[]);
vi.mock('node:crypto', async (original) => {
  const crypto = await original<typeof import('node:crypto')>();
  return {
    ...crypto,
    scrypt: (...args: Parameters<typeof crypto.scrypt>) => {
      const [, , length, options] = args as unknown as [
        unknown,
        unknown,
        number,
        { N: unknown; r: unknown; p: unknown },
      ];
      scryptCalls.push({ length, N: options.N, r: options.r, p: options.p });
      return (crypto.scrypt as (...rest: unknown[]) => void)(...args);
    },
  };
});

import { dummyVerify, hashPassword, needsRehash, verifyPassword, verifyPasswordOrDummy } from './password.js';

describe('password hashing', () => {
  it('encodes scrypt$N$r$p$salt$hash with the default cost and a 16-byte salt', async () => {
    const hash = await hashPassword('correct horse battery staple');
    const [name, n, r, p, salt, key] = hash.split('$');
    expect([name, n, r, p]).toEqual(['scrypt', '16384', '8', '5']);
    expect(Buffer.from(salt as string, 'base64url')).toHaveLength(16);
    expect(Buffer.from(key as string, 'base64url')).toHaveLength(32);
  });

  it('salts every hash', async () => {
    expect(await hashPassword('same')).not.toBe(await hashPassword('same'));
  });

  it('verifies the right password and refuses a wrong one', async () => {
    const hash = await hashPassword('correct horse battery staple');
    expect(await verifyPassword(hash, 'correct horse battery staple')).toBe(true);
    expect(await verifyPassword(hash, 'correct horse battery stapl')).toBe(false);
    expect(await verifyPassword(hash, '')).toBe(false);
  });

  it('verifies with the cost stored in the hash', async () => {
    const cheap = await hashPassword('pw', { N: 1024, r: 8, p: 1 });
    expect(cheap.startsWith('scrypt$1024$8$1$')).toBe(true);
    expect(await verifyPassword(cheap, 'pw')).toBe(true);
    expect(needsRehash(cheap)).toBe(true);
    expect(needsRehash(await hashPassword('pw'))).toBe(false);
  });

  it('takes a hash of the earlier default (p = 1) and asks for it to be re-hashed', async () => {
    const earlier = await hashPassword('pw', { N: 16384, r: 8, p: 1 });
    expect(await verifyPassword(earlier, 'pw')).toBe(true);
    expect(needsRehash(earlier)).toBe(true);
  });

  it('asks for a re-hash only of a hash with less work or less memory than the cost wanted', () => {
    const stored = (N: number, r: number, p: number) => `scrypt$${N}$${r}$${p}$c2FsdA$a2V5`;
    expect(needsRehash(stored(16384, 8, 1))).toBe(true);
    expect(needsRehash(stored(32768, 8, 1))).toBe(true);
    expect(needsRehash(stored(16384, 4, 10))).toBe(true);
    // As strong in work and in memory, though not in p: re-hashing would lower its memory.
    expect(needsRehash(stored(131072, 8, 1))).toBe(false);
    expect(needsRehash(stored(32768, 8, 3))).toBe(false);
    expect(needsRehash(stored(16384, 8, 5))).toBe(false);
  });

  it('accepts a stronger cost than Node’s default memory cap allows', async () => {
    const hash = await hashPassword('pw', { N: 32768 });
    expect(await verifyPassword(hash, 'pw')).toBe(true);
  });

  it('normalizes Unicode, so composed and decomposed forms match', async () => {
    const hash = await hashPassword('caf\u00e9');
    expect(await verifyPassword(hash, 'cafe\u0301')).toBe(true);
  });

  it('throws on a stored value that is not one of its hashes', async () => {
    await expect(verifyPassword('$2b$10$abcdefghijklmnopqrstuv', 'pw')).rejects.toThrow(TypeError);
    await expect(verifyPassword('scrypt$3$8$1$abc$def', 'pw')).rejects.toThrow(RangeError);
  });

  it('refuses unusable cost settings', async () => {
    await expect(hashPassword('pw', { N: 1000 })).rejects.toThrow(RangeError);
    await expect(hashPassword('pw', { r: 0 })).rejects.toThrow(RangeError);
  });

  it('verifyPasswordOrDummy answers false for a missing hash after doing the same work', async () => {
    const hash = await hashPassword('pw');
    expect(await verifyPasswordOrDummy(hash, 'pw')).toBe(true);
    expect(await verifyPasswordOrDummy(undefined, 'pw')).toBe(false);
    expect(await verifyPasswordOrDummy(null, 'pw')).toBe(false);
    expect(await dummyVerify('pw')).toBe(false);
  });

  it('makes an unknown user cost what a wrong password costs: one scrypt of the same cost and length', async () => {
    const hash = await hashPassword('pw');
    const work = async (run: () => Promise<unknown>) => {
      scryptCalls.length = 0;
      await run();
      return scryptCalls.splice(0);
    };
    const wrong = await work(() => verifyPasswordOrDummy(hash, 'wrong'));
    const unknown = await work(() => verifyPasswordOrDummy(undefined, 'wrong'));
    expect(wrong).toHaveLength(1);
    expect(unknown).toEqual(wrong);
    // A stronger stored cost is matched by a dummy of that cost, not the default.
    const strong = await hashPassword('pw', { N: 32768 });
    expect(await work(() => verifyPasswordOrDummy(strong, 'wrong'))).toEqual(
      await work(() => dummyVerify('wrong', { N: 32768 })),
    );
    // An app that hashes at that cost says so, and an unknown user costs as much.
    expect(await work(() => verifyPasswordOrDummy(undefined, 'wrong', { N: 32768 }))).toEqual(
      await work(() => verifyPasswordOrDummy(strong, 'wrong')),
    );
  });

  it('makes a hash of a cheaper cost (the earlier default) cost what the dummy costs, right or wrong', async () => {
    const earlier = await hashPassword('pw', { N: 16384, r: 8, p: 1 });
    const work = async (run: () => Promise<unknown>) => {
      scryptCalls.length = 0;
      const answer = await run();
      const calls = scryptCalls.splice(0);
      return {
        answer,
        total: calls.reduce((sum, call) => sum + Number(call.N) * Number(call.r) * Number(call.p), 0),
      };
    };
    const unknown = await work(() => verifyPasswordOrDummy(undefined, 'pw'));
    expect(unknown).toEqual({ answer: false, total: 16384 * 8 * 5 });
    expect(await work(() => verifyPasswordOrDummy(earlier, 'wrong'))).toEqual({
      answer: false,
      total: unknown.total,
    });
    expect(await work(() => verifyPasswordOrDummy(earlier, 'pw'))).toEqual({
      answer: true,
      total: unknown.total,
    });
  });
});
