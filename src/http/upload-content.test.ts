/**
 * Uploads checked by content (src/http/upload-content.ts): the rule, fed chunk by chunk as a body
 * arrives, with the real file-type package.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { jpegBytes, pngBytes } from '../../test/fixtures/images.js';
import { ProceedError } from '../core/errors.js';
import type { FileField, UploadPlan } from '../core/uploads.js';
import { type ContentCheck, contentCheck, isText, uploadContentReady } from './upload-content.js';

const text = (value: string) => new TextEncoder().encode(value);

const field = (types: readonly string[] | undefined, name = 'photo'): FileField => ({
  name,
  multiple: false,
  types,
  declared: types,
  maxSize: undefined,
});

const plan = (types: readonly string[] | undefined, options: Partial<UploadPlan> = {}): UploadPlan => ({
  mode: 'form',
  fields: new Map([['photo', field(types)]]),
  target: undefined,
  limits: { fileSize: 1024, files: 1, fields: 1, fieldSize: 1024, total: 4096, memory: 1024 },
  checkContent: true,
  ...options,
});

const checkOf = (types: readonly string[], declared: string, mode: 'form' | 'raw' = 'form') =>
  contentCheck(plan(types, { mode }), field(types), declared) as ContentCheck;

/** Feeds the bytes in chunks of `size`, then ends: the refusal, or undefined when they pass. */
async function verdict(check: ContentCheck, bytes: Uint8Array, size = 64): Promise<ProceedError | undefined> {
  try {
    for (let at = 0; at < bytes.byteLength; at += size) await check.take(bytes.subarray(at, at + size));
    await check.end();
    return undefined;
  } catch (error) {
    if (error instanceof ProceedError) return error;
    throw error;
  }
}

beforeAll(() => uploadContentReady(['uploads.test']));

describe('contentCheck', () => {
  it('checks only a declared type with a signature, on a field with .mime(), when the route checks content', () => {
    expect(
      contentCheck(plan(['image/png'], { checkContent: false }), field(['image/png']), 'image/png'),
    ).toBe(undefined);
    expect(contentCheck(plan(undefined), field(undefined), 'image/png')).toBe(undefined);
    // No signature to compare: text, CSV, JSON, SVG, and aliases file-type does not name.
    for (const declared of ['text/plain', 'text/csv', 'application/json', 'image/svg+xml', 'image/jpg'])
      expect(contentCheck(plan([declared]), field([declared]), declared)).toBe(undefined);
    expect(checkOf(['image/png'], 'image/png')).toBeDefined();
  });

  it('passes a PNG declared image/png, a byte at a time or whole', async () => {
    expect(await verdict(checkOf(['image/png'], 'image/png'), pngBytes(), 1)).toBe(undefined);
    expect(await verdict(checkOf(['image/png'], 'image/png'), pngBytes(), 4096)).toBe(undefined);
  });

  it('refuses text declared image/png with 415, naming the field, the declared type and the content', async () => {
    const refusal = await verdict(checkOf(['image/png'], 'image/png'), text('just a note, not a picture\n'));
    expect(refusal?.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(refusal?.status).toBe(415);
    // The connection is the adapter's to keep or close (src/http/lingering.ts), not the refusal's.
    expect(refusal?.headers).toBeUndefined();
    expect(refusal?.message).toBe(
      'The file "photo" is declared image/png, but its content is text (text/plain); the field takes image/png',
    );
  });

  it('refuses a JPEG declared image/png, naming image/jpeg; a raw body is "the body"', async () => {
    const refusal = await verdict(checkOf(['image/png'], 'image/png', 'raw'), jpegBytes());
    expect(refusal?.message).toBe(
      'The body is declared image/png, but its content is image/jpeg; this route takes image/png',
    );
  });

  it('passes content recognised as any type the field takes: a JPEG declared image/png where both are taken', async () => {
    expect(await verdict(checkOf(['image/png', 'image/jpeg'], 'image/png'), jpegBytes())).toBe(undefined);
  });

  it('refuses empty content and bytes of no known type', async () => {
    expect((await verdict(checkOf(['image/png'], 'image/png'), new Uint8Array()))?.message).toContain(
      'its content is empty',
    );
    const binary = new Uint8Array(512).map((_, index) => (index * 7 + 3) % 256);
    expect((await verdict(checkOf(['image/png'], 'image/png'), binary))?.message).toContain(
      'its content is of no known type',
    );
  });

  it('passes text declared as a text type whose signature may be left out (XML without <?xml ?>), not binary', async () => {
    expect(await verdict(checkOf(['application/xml'], 'application/xml'), text('<note>hello</note>'))).toBe(
      undefined,
    );
    expect(
      await verdict(checkOf(['application/xml'], 'application/xml'), text('<?xml version="1.0"?><a/>')),
    ).toBe(undefined);
    expect((await verdict(checkOf(['application/xml'], 'application/xml'), pngBytes()))?.message).toContain(
      'its content is image/png',
    );
  });

  it('refuses at the first chunk of a large file, before the rest is taken', async () => {
    const check = checkOf(['image/png'], 'image/png');
    const chunk = text('a line of text\n'.repeat(4096));
    let taken = 0;
    const refusal = await (async () => {
      try {
        for (; taken < 100; taken += 1) await check.take(chunk);
      } catch (error) {
        return error as ProceedError;
      }
      return undefined;
    })();
    expect(refusal?.status).toBe(415);
    expect(taken).toBe(0);
  });

  it('settles when closed midway (a failure elsewhere): a PNG cut short is no PNG', async () => {
    const check = checkOf(['image/png'], 'image/png');
    await check.take(pngBytes().subarray(0, 16));
    check.close();
    await expect(check.end()).rejects.toThrow(/its content is of no known type/);
  });
});

describe('isText', () => {
  it('is UTF-8 without control characters but tab, line breaks and form feed; a sequence cut at the end counts', () => {
    expect(isText(text('plain\ttext\r\n\fand more'))).toBe(true);
    expect(isText(text('naïve café ✓'))).toBe(true);
    expect(isText(text('café').subarray(0, 4))).toBe(true);
    expect(isText(new Uint8Array([0x42, 0x4d, 0x00, 0x01]))).toBe(false);
    expect(isText(new Uint8Array([0x61, 0x1b, 0x62]))).toBe(false);
    expect(isText(new Uint8Array([0x61, 0xff, 0x62]))).toBe(false);
  });
});

describe('uploadContentReady', () => {
  it('loads nothing when no route checks content', async () => {
    await expect(uploadContentReady([])).resolves.toBe(undefined);
  });
});
