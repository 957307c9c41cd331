import { cursorInput, offsetInput } from 'proceedjs/pagination';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type { ListPostsParams } from './posts.js';
import { postStatuses, roles } from './schema.js';
import { type ListUsersParams, userSortColumns } from './users.js';

describe('repository parameters', () => {
  it('take the validated input of the list procedures as it is', () => {
    const listUsersInput = offsetInput({
      sortBy: userSortColumns,
      filters: {
        search: z.string().optional(),
        role: z.enum(roles).optional(),
        isActive: z.boolean().optional(),
        createdAfter: z.date().optional(),
      },
    });
    expectTypeOf<z.output<typeof listUsersInput>>().toExtend<ListUsersParams>();

    const listPostsInput = cursorInput({
      cursor: z.uuid(),
      filters: { authorId: z.uuid().optional(), status: z.enum(postStatuses).optional() },
    });
    expectTypeOf<z.output<typeof listPostsInput>>().toExtend<ListPostsParams>();
  });
});
