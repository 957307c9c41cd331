/**
 * The smallest useful Worker: one procedure, validated input, served by `app.fetch`. Bundled by
 * wrangler as a user's would be (test/worker-bundle.test.ts): `proceedjs` from the built package
 * through its `workerd` condition, not the sources.
 */
import { createApp, procedure, procedures } from 'proceedjs';
import { z } from 'zod';

const getNote = procedure()
  .input(z.object({ id: z.number().int() }))
  .query(({ input }) => ({ id: input.id, title: 'A note' }));

const app = createApp().mount([procedures('notes', { getNote })]);

export default { fetch: app.fetch };
