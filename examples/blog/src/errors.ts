/**
 * The blog's own problem codes, beside Proceed's built-in ones: answered, documented in OpenAPI
 * and matched by clients like them (docs/errors.md).
 */
import { defineErrors } from 'proceedjs';

export const blogErrors = defineErrors({
  /** A post may not move to the status asked for (docs/blog.md lists the moves). */
  INVALID_TRANSITION: { status: 409, title: 'Invalid state transition' },
});
