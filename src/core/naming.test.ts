import { describe, expect, it } from 'vitest';
import { ProceedConfigError } from './errors.js';
import { conventionOf, fillPath, normalizePrefix, resolveRoute } from './naming.js';

describe('conventionOf', () => {
  it.each([
    ['listPosts', 'list'],
    ['getPost', 'get'],
    ['createPost', 'create'],
    ['updatePost', 'update'],
    ['deletePost', 'delete'],
    ['get', 'get'],
  ])('%s follows the %s convention', (name, prefix) => {
    expect(conventionOf(name)?.prefix).toBe(prefix);
  });

  it.each(['getaway', 'listing', 'publishPost', 'removePost', 'Get'])('%s follows none', (name) => {
    expect(conventionOf(name)).toBeUndefined();
  });
});

describe('resolveRoute', () => {
  it('maps each prefix to its method, path, input mode and status', () => {
    const route = (name: string, kind: 'query' | 'mutation') => {
      const { method, path, inputMode, successStatus } = resolveRoute('posts', name, kind);
      return [method, path, inputMode, successStatus];
    };
    expect(route('listPosts', 'query')).toEqual(['GET', '/posts', 'query', 200]);
    expect(route('getPost', 'query')).toEqual(['GET', '/posts/:id', 'query', 200]);
    expect(route('createPost', 'mutation')).toEqual(['POST', '/posts', 'body', 201]);
    expect(route('updatePost', 'mutation')).toEqual(['PUT', '/posts/:id', 'update', 200]);
    expect(route('deletePost', 'mutation')).toEqual(['DELETE', '/posts/:id', 'query', 200]);
  });

  it('lets an override choose method and path, relative to the prefix', () => {
    const route = resolveRoute('posts', 'publishPost', 'mutation', {
      method: 'POST',
      path: 'posts/:id/publish',
    });
    expect(route).toMatchObject({
      method: 'POST',
      path: '/posts/:id/publish',
      params: ['id'],
      inputMode: 'body',
    });
  });

  it('lets an override set the success status', () => {
    expect(
      resolveRoute('auth', 'register', 'mutation', { method: 'POST', path: '/auth/register', status: 201 })
        .successStatus,
    ).toBe(201);
    expect(
      resolveRoute('auth', 'forgot', 'mutation', { method: 'POST', path: '/auth/forgot', status: 202 })
        .successStatus,
    ).toBe(202);
    expect(
      resolveRoute('marks', 'markRead', 'mutation', { method: 'PUT', path: '/marks/:id/read', status: 204 })
        .successStatus,
    ).toBe(204);
    expect(() =>
      resolveRoute('auth', 'x', 'mutation', { method: 'POST', path: '/x', status: 206 as 200 }),
    ).toThrow('success status 206 is not 200, 201, 202 or 204');
  });

  it('refuses a name without a prefix or override, naming the procedure', () => {
    expect(() => resolveRoute('posts', 'publishPost', 'mutation')).toThrow(
      new ProceedConfigError(
        'Procedure "posts.publishPost" has no conventional prefix (list, get, create, update, delete) and no .rest({ method, path }) override',
      ),
    );
  });

  it('refuses a prefix that contradicts the kind', () => {
    expect(() => resolveRoute('posts', 'getPost', 'mutation')).toThrow(
      /"posts.getPost" is declared as a mutation/,
    );
    expect(() => resolveRoute('posts', 'deletePost', 'query')).toThrow(/"delete" prefix means a mutation/);
  });

  it('refuses bad override methods and paths', () => {
    expect(() => resolveRoute('posts', 'x', 'query', { method: 'TRACE' as 'GET', path: '/x' })).toThrow(
      /method "TRACE"/,
    );
    expect(() => resolveRoute('posts', 'x', 'query', { method: 'GET', path: '/a b' })).toThrow(
      /invalid path segment/,
    );
    expect(() => resolveRoute('posts', 'x', 'query', { method: 'GET', path: '/:id/:id' })).toThrow(
      /repeats :id/,
    );
  });
});

describe('normalizePrefix and fillPath', () => {
  it('normalises prefixes', () => {
    expect(normalizePrefix('/api/')).toBe('/api');
    expect(normalizePrefix('api/v1')).toBe('/api/v1');
    expect(normalizePrefix('/')).toBe('');
    expect(() => normalizePrefix('/a b')).toThrow(ProceedConfigError);
  });

  it('fills and encodes path parameters', () => {
    expect(fillPath('/posts/:id/publish', { id: 'a/b c' })).toBe('/posts/a%2Fb%20c/publish');
    expect(() => fillPath('/posts/:id', {})).toThrow(/Missing path parameter "id"/);
    // The server fills a Location with what a request's path held, `..` included (a raw request
    // can send one): only the client refuses such a value (src/client/request.ts).
    expect(fillPath('/posts/:id', { id: '..' })).toBe('/posts/..');
  });
});
