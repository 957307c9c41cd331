/**
 * The blog's routes as a duel reads them (bench/servers/blog.ts against
 * bench/servers/fastify-pg-blog.ts on one database): each server announces its own token and the
 * newest published post's id, and each request names that server's.
 */
import type { Scenario, ServerInfo } from './compare.js';

/** The server's own token as a bearer token (each server of a duel signs its own). */
export const bearer = (_contender: string, server: ServerInfo) => ({
  headers: { authorization: `Bearer ${server.token ?? ''}` },
});

export const blogScenarios = {
  feed: { name: 'feed', method: 'GET', path: '/api/posts?limit=20', expectStatus: 200 },
  'post-by-id': {
    name: 'post-by-id',
    method: 'GET',
    path: '/api/posts/',
    expectStatus: 200,
    vary: (_contender, server) => ({ path: `/api/posts/${server.postId ?? ''}` }),
  },
  me: { name: 'me', method: 'GET', path: '/api/auth/me', expectStatus: 200, vary: bearer },
  create: {
    name: 'create',
    method: 'POST',
    path: '/api/posts',
    body: JSON.stringify({
      title: 'Measured',
      content: 'A post written by the bench.',
      excerpt: 'By the bench.',
    }),
    expectStatus: 201,
    vary: bearer,
  },
} satisfies Record<string, Scenario>;
