import { describe, expect, it } from 'vitest';
import { dummyVerify, hashPassword, needsRehash, verifyPassword, verifyPasswordOrDummy } from './password.js';

describe('password hashing', () => {
  it('encodes scrypt$N$r$p$salt$hash with the default cost and a 16-byte salt', async () => {
    const hash = await hashPassword('correct horse battery staple');
    const [name, n, r, p, salt, key] = hash.split('$');
    expect([name, n, r, p]).toEqual(['scrypt', '16384', '8', '1']);
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

  it('makes an unknown user cost about what a wrong password costs', async () => {
    const hash = await hashPassword('pw');
    const once = async (run: () => Promise<unknown>) => {
      const started = performance.now();
      await run();
      return performance.now() - started;
    };
    const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1] ?? 0;
    await once(() => verifyPasswordOrDummy(undefined, 'x')); // warm up
    // Alternated one by one and compared by median, so a burst of load on a busy machine
    // lands on both sides instead of deciding the ratio.
    const wrong: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 9; i += 1) {
      wrong.push(await once(() => verifyPasswordOrDummy(hash, 'wrong')));
      unknown.push(await once(() => verifyPasswordOrDummy(undefined, 'wrong')));
    }
    const ratio = median(unknown) / median(wrong);
    expect(ratio).toBeGreaterThan(0.6);
    expect(ratio).toBeLessThan(1.6);
  });
});
