/** planRoutes and the RouteTable on their own: naming, collisions, health routes, documentation. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { routeFacts } from './documentation.js';
import { defineErrors, ProceedConfigError } from './errors.js';
import { guard } from './guards.js';
import { procedure, procedures } from './procedure.js';
import { RouteTable } from './route-table.js';
import { planRoutes } from './routes.js';
import { rateLimit, step } from './steps.js';

const p = () => procedure();
const posts = procedures('posts', {
  listPosts: p().query(() => []),
  getPost: p()
    .input(z.object({ id: z.string() }))
    .query(() => null),
  createPost: p().mutation(() => ({})),
  publishPost: p()
    .rest({ method: 'POST', path: '/posts/:id/publish' })
    .mutation(() => ({})),
});

describe('planRoutes', () => {
  it('maps names to methods, paths, input modes and statuses under the prefix', () => {
    expect(
      planRoutes([posts], '/v1').map((route) => [
        route.method,
        route.path,
        route.inputMode,
        route.successStatus,
        route.params,
      ]),
    ).toEqual([
      ['GET', '/v1/posts', 'query', 200, []],
      ['GET', '/v1/posts/:id', 'query', 200, ['id']],
      ['POST', '/v1/posts', 'body', 201, []],
      ['POST', '/v1/posts/:id/publish', 'body', 200, ['id']],
    ]);
  });

  it('refuses two procedures on one route, also when only parameter names differ', () => {
    const clash = procedures('posts', {
      getPost: p().query(() => null),
      findPost: p()
        .rest({ method: 'GET', path: '/posts/:slug' })
        .query(() => null),
    });
    expect(() => planRoutes([clash])).toThrow(
      'Procedures "posts.getPost" (GET /api/posts/:id) and "posts.findPost" (GET /api/posts/:slug) map to one route: a path parameter matches any segment, whatever its name',
    );
    expect(() => planRoutes([posts, posts])).toThrow(ProceedConfigError);
  });

  it('refuses a query input with a field no query string can carry, and takes the same as a body', () => {
    const listing = (field: z.ZodType) =>
      p().input(z.object({ limit: z.number().optional(), filter: field }));
    for (const [field, what] of [
      [z.object({ status: z.string() }), 'an object'],
      [z.object({ status: z.string() }).nullable().optional(), 'an object'],
      [z.record(z.string(), z.string()), 'an object'],
      [z.array(z.object({ tag: z.string() })), 'an array of objects or arrays'],
      [z.array(z.array(z.number())).optional(), 'an array of objects or arrays'],
    ] as const) {
      expect(() => planRoutes([procedures('posts', { listPosts: listing(field).query(() => []) })])).toThrow(
        `posts.listPosts takes its input from the query string, which carries text and repeated keys, but its field "filter" is ${what}, which no query string can carry (its REST route could never be called)`,
      );
      // Read from a JSON body, the same input is fine.
      const searching = listing(field)
        .rest({ method: 'POST', path: '/posts/search' })
        .mutation(() => []);
      expect(planRoutes([procedures('posts', { searchPosts: searching })])).toHaveLength(1);
    }
    // What a query carries: scalars, their unions, arrays of them, anything (`z.unknown()`).
    for (const field of [
      z.string(),
      z.union([z.number(), z.literal('all')]),
      z.array(z.enum(['a'])),
      z.unknown(),
    ])
      expect(planRoutes([procedures('posts', { listPosts: listing(field).query(() => []) })])).toHaveLength(
        1,
      );
  });
});

describe('RouteTable', () => {
  it('keeps one health route per prefix and refuses a procedure on it', () => {
    const table = new RouteTable();
    expect(table.mount([posts], '/api').newHealth).toBe(true);
    expect(table.mount([procedures('tags', { listTags: p().query(() => []) })], '/api').newHealth).toBe(
      false,
    );
    expect(table.healthPrefixes).toEqual(['/api']);
    expect(table.lines().slice(-2)).toEqual(['GET /api/health', 'GET /api/health/live']);
    const health = procedures('health', { listHealth: p().query(() => []) });
    expect(() => new RouteTable().mount([health], '/api')).toThrow(
      'Procedure "health.listHealth" takes GET /api/health, a health route',
    );
    const live = procedures('health', {
      live: p()
        .rest({ method: 'GET', path: '/health/live' })
        .query(() => ({})),
    });
    expect(() => new RouteTable().mount([live], '/api')).toThrow(
      'Procedure "health.live" takes GET /api/health/live, a health route',
    );
  });

  it('plans without changing the table until the plan is committed, and refuses a stale plan', () => {
    const table = new RouteTable();
    const plan = table.plan([posts], '/api');
    expect(plan.routes.map((route) => route.name)).toEqual([
      'listPosts',
      'getPost',
      'createPost',
      'publishPost',
    ]);
    expect(table.routes).toEqual([]);
    expect(table.healthPrefixes).toEqual([]);
    const other = table.plan([procedures('tags', { listTags: p().query(() => []) })], '/v2');
    plan.commit();
    expect(table.routes).toHaveLength(4);
    expect(table.mounts).toEqual([{ prefix: '/api', collections: [posts] }]);
    expect(() => other.commit()).toThrow('A route plan was committed after another mount');
    expect(table.routes).toHaveLength(4);
  });

  it('gives each route what plugins documented for it, by route, never by string', () => {
    const table = new RouteTable();
    table.mount([posts], '/api');
    table.document({ problems: ['INVALID_TOKEN'], bearer: 'optional' });
    table.document((route) => (route.method === 'POST' ? { problems: ['RATE_LIMITED'] } : undefined));
    const [list, , create] = table.routes;
    if (list === undefined || create === undefined) throw new Error('not mounted');
    expect(table.documentationOf(list)).toEqual([{ problems: ['INVALID_TOKEN'], bearer: 'optional' }]);
    expect(table.documentationOf(create)).toHaveLength(2);
  });
});

describe('routeFacts', () => {
  const facts = (
    built: ReturnType<typeof p>['query'] extends never ? never : Parameters<typeof procedures>[1],
  ) => {
    const [route] = planRoutes([procedures('posts', built)]);
    if (route === undefined) throw new Error('not planned');
    return routeFacts(route);
  };

  it('derives problems from the input, guards, path, kind and body', () => {
    const admin = guard({ name: 'admin', requiresUser: true, check: () => true });
    const codes = facts({
      updatePost: p()
        .guard(admin)
        .input(z.object({ id: z.string(), data: z.object({}) }))
        .mutation(() => ({})),
    }).problems.map((problem) => problem.code);
    expect(codes).toEqual([
      'INVALID_JSON',
      'VALIDATION_FAILED',
      'UNAUTHENTICATED',
      'FORBIDDEN',
      'NOT_FOUND',
      'REQUEST_TIMEOUT',
      'CONFLICT',
      'PRECONDITION_FAILED',
      'PAYLOAD_TOO_LARGE',
      'UNSUPPORTED_MEDIA_TYPE',
      'HEADERS_TOO_LARGE',
      'INTERNAL',
      'UNAVAILABLE',
    ]);
  });

  it('adds what steps and meta declare: rate limits, an app’s own codes', () => {
    const appErrors = defineErrors({ OUT_OF_STOCK: { status: 422, title: 'Out of stock' } });
    const found = facts({
      listPosts: p()
        .use(rateLimit({ name: 'reads', max: 5 }))
        .use(step({ name: 'maintenance', documents: { problems: ['UNAVAILABLE'] } }))
        .meta({ errors: [appErrors.OUT_OF_STOCK] })
        .query(() => []),
    });
    expect(found.problems.map((problem) => `${problem.status} ${problem.code}`)).toEqual([
      '400 VALIDATION_FAILED',
      '422 OUT_OF_STOCK',
      '429 RATE_LIMITED',
      '431 HEADERS_TOO_LARGE',
      '500 INTERNAL',
      '503 UNAVAILABLE',
    ]);
    // Declared by the OpenAPI generator on every answer of the route, from its rateLimits.
    expect(Object.keys(found.headers)).toEqual([]);
    expect(found.bearer).toBe('none');
  });
});
