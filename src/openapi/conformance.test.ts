import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type NotesContext, notesApp } from '../../test/fixtures/notes.js';
import { download, sendFile } from '../core/files.js';
import { procedure, procedures } from '../core/procedure.js';
import { createResponseValidator } from './conformance.js';
import { generateOpenApi } from './generate.js';
import type { OpenApiDocument } from './types.js';

const info = { title: 'Notes API', version: '1.0.0' };

interface Exchange {
  who: 'anonymous' | 'user' | 'admin';
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  payload?: string;
  contentType?: string;
  status: number;
  code?: string;
}

const users: Record<Exchange['who'], NotesContext['user']> = {
  anonymous: undefined,
  user: { id: 'u2', role: 'user' },
  admin: { id: 'u1', role: 'admin' },
};

/** Requests and the answers the server really gives; every answer must fit the document. */
const exchanges: Exchange[] = [
  { who: 'anonymous', method: 'GET', url: '/api/notes', status: 200 },
  { who: 'anonymous', method: 'GET', url: '/api/notes?limit=1&pinned=true&tags=a&tags=b', status: 200 },
  { who: 'anonymous', method: 'GET', url: '/api/notes?limit=0', status: 400, code: 'VALIDATION_FAILED' },
  { who: 'anonymous', method: 'GET', url: '/api/notes?pinned=maybe', status: 400, code: 'VALIDATION_FAILED' },
  { who: 'anonymous', method: 'GET', url: '/api/notes/1', status: 200 },
  { who: 'admin', method: 'GET', url: '/api/notes/1', status: 200 },
  { who: 'anonymous', method: 'GET', url: '/api/notes/404', status: 404, code: 'NOT_FOUND' },
  {
    who: 'user',
    method: 'POST',
    url: '/api/notes',
    payload: JSON.stringify({ title: 'Two', body: 'text' }),
    status: 201,
  },
  {
    who: 'user',
    method: 'POST',
    url: '/api/notes',
    payload: JSON.stringify({ title: '' }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  { who: 'user', method: 'POST', url: '/api/notes', payload: '{"title":', status: 400, code: 'INVALID_JSON' },
  {
    who: 'user',
    method: 'POST',
    url: '/api/notes',
    payload: '<note><title>Two</title></note>',
    contentType: 'application/xml',
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    who: 'user',
    method: 'POST',
    url: '/api/notes',
    payload: JSON.stringify({ title: 'Big', body: 'x'.repeat(1024 * 1024) }),
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
  },
  { who: 'user', method: 'PUT', url: '/api/notes/1', payload: JSON.stringify({ title: 'New' }), status: 200 },
  {
    who: 'user',
    method: 'PUT',
    url: '/api/notes/404',
    payload: JSON.stringify({ title: 'New' }),
    status: 404,
    code: 'NOT_FOUND',
  },
  { who: 'user', method: 'POST', url: '/api/notes/7/pin', status: 200 },
  { who: 'user', method: 'POST', url: '/api/notes/seven/pin', status: 400, code: 'VALIDATION_FAILED' },
  { who: 'anonymous', method: 'DELETE', url: '/api/notes/1', status: 401, code: 'UNAUTHENTICATED' },
  { who: 'user', method: 'DELETE', url: '/api/notes/1', status: 403, code: 'FORBIDDEN' },
  { who: 'admin', method: 'DELETE', url: '/api/notes/404', status: 404, code: 'NOT_FOUND' },
  { who: 'admin', method: 'DELETE', url: '/api/notes/1', status: 200 },
  { who: 'anonymous', method: 'GET', url: '/api/notes-broken', status: 500, code: 'INTERNAL' },
  { who: 'anonymous', method: 'GET', url: '/api/health', status: 200 },
];

describe('createResponseValidator on the notes fixture', () => {
  const document = generateOpenApi({ app: notesApp(), info });
  const check = createResponseValidator(document);

  it.each(exchanges)('$who $method $url → $status fits the document', async (exchange) => {
    const app = notesApp(users[exchange.who]);
    const response = await app.inject({
      method: exchange.method,
      url: exchange.url,
      ...(exchange.payload === undefined
        ? {}
        : {
            payload: exchange.payload,
            headers: { 'content-type': exchange.contentType ?? 'application/json' },
          }),
    });
    expect(response.statusCode, response.body).toBe(exchange.status);
    if (exchange.code !== undefined) expect(response.json()).toMatchObject({ code: exchange.code });
    const errors = check(
      exchange.method,
      exchange.url,
      response.statusCode,
      response.headers['content-type'],
      response.body,
    );
    expect(errors).toEqual([]);
  });

  it('gives every problem response an example that fits its own schema', () => {
    const responses = Object.entries(document.components.responses);
    expect(responses.length).toBeGreaterThanOrEqual(9);
    for (const [name, response] of responses) {
      const ref = `#/components/responses/${name}`;
      const [method = '', path = '', status = ''] =
        Object.entries(document.paths)
          .flatMap(([template, item]) =>
            Object.entries(item).flatMap(([verb, op]) =>
              Object.entries(op.responses)
                .filter(([, used]) => '$ref' in used && used.$ref === ref)
                .map(([code]) => [verb, template.replace(/\{[^}]+\}/g, '1'), code]),
            ),
          )
          .at(0) ?? [];
      const example = response.content?.['application/problem+json']?.example;
      expect(example, name).toMatchObject({ status: Number(status) });
      expect(check(method, path, Number(status), 'application/problem+json', example), name).toEqual([]);
    }
  });

  it('catches a body that does not match the documented view', () => {
    expect(
      check('GET', '/api/notes/1', 200, 'application/json', { id: '1', title: 'One', secret: 's' }),
    ).toEqual(
      expect.arrayContaining([
        'GET /api/notes/1 200: (body) must NOT have additional properties',
        'GET /api/notes/1 200: (body) must match exactly one schema in oneOf',
      ]),
    );
    expect(check('GET', '/api/notes/1', 200, 'application/json', { id: '1', title: 'One' })).toEqual([]);
    expect(check('POST', '/api/notes', 201, 'application/json', { id: '1', title: 'x' })).toEqual(
      expect.arrayContaining([expect.stringContaining("must have required property 'body'")]),
    );
    expect(
      check('GET', '/api/notes', 200, 'application/json', '{"data":[{"id":1,"title":"x"}],"echo":{}}'),
    ).toEqual(['GET /api/notes 200: /data/0/id must be string']);
  });

  it('checks problem bodies against the status they came with', () => {
    const notFound = {
      type: 'urn:proceed:problem:not-found',
      title: 'Not found',
      status: 404,
      detail: 'No note 9',
      code: 'NOT_FOUND',
    };
    expect(check('GET', '/api/notes/9', 404, 'application/problem+json; charset=utf-8', notFound)).toEqual(
      [],
    );
    expect(
      check('GET', '/api/notes/9', 404, 'application/problem+json', { ...notFound, code: 'CONFLICT' }),
    ).not.toEqual([]);
    expect(check('GET', '/api/notes/9', 404, 'application/problem+json', { status: 404 })).toEqual(
      expect.arrayContaining([expect.stringContaining("must have required property 'code'")]),
    );
  });

  it('reports undocumented statuses, media types, methods and paths', () => {
    expect(check('GET', '/api/notes', 404, 'application/problem+json', {})).toEqual([
      'GET /api/notes: status 404 is not documented for listNotes (documented: 200, 304, 400, 412, 431, 500, 503)',
    ]);
    expect(check('GET', '/api/notes', 200, 'text/html', '<p>')).toEqual([
      'GET /api/notes: content type text/html is not documented for 200 (documented: application/json)',
    ]);
    expect(check('GET', '/api/notes', 200, 'application/json', '{"data":')).toEqual([
      'GET /api/notes: the body is not valid JSON',
    ]);
    expect(check('PATCH', '/api/notes/1', 200, 'application/json', {})).toEqual([
      'PATCH /api/notes/1: PATCH /api/notes/{id} is not documented',
    ]);
    expect(check('GET', '/api/nothing/here/at/all', 200, 'application/json', {})).toEqual([
      'GET /api/nothing/here/at/all: no documented path matches',
    ]);
  });

  it('prefers a literal path segment over a parameter and ignores the query string', () => {
    const literal: OpenApiDocument = structuredClone(document);
    literal.paths['/api/notes/{id}/pin'] = {};
    literal.paths['/api/notes/latest/pin'] = {
      post: {
        operationId: 'pinLatest',
        tags: ['notes'],
        responses: { '204': { description: 'Pinned, nothing to say' } },
      },
    };
    const literalCheck = createResponseValidator(literal);
    expect(literalCheck('POST', '/api/notes/latest/pin?x=1', 204, undefined, '')).toEqual([]);
    expect(literalCheck('POST', '/api/notes/latest/pin', 204, undefined, '{}')).toEqual([
      'POST /api/notes/latest/pin: status 204 is documented without a body',
    ]);
  });
});

describe('createResponseValidator on file answers', () => {
  const files = procedures('files', {
    getFile: procedure()
      .input(z.object({ id: z.string() }))
      .output(download())
      .query(() => sendFile(new Uint8Array(1), { type: 'image/png' })),
    getScan: procedure()
      .rest({ method: 'GET', path: '/files/:id/scan' })
      .input(z.object({ id: z.string() }))
      .output(download({ types: ['application/pdf'] }))
      .query(() => sendFile(new Uint8Array(1), { type: 'application/pdf' })),
  });
  const check = createResponseValidator(
    generateOpenApi({ mounts: [{ prefix: '/api', collections: [files] }], info }),
  );

  it('takes any media type where the file answer documents */*, only the listed ones otherwise', () => {
    expect(check('GET', '/api/files/1', 200, 'image/png', new Uint8Array([1]))).toEqual([]);
    expect(check('GET', '/api/files/1/scan', 200, 'application/pdf', new Uint8Array([1]))).toEqual([]);
    expect(check('GET', '/api/files/1/scan', 200, 'image/png', new Uint8Array([1]))).toEqual([
      'GET /api/files/1/scan: content type image/png is not documented for 200 (documented: application/pdf)',
    ]);
  });

  it('checks HEAD as the GET it mirrors, with no body', () => {
    expect(check('HEAD', '/api/files/1', 200, 'image/png', '')).toEqual([]);
    expect(check('HEAD', '/api/files/1', 200, 'image/png', 'bytes')).toEqual([
      'HEAD /api/files/1: HEAD answered with a body',
    ]);
  });
});
