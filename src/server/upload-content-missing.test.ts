/**
 * Without the file-type package (an optional peer dependency), an app whose routes check uploads
 * by content refuses to start, naming the package; an app whose routes do not starts as ever.
 */
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ProceedConfigError } from '../core/errors.js';
import { procedure, procedures } from '../core/procedure.js';
import { createApp } from './create-app.js';

// As a missing package fails its import.
vi.mock('file-type/core', () => {
  throw Object.assign(new Error("Cannot find package 'file-type'"), { code: 'ERR_MODULE_NOT_FOUND' });
});

const photos = (checkContent: boolean) =>
  procedures('photos', {
    createPhoto: procedure()
      .input(z.object({ photo: z.file().mime(['image/png']) }))
      .uploads({ checkContent })
      .mutation(({ input }) => ({ size: input.photo.size })),
  });

describe('uploads checked by content without file-type', () => {
  it('refuse to start, naming the procedure and the package to install', async () => {
    const app = createApp({ logger: false }).mount([photos(true)]);
    const failure = await app
      .listen({ port: 0, host: '127.0.0.1', handleSignals: false })
      .catch((error) => error);
    expect(failure).toBeInstanceOf(ProceedConfigError);
    expect((failure as Error).message).toBe(
      'photos.createPhoto checks uploads by their content (checkContent), which needs the file-type package: npm install file-type@21 (docs/uploads.md)',
    );
    await app.close();
    const onFetch = createApp({ logger: false, uploads: { checkContent: true } }).mount([photos(true)]);
    await expect(onFetch.fetch(new Request('http://api.example/api/photos'))).rejects.toThrow(
      /npm install file-type@21/,
    );
    await onFetch.close();
  });

  it('leave an app whose routes do not check content to start without it', async () => {
    const app = createApp({ logger: false }).mount([photos(false)]);
    await app.ready();
    const form = new FormData();
    form.append('photo', new Blob(['not a picture'], { type: 'image/png' }), 'note.png');
    const answer = await app.fetch(
      new Request('http://api.example/api/photos', { method: 'POST', body: form }),
    );
    expect(answer.status).toBe(201);
    await app.close();
  });
});
