/** The HTTP edges of the blog (docs/blog.md, docs/errors.md): unknown routes, methods, bodies, health. */
import { beforeAll, describe, expect, it } from 'vitest';
import { engines, expectProblem, type Session, useBlog } from './harness.js';

for (const engine of engines()) {
  describe.skipIf(engine.skip)(`HTTP edges on ${engine.name}`, () => {
    const blog = useBlog(engine);
    let session: Session;

    beforeAll(async () => {
      session = await blog.register();
    });

    it('GET /api/health answers 200 { status: "ok" }', async () => {
      const reply = await blog.get('/api/health');
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
      expect(reply.body).toEqual({ status: 'ok' });
    });

    it.each([
      ['GET', '/api/nope'],
      ['GET', '/api/posts/a/b/c'],
      ['POST', '/api/nothing'],
      ['GET', '/'],
    ])('%s %s answers 404 ROUTE_NOT_FOUND', async (method, path) => {
      const reply = await blog.request(method, path);
      expectProblem(reply, 404, 'ROUTE_NOT_FOUND', `No route matches ${method} ${path}`);
    });

    it.each([
      ['DELETE', '/api/posts', ['GET', 'POST']],
      ['PATCH', `/api/posts/01890000-0000-7000-8000-000000000000`, ['DELETE', 'GET', 'PUT']],
      ['GET', '/api/auth/login', ['POST']],
      ['PUT', '/api/users', ['GET', 'POST']],
    ])('%s %s answers 405 METHOD_NOT_ALLOWED with Allow', async (method, path, allowed) => {
      const reply = await blog.request(method, path);
      expectProblem(reply, 405, 'METHOD_NOT_ALLOWED');
      const allow = (reply.headers.get('allow') ?? '').split(',').map((item) => item.trim());
      for (const expected of allowed) expect(allow).toContain(expected);
      expect(allow).not.toContain(method);
    });

    it.each([
      ['text/plain', 'title=x'],
      ['application/xml', '<post><title>x</title></post>'],
      ['application/x-www-form-urlencoded', 'title=x&content=y'],
    ])('answers 415 UNSUPPORTED_MEDIA_TYPE for a %s body', async (contentType, body) => {
      const reply = await blog.request('POST', '/api/posts', {
        body,
        contentType,
        token: session.accessToken,
      });
      expectProblem(reply, 415, 'UNSUPPORTED_MEDIA_TYPE');
      const anonymous = await blog.request('POST', '/api/auth/login', { body, contentType });
      expectProblem(anonymous, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('answers 413 PAYLOAD_TOO_LARGE for a body over 1 MiB, and accepts one just under', async () => {
      const big = JSON.stringify({ title: 'Big', content: 'x'.repeat(1024 * 1024) });
      const reply = await blog.request('POST', '/api/posts', {
        body: big,
        contentType: 'application/json',
        token: session.accessToken,
      });
      expectProblem(reply, 413, 'PAYLOAD_TOO_LARGE');
      // Under the limit, the body is parsed and the schema decides (content is at most 50,000).
      const under = JSON.stringify({ title: 'Big', content: 'x'.repeat(1024 * 1024 - 100) });
      expect(Buffer.byteLength(under)).toBeLessThan(1024 * 1024);
      const parsed = await blog.request('POST', '/api/posts', {
        body: under,
        contentType: 'application/json',
        token: session.accessToken,
      });
      expectProblem(parsed, 400, 'VALIDATION_FAILED');
    });

    it('answers 400 INVALID_JSON for malformed JSON', async () => {
      for (const body of ['{"title":', '{title: "x"}', "{'a':1}"]) {
        const reply = await blog.request('POST', '/api/posts', {
          body,
          contentType: 'application/json',
          token: session.accessToken,
        });
        expectProblem(reply, 400, 'INVALID_JSON');
      }
    });

    it('answers 400 VALIDATION_FAILED for JSON that is not an object', async () => {
      for (const json of [[1, 2], 'text', 42]) {
        const reply = await blog.request('POST', '/api/posts', { json, token: session.accessToken });
        expectProblem(reply, 400, 'VALIDATION_FAILED');
      }
    });

    it('adds an x-request-id to answers, and never a stack or a server path', async () => {
      const reply = await blog.request('POST', '/api/posts', {
        body: '{"title":',
        contentType: 'application/json',
        token: session.accessToken,
      });
      expect(reply.headers.get('x-request-id')).toMatch(/\S/);
      expect(reply.text).not.toMatch(/stack|\.ts:\d+|node_modules/);
    });
  });
}
