/**
 * Proceed as its users write it: `resource()` views, `cursorInput`/`cursorPage` over the posts,
 * `z.uuid()` ids, `authPlugin` with a TokenService and a user loader, `.guard(authenticated)` on
 * the create. Logs off, as in every contender.
 */
import { createApp, NotFoundError, procedure, procedures } from 'proceedjs';
import { type AuthContext, authenticated, authPlugin, TokenService } from 'proceedjs/auth';
import { cursorInput, cursorPage, paginateArray } from 'proceedjs/pagination';
import { resource } from 'proceedjs/resource';
import { z } from 'zod';
import { firstCreatedId, type PostRow, postId, posts, postsById, secret, userId, users } from './posts.js';

type User = { id: string; role: 'user'; isActive: boolean };
type Ctx = AuthContext<User>;

const Post = resource('Post', {
  public: { id: z.uuid(), title: z.string(), excerpt: z.string() },
  authenticated: {
    content: z.string(),
    authorId: z.uuid(),
    status: z.enum(['draft', 'published', 'archived']),
  },
});

let created = firstCreatedId;
const p = () => procedure<Ctx>();

const postsApi = procedures('posts', {
  listPosts: p()
    .input(cursorInput({ cursor: z.uuid() }))
    .output(cursorPage(Post.public))
    .query(({ input }) => paginateArray(posts, input, { key: 'id' })),
  getPost: p()
    .input(z.object({ id: z.uuid() }))
    .output(Post.public)
    .query(({ input }) => {
      const post = postsById.get(input.id);
      if (post === undefined) throw new NotFoundError('No such post');
      return post;
    }),
  createPost: p()
    .guard(authenticated)
    .input(
      z.object({
        title: z.string().min(1).max(200),
        excerpt: z.string().max(500).default(''),
        content: z.string().min(1).max(50_000),
      }),
    )
    .output(Post.authenticated)
    .mutation(
      ({ input, ctx }): PostRow => ({
        id: postId(created++),
        ...input,
        authorId: ctx.user.id,
        status: 'draft',
        passwordHash: '',
        createdAt: new Date(0),
      }),
    ),
});

const tokens = new TokenService({ secret });
const app = createApp<Ctx>({ logger: false });
await app.register(authPlugin, { tokens, userLoader: (id) => users.get(id) });
app.mount([postsApi]);
const { accessToken } = await tokens.issuePair(userId);
const address = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
process.stdout.write(`${JSON.stringify({ address, token: accessToken })}\n`);
// A clean exit on SIGTERM lets `node --cpu-prof` write its profile (docs/performance.md).
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
