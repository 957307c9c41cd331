/** A procedure declared `.rest({ status: 204 })`: no body, no content type, documented so, read as undefined by the client. */
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, routeManifest } from '../client/index.js';
import { ProceedConfigError } from '../core/errors.js';
import { procedure, procedures } from '../core/procedure.js';
import { createResponseValidator } from '../openapi/conformance.js';
import { generateOpenApi } from '../openapi/generate.js';
import { createApp } from './create-app.js';

const seen: string[] = [];
const marks = procedures('marks', {
  markRead: procedure()
    .rest({ method: 'PUT', path: '/marks/:id/read', status: 204 })
    .headers({ 'cache-control': 'no-store' })
    .input(z.object({ id: z.string().regex(/^\d+$/) }))
    .mutation(({ input }) => {
      seen.push(input.id);
      return { ignored: true };
    }),
});

describe('a 204 procedure', () => {
  const app = createApp({ logger: false });
  app.mount([marks]);
  afterAll(() => app.close());

  it('answers 204 with no body and no content type, its own headers and the request id kept', async () => {
    const response = await app.inject({ method: 'PUT', url: '/api/marks/7/read' });
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
    expect(response.headers['content-type']).toBeUndefined();
    expect(response.headers['content-length']).toBeUndefined();
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['x-request-id']).toEqual(expect.any(String));
    expect(seen).toContain('7');
  });

  it('still answers bad input with a 400 problem, and runs nothing', async () => {
    const response = await app.inject({ method: 'PUT', url: '/api/marks/seven/read' });
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(seen).not.toContain('seven');
  });

  it('is documented as 204 without content, and its answer fits the document', async () => {
    const document = generateOpenApi({ app, info: { title: 'Marks', version: '1.0.0' } });
    const operation = document.paths['/api/marks/{id}/read']?.put;
    expect(operation?.responses['204']).toEqual({
      description: 'No content',
      headers: {
        'Cache-Control': { description: 'Always `no-store`', schema: { type: 'string', const: 'no-store' } },
      },
    });
    expect(operation?.responses['200']).toBeUndefined();
    const response = await app.inject({ method: 'PUT', url: '/api/marks/8/read' });
    const check = createResponseValidator(document);
    expect(check('PUT', '/api/marks/8/read', 204, response.headers['content-type'], response.body)).toEqual(
      [],
    );
  });

  it('resolves to undefined in the typed client, over a socket', async () => {
    const served = createApp({ logger: false });
    served.mount([marks]);
    const url = await served.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
    try {
      const client = createClient<{ marks: typeof marks }>({ baseUrl: url, routes: routeManifest(served) });
      await expect(client.marks.markRead({ id: '9' })).resolves.toBeUndefined();
      expect(seen).toContain('9');
    } finally {
      await served.close();
    }
  });

  it('refuses an output at start-up: 204 has no body to carry it', () => {
    const withOutput = procedures('marks', {
      markRead: procedure()
        .rest({ method: 'PUT', path: '/marks/:id/read', status: 204 })
        .output(z.object({ ok: z.boolean() }))
        .mutation(() => ({ ok: true })),
    });
    expect(() => createApp({ logger: false }).mount([withOutput])).toThrow(ProceedConfigError);
    expect(() => createApp({ logger: false }).mount([withOutput])).toThrow(
      'marks.markRead answers 204 No Content, which has no body: remove its .output(), or answer 200',
    );
  });

  it('documents a fixed header once, in the case a step or plugin gives it; refuses one Proceed sets itself', () => {
    expect(() => procedure().headers({ etag: '"fixed"' })).toThrow(
      '.headers(): Proceed sets etag itself (docs/procedures.md, "Headers and cookies per request")',
    );
    expect(() => procedure().headers({ 'Content-Length': '3' })).toThrow(
      /Proceed sets content-length itself/,
    );
    expect(() => procedure().headers({ 'x-note': 'a\r\nb' })).toThrow(/x-note has a control character/);
    expect(() => procedure().headers({ 'x note': 'a' })).toThrow(/"x note" is not a header name/);
    expect(() => procedure().headers({ 'x-count': 3 as never })).toThrow(/x-count is text, not 3/);
    const tagged = procedures('tags', {
      getTag: procedure()
        .headers({ 'Cache-Control': 'no-store', 'x-custom-thing': '1' })
        .input(z.object({ id: z.string() }))
        .query(() => ({ id: 'x' })),
    });
    const served = createApp({ logger: false });
    served.mount([tagged]);
    const document = generateOpenApi({ app: served, info: { title: 'Tags', version: '1.0.0' } });
    const success = document.paths['/api/tags/{id}']?.get?.responses['200'];
    const headers = success !== undefined && 'headers' in success ? (success.headers ?? {}) : {};
    expect(Object.keys(headers).sort()).toEqual(['Cache-Control', 'ETag', 'X-Custom-Thing']);
  });

  it('refuses .versioned() at start-up, and documents no ETag or 304 on a GET that answers 204', () => {
    const versioned = procedures('marks', {
      markRead: procedure()
        .rest({ method: 'PUT', path: '/marks/:id/read', status: 204 })
        .versioned(() => 1)
        .mutation(() => undefined),
    });
    expect(() => createApp({ logger: false }).mount([versioned])).toThrow(
      'marks.markRead answers 204 No Content and is .versioned()',
    );
    const probes = procedures('probes', {
      checkProbe: procedure()
        .rest({ method: 'GET', path: '/probes/check', status: 204 })
        .query(() => undefined),
    });
    const served = createApp({ logger: false });
    served.mount([probes]);
    const document = generateOpenApi({ app: served, info: { title: 'Probes', version: '1.0.0' } });
    const operation = document.paths['/api/probes/check']?.get;
    expect(Object.keys(operation?.responses ?? {})).not.toContain('304');
    expect(operation?.responses['204']).toEqual({ description: 'No content' });
  });
});
