import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { procedure } from './procedure.js';

describe('the procedure builder', () => {
  // Its types ask only for the Standard Schema mark (cheaper for the checker): the rest is checked here.
  const cannotValidate = { '~standard': { version: 1, vendor: 'nobody' } } as never;

  it('refuses, when built, an input or output that carries the mark but cannot validate', () => {
    expect(() => procedure().input(cannotValidate)).toThrow(
      '.input() takes a Standard Schema (a Zod, Valibot or ArkType schema): this one cannot validate',
    );
    expect(() => procedure().output(cannotValidate)).toThrow('.output() takes a Standard Schema');
    expect(() => procedure().output({ public: z.object({}), odd: cannotValidate }, () => 'public')).toThrow(
      '.output() choice "odd" takes a Standard Schema',
    );
  });

  it('takes any schema that validates', () => {
    expect(() =>
      procedure()
        .input(z.object({ id: z.string() }))
        .output({ public: z.object({}), admin: z.object({ id: z.string() }) }, () => 'public')
        .query(() => ({})),
    ).not.toThrow();
  });
});
