/** Input pieces the blog's procedures share. */
import { z } from 'zod';

/**
 * A string PostgreSQL can store: `text` cannot hold NUL characters, so they are refused here,
 * with the field named, instead of failing at the database.
 */
export const text = (): z.ZodString =>
  z.string().refine((value) => !value.includes('\u0000'), 'Must not contain NUL characters');
