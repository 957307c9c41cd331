/** Input pieces the blog's procedures share. */
import { z } from 'zod';

/**
 * The input of an `update*` procedure: `id` from the path, `data` the body. `data` needs at least
 * one field, refuses unknown ones, and ignores an `id`, so a client may send back what it read.
 */
export function updateInput<S extends z.ZodRawShape>(fields: S) {
  return z.object({
    id: z.uuid(),
    data: z
      .strictObject({
        // As long as the ids the blog sends (UUIDs): what a client read and sends back.
        id: z.string().max(36).optional().describe('Ignored: the path names the record'),
        ...fields,
      })
      .refine((data) => Object.keys(data).some((key) => key !== 'id'), 'Send at least one field')
      // What the refinement says, for the document: an empty body is refused.
      .meta({ minProperties: 1 })
      .transform((data): z.output<z.ZodObject<S>> => {
        const { id: _ignored, ...changes } = data as Record<string, unknown>;
        return changes as z.output<z.ZodObject<S>>;
      }),
  });
}
