import { describe, expect, it } from 'vitest';
import { distinctProblems } from './documentation.js';
import { defineErrors } from './errors.js';

describe('distinctProblems', () => {
  it('orders by status, then by the code’s characters whatever the locale, each code once', () => {
    // A locale's collation would put "A_B" first (punctuation before letters); characters do not.
    const errors = defineErrors({
      A_B: { status: 409, title: 'One' },
      AB: { status: 409, title: 'Two' },
      ZZ: { status: 400, title: 'Three' },
    });
    const ordered = distinctProblems([errors.A_B, 'NOT_FOUND', errors.AB, errors.ZZ, errors.A_B]);
    expect(ordered.map((problem) => problem.code)).toEqual(['ZZ', 'NOT_FOUND', 'AB', 'A_B']);
  });
});
