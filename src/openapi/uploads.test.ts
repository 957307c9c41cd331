/** How routes that take files are documented (docs/uploads.md, "OpenAPI"). */
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { procedure, procedures } from '../core/procedure.js';
import { generateOpenApi } from './generate.js';
import type { OpenApiOperation } from './types.js';

const documents = procedures('documents', {
  createDocument: procedure()
    .input(
      z.object({
        title: z.string(),
        pages: z.number().int().optional(),
        scan: z.file().mime(['application/pdf']).max(5000).describe('The signed scan'),
        photos: z.array(z.file().mime(['image/png', 'image/jpeg'])).optional(),
      }),
    )
    .mutation(() => ({ id: '1' })),
  replaceScan: procedure()
    .input(z.file().mime(['application/pdf', 'image/png']))
    .rest({ method: 'PUT', path: '/documents/scan' })
    .mutation(() => ({ id: '1' })),
  updateDocument: procedure()
    .input(z.object({ id: z.string(), data: z.file() }))
    .mutation(() => ({ id: '1' })),
});

const document = generateOpenApi({
  mounts: [{ prefix: '/api', collections: [documents] }],
  info: { title: 'Documents', version: '1.0.0' },
});

const operation = (path: string, method: 'post' | 'put'): OpenApiOperation => {
  const found = document.paths[path]?.[method];
  if (found === undefined) throw new Error(`${method} ${path} is not documented`);
  return found;
};

describe('routes that take files, in OpenAPI', () => {
  it('documents a form: binary file fields (a picker in Swagger UI), their types and sizes, the text fields as declared', () => {
    const body = operation('/api/documents', 'post').requestBody;
    expect(Object.keys(body?.content ?? {})).toEqual(['multipart/form-data']);
    const media = body?.content['multipart/form-data'];
    expect(media?.schema).toEqual({
      type: 'object',
      properties: {
        title: { type: 'string' },
        pages: { type: 'integer', format: 'int64', minimum: expect.any(Number), maximum: expect.any(Number) },
        scan: {
          type: 'string',
          format: 'binary',
          contentMediaType: 'application/pdf',
          maxLength: 5000,
          description: 'The signed scan. At most 5000 bytes.',
        },
        photos: {
          type: 'array',
          items: { type: 'string', format: 'binary', description: 'One of image/png, image/jpeg.' },
        },
      },
      required: ['title', 'scan'],
      // A part the input does not name is refused.
      additionalProperties: false,
    });
    expect(media?.encoding).toEqual({ photos: { contentType: 'image/png, image/jpeg' } });
  });

  it('documents a raw body once per media type it takes, and an update whose data is a file', () => {
    const raw = operation('/api/documents/scan', 'put').requestBody;
    expect(Object.keys(raw?.content ?? {})).toEqual(['application/pdf', 'image/png']);
    expect(raw?.content['image/png']?.schema).toEqual({ type: 'string', format: 'binary' });
    const update = operation('/api/documents/{id}', 'put').requestBody;
    expect(update?.content).toEqual({
      'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
    });
  });

  it('documents 413 and 415 for them, and stays a valid document', async () => {
    const responses = operation('/api/documents', 'post').responses;
    expect(Object.keys(responses)).toEqual(expect.arrayContaining(['413', '415']));
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
  });
});

describe('the Location of a nested create', () => {
  it('names the path the record is read under', () => {
    const notes = procedures('notes', {
      createFile: procedure()
        .rest({ method: 'POST', path: '/notes/:id/files' })
        .input(z.object({ id: z.string(), file: z.file() }))
        .mutation(() => ({ id: 'f1' })),
      getFile: procedure()
        .rest({ method: 'GET', path: '/notes/:id/files/:fileId' })
        .query(() => null),
    });
    const nested = generateOpenApi({
      mounts: [{ prefix: '/api', collections: [notes] }],
      info: { title: 'N', version: '1' },
    });
    const created = nested.paths['/api/notes/{id}/files']?.post?.responses['201'];
    expect(
      created !== undefined && 'headers' in created ? created.headers?.Location : undefined,
    ).toMatchObject({
      description: expect.stringContaining(
        "Where the new record lives: `/api/notes/{id}/files/{the new record's id}`",
      ),
    });
  });
});
