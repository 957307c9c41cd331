import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  defineErrors,
  errorStatus,
  errorTitle,
  ProceedConfigError,
  ProceedError,
  problemType,
  toProblem,
  ValidationError,
} from './errors.js';

describe('the code table', () => {
  it('agrees with docs/errors.md, code for code and status for status', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    const documented = Object.fromEntries(
      [...doc.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)].map((match) => [match[1], Number(match[2])]),
    );
    expect(documented).toEqual(errorStatus);
  });

  it('has a title for every code', () => {
    expect(Object.keys(errorTitle).sort()).toEqual(Object.keys(errorStatus).sort());
  });
});

describe('toProblem', () => {
  it('renders a ProceedError with its headers and field errors', () => {
    const error = new ValidationError([{ path: 'email', message: 'Invalid email' }]);
    expect(toProblem(error)).toEqual({
      status: 400,
      headers: {},
      unexpected: false,
      body: {
        type: problemType('VALIDATION_FAILED'),
        title: 'Validation failed',
        status: 400,
        detail: 'email: Invalid email',
        code: 'VALIDATION_FAILED',
        errors: [{ path: 'email', message: 'Invalid email' }],
      },
    });
    const limited = new ProceedError('RATE_LIMITED', 'Slow down', { headers: { 'retry-after': '30' } });
    expect(toProblem(limited).headers).toEqual({ 'retry-after': '30' });
  });

  it('lists the first 100 field errors, and counts them all in detail', () => {
    const errors = Array.from({ length: 250 }, (_, index) => ({
      path: `tags.${index}`,
      message: 'Too long',
    }));
    const { body } = toProblem(new ValidationError(errors));
    expect(body.errors).toHaveLength(100);
    expect(body.errors?.[99]).toEqual({ path: 'tags.99', message: 'Too long' });
    expect(body.detail).toBe('tags.0: Too long; 249 more errors');
  });

  it('hides unexpected errors unless asked to expose them', () => {
    const hidden = toProblem(new Error('secret detail'));
    expect(hidden.unexpected).toBe(true);
    expect(hidden.body.detail).toBe('The server could not complete the request');
    expect(toProblem(new Error('secret detail'), true).body.detail).toBe('secret detail');
    expect(toProblem('a string').body.code).toBe('INTERNAL');
  });
});

describe('defineErrors', () => {
  const appErrors = defineErrors({ OUT_OF_STOCK: { status: 422, title: 'Out of stock' } });

  it('makes codes that are thrown and answered like the built-in ones', () => {
    const error = new ProceedError(appErrors.OUT_OF_STOCK, 'Only 2 left');
    expect(error).toMatchObject({ code: 'OUT_OF_STOCK', status: 422, title: 'Out of stock' });
    expect(toProblem(error).body).toEqual({
      type: 'urn:proceed:problem:out-of-stock',
      title: 'Out of stock',
      status: 422,
      detail: 'Only 2 left',
      code: 'OUT_OF_STOCK',
    });
    expect(new ProceedError(appErrors.OUT_OF_STOCK).message).toBe('Out of stock');
  });

  it('refuses codes that are not UPPER_SNAKE_CASE, built-in codes, and statuses outside 4xx/5xx', () => {
    expect(() => defineErrors({ outOfStock: { status: 422, title: 'x' } })).toThrow(ProceedConfigError);
    expect(() => defineErrors({ NOT_FOUND: { status: 404, title: 'x' } })).toThrow(/built-in code/);
    expect(() => defineErrors({ MOVED: { status: 301, title: 'x' } })).toThrow(/4xx or 5xx/);
    expect(() => defineErrors({ EMPTY: { status: 400, title: ' ' } })).toThrow(/needs a title/);
  });
});

describe('an unknown string code', () => {
  it('is refused at once, not turned into an error without a status', () => {
    expect(() => new ProceedError('INVALID_TRANSITION' as never)).toThrow(
      /not a built-in error code; define it/,
    );
  });
});
