import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileSerializer } from './output.js';

describe('compileSerializer', () => {
  it('compiles a schema once, whichever route asks, and each schema writes only its own fields', async () => {
    const publicView = z.object({ id: z.string(), title: z.string() });
    const fullView = publicView.extend({ secret: z.string() });
    const write = compileSerializer(publicView);
    expect(compileSerializer(publicView)).toBe(write);
    const record = { id: 'a', title: 'T', secret: 'never in the public view' };
    expect(await write(record)).toBe('{"id":"a","title":"T"}');
    expect(await compileSerializer(fullView)(record)).toBe(
      '{"id":"a","title":"T","secret":"never in the public view"}',
    );
  });
});
