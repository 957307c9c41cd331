import fc from 'fast-check';
import FindMyWay from 'find-my-way';
import { describe, expect, it } from 'vitest';
import { Router } from './router.js';

describe('Router', () => {
  const router = new Router<string>();
  router.on(['GET', 'HEAD'], '/api/posts', 'list');
  router.on('POST', '/api/posts', 'create');
  router.on(['GET', 'HEAD'], '/api/posts/:id', 'get');
  router.on(['GET', 'HEAD'], '/api/posts/drafts', 'drafts');
  router.on('POST', '/api/posts/:id/publish', 'publish');
  router.on(['GET', 'HEAD'], '/api/posts/drafts/count', 'count');
  router.on(['GET', 'HEAD'], '/', 'root');

  it('matches literals, methods and parameters', () => {
    expect(router.find('GET', '/api/posts')).toEqual({ handler: 'list', params: {} });
    expect(router.find('POST', '/api/posts')?.handler).toBe('create');
    expect(router.find('HEAD', '/api/posts/7')).toEqual({ handler: 'get', params: { id: '7' } });
    expect(router.find('DELETE', '/api/posts/7')).toBeNull();
    expect(router.find('GET', '/')).toEqual({ handler: 'root', params: {} });
  });

  it('lets two routes name the parameter at one place differently, each binding its own name', () => {
    const named = new Router<string>();
    named.on('GET', '/api/notes/:id', 'note');
    named.on('GET', '/api/notes/:noteId/raw', 'raw');
    expect(named.find('GET', '/api/notes/7')).toEqual({ handler: 'note', params: { id: '7' } });
    expect(named.find('GET', '/api/notes/7/raw')).toEqual({ handler: 'raw', params: { noteId: '7' } });
  });

  it('takes a route added with a trailing slash as the path without it, as Fastify does', () => {
    const slashed = new Router<string>();
    slashed.on('GET', '/slash/', 'slash');
    expect(slashed.find('GET', '/slash')?.handler).toBe('slash');
    expect(slashed.find('GET', '/slash/')?.handler).toBe('slash');
  });

  it('prefers a literal segment, and backs up to a parameter when the literal branch has no route', () => {
    expect(router.find('GET', '/api/posts/drafts')?.handler).toBe('drafts');
    expect(router.find('POST', '/api/posts/drafts/publish')).toEqual({
      handler: 'publish',
      params: { id: 'drafts' },
    });
    expect(router.find('GET', '/api/posts/drafts/count')?.handler).toBe('count');
  });

  it('ignores one trailing slash; an empty segment matches no literal but is an empty parameter', () => {
    expect(router.find('GET', '/api/posts/')?.handler).toBe('list');
    expect(router.find('GET', '/api//posts')).toBeNull();
    expect(router.find('GET', '/api/posts//')).toEqual({ handler: 'get', params: { id: '' } });
  });

  it('decodes parameters and literals, and finds nothing where the encoding is broken', () => {
    expect(router.find('GET', '/api/posts/a%2Fb%20c')?.params).toEqual({ id: 'a/b c' });
    expect(router.find('GET', '/api/p%6Fsts')?.handler).toBe('list');
    expect(router.find('GET', '/api/posts/%zz')).toBeNull();
  });

  it('refuses the same route twice, whatever its parameter is named', () => {
    expect(() => router.on('GET', '/api/posts', 'again')).toThrow('GET /api/posts is routed twice');
    expect(() => router.on('GET', '/api/posts/:slug', 'x')).toThrow('GET /api/posts/:slug is routed twice');
  });

  it('finds a last parameter after literals in one lookup, and backs up where its method is missing', () => {
    const last = new Router<string>();
    last.on('POST', '/api/posts/:id', 'update');
    last.on('GET', '/api/:kind/:id', 'any');
    last.on('GET', '/api/posts/:id/raw', 'raw');
    expect(last.find('GET', '/api/posts/7')).toEqual({ handler: 'any', params: { kind: 'posts', id: '7' } });
    expect(last.find('POST', '/api/posts/7')).toEqual({ handler: 'update', params: { id: '7' } });
    expect(last.find('POST', '/api/posts/')).toBeNull();
    expect(last.find('GET', '/api/posts/7/raw')).toEqual({ handler: 'raw', params: { id: '7' } });
    // A literal segment with a ':' inside it still wins over the parameter beside it.
    last.on('GET', '/api/posts:search', 'search');
    last.on('GET', '/api/:name', 'named');
    expect(last.find('GET', '/api/posts:search')).toEqual({ handler: 'search', params: {} });
    expect(last.find('GET', '/api/posts:other')).toEqual({
      handler: 'named',
      params: { name: 'posts:other' },
    });
  });

  it('matches as find-my-way, which Fastify routes with on Node, does', () => {
    const literal = fc.constantFrom('a', 'b', 'posts', 'x.y', 'drafts');
    const pattern = fc.array(fc.oneof(literal, fc.constantFrom(':id', ':other')), {
      minLength: 1,
      maxLength: 4,
    });
    const requestSegment = fc.oneof(
      literal,
      fc.constantFrom('%61', 'p%6Fsts', '7', 'a%2Fb', '%C3%A9', 'x%20y', '', '%25'),
    );
    const requestPath = fc
      .tuple(fc.array(requestSegment, { minLength: 1, maxLength: 5 }), fc.boolean())
      .map(([segments, slash]) => `/${segments.join('/')}${slash ? '/' : ''}`);
    fc.assert(
      fc.property(
        fc.uniqueArray(pattern, { maxLength: 6, selector: (each) => each.join('/') }),
        requestPath,
        (patterns, path) => {
          const ours = new Router<number>();
          const theirs = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: Number.MAX_SAFE_INTEGER });
          const routed = new Set<string>();
          patterns.forEach((segments, index) => {
            // Parameters named as each route names them (`:id` here, `:other` there); the same
            // shape only once.
            const route = `/${segments.join('/')}`;
            const shape = segments.map((segment) => (segment.startsWith(':') ? ':' : segment)).join('/');
            if (routed.has(shape)) return;
            routed.add(shape);
            // Some routes take another method: a GET then backs up past them as Fastify does.
            const method = index % 3 === 2 ? 'POST' : 'GET';
            ours.on(method, route, index);
            theirs.on(method, route, () => undefined, { index });
          });
          const expected = theirs.find('GET', path);
          const found = ours.find('GET', path);
          if (expected === null) expect(found).toBeNull();
          else
            expect(found).toEqual({
              handler: (expected.store as { index: number }).index,
              params: { ...expected.params },
            });
        },
      ),
      { numRuns: 2000 },
    );
  });
});
