/**
 * Hostile input: every request a client can send gets a 4xx problem (or a success), never a 500,
 * and a refused write changes nothing. Cases found by fuzzing the blog by hand are kept here.
 */
import { describe, expect, it } from 'vitest';
import { engines, useBlog } from './harness.js';

const nul = '\u0000';

describe.each(engines())('hostile input on $name', (engine) => {
  if (engine.skip) {
    it.skip('needs PostgreSQL', () => undefined);
    return;
  }
  const blog = useBlog(engine);

  it('answers NUL characters, odd numbers, odd URLs and odd keys with a 4xx, never a 500', async () => {
    const user = await blog.register();
    const admin = await blog.adminToken();
    const cases: Array<[string, string, unknown, string | undefined, number]> = [
      [
        'POST',
        '/api/auth/register',
        { email: 'nul@example.com', password: 'password123', name: `a${nul}` },
        undefined,
        400,
      ],
      ['POST', '/api/auth/login', { email: `a${nul}@example.com`, password: 'x' }, undefined, 400],
      ['POST', '/api/auth/forgot-password', { email: `a${nul}b@example.com` }, undefined, 400],
      ['POST', '/api/auth/reset-password', { token: `a${nul}`, password: 'password123' }, undefined, 400],
      // A NUL is refused where the input is assembled, before the token is looked at.
      ['POST', '/api/auth/refresh', { refreshToken: nul }, undefined, 400],
      ['POST', '/api/posts', { title: `t${nul}`, content: 'c' }, user.accessToken, 400],
      ['POST', '/api/posts', { title: 't', content: 'c', excerpt: nul }, user.accessToken, 400],
      ['PUT', `/api/users/${user.user.id}`, { name: `x${nul}` }, user.accessToken, 400],
      ['GET', '/api/users?search=%00', undefined, admin, 400],
      ['GET', '/api/users?createdAfter=99999-01-01', undefined, admin, 400],
      ['GET', '/api/users?createdAfter=0000-01-01', undefined, admin, 400],
      ['GET', '/api/users?createdAfter=0001-01-01T00:00:00%2B01:00', undefined, admin, 400],
      ['GET', '/api/users?page=9007199254740993', undefined, admin, 400],
      ['GET', '/api/users/%00', undefined, undefined, 400],
      ['GET', '/api/posts/%00', undefined, undefined, 400],
      ['GET', '/api/posts?cursor=%00', undefined, undefined, 400],
      ['GET', '/api/posts?limit=1e400', undefined, undefined, 400],
      ['GET', `/api/posts/${'f'.repeat(501)}`, undefined, undefined, 400],
      ['GET', '/api/posts/%E0%A4%A', undefined, undefined, 400],
      // Parameters the input does not name are refused, these as any other.
      ['GET', '/api/posts?__proto__=1&constructor=2', undefined, undefined, 400],
      ['POST', '/api/posts', { title: 'x', content: 'y', status: 'archived' }, user.accessToken, 400],
      ['POST', '/api/posts', { title: ['x'], content: { $gt: '' } }, user.accessToken, 400],
    ];
    for (const [method, path, json, token, status] of cases) {
      const reply = await blog.request(method, path, {
        ...(json === undefined ? {} : { json }),
        ...(token === undefined ? {} : { token }),
      });
      expect(reply.status, `${method} ${path} ${JSON.stringify(json)}: ${reply.text}`).toBe(status);
    }
    const own = await blog.get<{ data: unknown[] }>(`/api/posts?authorId=${user.user.id}`, user.accessToken);
    expect(own.body.data).toEqual([]);
  });

  it('refuses a date that does not exist with a 400 naming the parameter, rather than rolling it over', async () => {
    const admin = await blog.adminToken();
    for (const date of ['2020-02-30', '2023-02-29', '2024-06-31T10:00:00Z']) {
      const reply = await blog.request('GET', `/api/users?createdAfter=${date}`, { token: admin });
      expect(reply.status, date).toBe(400);
      const problem = JSON.parse(reply.text) as { code: string; errors: { path: string; message: string }[] };
      expect(problem.code).toBe('VALIDATION_FAILED');
      expect(problem.errors).toEqual([
        { path: 'createdAfter', message: `${date} is not a date on the calendar` },
      ]);
    }
    const leap = await blog.request('GET', '/api/users?createdAfter=2024-02-29', { token: admin });
    expect(leap.status).toBe(200);
  });
});
