import { describe, expect, it } from 'vitest';
import { newRequestId } from './request-id.js';

describe('newRequestId', () => {
  it('gives UUIDs of version 8 that never repeat, with nothing in them that counts', () => {
    const ids = Array.from({ length: 100_000 }, () => newRequestId());
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids.slice(0, 100)) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
    // One process shares the prefix; the tail of consecutive ids does not step by one.
    expect(new Set(ids.map((id) => id.slice(0, 24))).size).toBe(1);
    const tails = ids.slice(0, 1000).map((id) => Number.parseInt(id.slice(24), 16));
    const steps = new Set(tails.slice(1).map((tail, index) => tail - (tails[index] as number)));
    expect(steps.has(1)).toBe(false);
  });
});
