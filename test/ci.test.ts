import { describe, expect, it } from 'vitest';
import { inCi } from './ci.js';

describe('inCi', () => {
  it('takes any CI value but unset, empty, false and 0 as CI', () => {
    for (const value of ['true', '1', 'yes', 'woodpecker', 'TRUE'])
      expect(inCi({ CI: value }), value).toBe(true);
    for (const value of [undefined, '', 'false', 'FALSE', '0', ' 0 '])
      expect(inCi({ CI: value }), String(value)).toBe(false);
  });
});
