import { describe, expect, it } from 'vitest';
import { hex24, hex64, hexPairs } from './hex.js';

describe('hex digits by table', () => {
  it('writes every byte as two lower-case digits', () => {
    expect(hexPairs).toHaveLength(256);
    for (const [byte, pair] of hexPairs.entries()) expect(pair).toBe(byte.toString(16).padStart(2, '0'));
  });

  it('writes 24-bit numbers as six digits', () => {
    for (const value of [0, 1, 0xabcdef, 0xffffff, 0x00f00d])
      expect(hex24(value)).toBe(value.toString(16).padStart(6, '0'));
  });

  it('writes 64-bit hashes as sixteen digits, high half first', () => {
    for (const value of [0n, 1n, 0xffn << 56n, 0x0123456789abcdefn, 0xfedcba9876543210n, 2n ** 64n - 1n])
      expect(hex64(value)).toBe(value.toString(16).padStart(16, '0'));
  });
});
