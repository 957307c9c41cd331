import { describe, expect, it } from 'vitest';
import { lingeringBytes, lingersOn } from './lingering.js';

describe('the lingering rule', () => {
  it('reads on at least 10 MiB, or the route’s own limit when more', () => {
    expect(lingeringBytes(1024)).toBe(10 * 1024 * 1024);
    expect(lingeringBytes(50 * 1024 * 1024)).toBe(50 * 1024 * 1024);
  });

  it('reads on a body of unknown length or one declared within the bound, never one declared past it', () => {
    expect(lingersOn(undefined, 100)).toBe(true);
    expect(lingersOn('100', 100)).toBe(true);
    expect(lingersOn('101', 100)).toBe(false);
    expect(lingersOn('lots', 100)).toBe(false);
  });
});
