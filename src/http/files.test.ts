import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sendFile } from '../core/files.js';
import type { FileRequest } from './files.js';
import { byteRange, contentDisposition, fileTag, planFile } from './files.js';

const request = {
  method: 'GET',
  range: undefined,
  ifMatch: undefined,
  ifUnmodifiedSince: undefined,
  ifNoneMatch: undefined,
  ifModifiedSince: undefined,
  ifRange: undefined,
};

describe('byteRange', () => {
  it('reads the three forms of one range, clamped to the size', () => {
    expect(byteRange('bytes=0-9', 100)).toEqual({ start: 0, end: 9 });
    expect(byteRange('bytes=90-', 100)).toEqual({ start: 90, end: 99 });
    expect(byteRange('bytes=-5', 100)).toEqual({ start: 95, end: 99 });
    expect(byteRange('bytes=-500', 100)).toEqual({ start: 0, end: 99 });
    expect(byteRange('bytes=95-500', 100)).toEqual({ start: 95, end: 99 });
    expect(byteRange('BYTES = 1 - 2', 100)).toEqual({ start: 1, end: 2 });
  });

  it('ignores what it does not honour: several ranges, other units, nonsense, a backwards range', () => {
    for (const header of ['bytes=0-1,5-6', 'items=0-1', 'bytes=', 'bytes=-', 'bytes=a-b', 'bytes=9-1', '0-9'])
      expect(byteRange(header, 100)).toBeUndefined();
  });

  it('reads a header of blanks in time linear in its length (no backtracking)', () => {
    // Quadratic before: 15,000 blanks took 100 ms, these 200,000 would take tens of seconds.
    for (const header of [
      `bytes=${' '.repeat(200_000)}x`,
      `bytes=1${' '.repeat(200_000)}x`,
      ` ${'\t'.repeat(200_000)}`,
    ]) {
      const started = performance.now();
      expect(byteRange(header, 100)).toBeUndefined();
      expect(performance.now() - started).toBeLessThan(1_000);
    }
    expect(byteRange(` bytes=\t1 -\t2 `, 100)).toEqual({ start: 1, end: 2 });
  });

  it('refuses a range past the end, and an empty suffix, with 416 naming the size', () => {
    for (const header of ['bytes=100-', 'bytes=100-200', 'bytes=-0']) {
      expect(() => byteRange(header, 100)).toThrow(
        expect.objectContaining({ code: 'RANGE_NOT_SATISFIABLE' }),
      );
    }
    try {
      byteRange('bytes=100-', 100);
    } catch (error) {
      expect((error as { headers?: Record<string, string> }).headers).toEqual({
        'content-range': 'bytes */100',
      });
    }
  });

  it('always answers a range inside the file, or none', () => {
    fc.assert(
      fc.property(
        fc.nat(10_000),
        fc.option(fc.nat(20_000)),
        fc.option(fc.nat(20_000)),
        (size, first, last) => {
          const header = `bytes=${first ?? ''}-${last ?? ''}`;
          let range: ReturnType<typeof byteRange>;
          try {
            range = byteRange(header, size);
          } catch {
            // 416: only a start at or past the end, or an empty suffix.
            expect((first !== null && first >= size) || (first === null && last === 0)).toBe(true);
            return;
          }
          if (range === undefined) return;
          expect(range.start).toBeGreaterThanOrEqual(0);
          expect(range.end).toBeLessThan(size);
          expect(range.start).toBeLessThanOrEqual(range.end);
        },
      ),
    );
  });
});

describe('contentDisposition', () => {
  it('names ASCII files plainly and others with filename* too', () => {
    expect(contentDisposition('attachment', undefined)).toBe('attachment');
    expect(contentDisposition('inline', 'report.pdf')).toBe('inline; filename="report.pdf"');
    expect(contentDisposition('attachment', 'Rapport März.pdf')).toBe(
      `attachment; filename="Rapport Marz.pdf"; filename*=UTF-8''Rapport%20M%C3%A4rz.pdf`,
    );
    expect(contentDisposition('attachment', 'a"b\\\\c;d%.txt')).toBe(
      `attachment; filename="a_b__c_d_.txt"; filename*=UTF-8''a%22b%5C%5Cc%3Bd%25.txt`,
    );
    expect(contentDisposition('attachment', '報告.pdf')).toBe(
      `attachment; filename="__.pdf"; filename*=UTF-8''%E5%A0%B1%E5%91%8A.pdf`,
    );
  });

  it('sends a name without format characters: no override reorders it on the screen', () => {
    expect(contentDisposition('attachment', 'evil\u202Etxt.exe')).toBe('attachment; filename="eviltxt.exe"');
    expect(contentDisposition('attachment', '\u200Breport\uFEFF\u2066.pdf\u2028')).toBe(
      'attachment; filename="report.pdf"',
    );
    expect(contentDisposition('inline', '\u202E\u200D')).toBe('inline');
  });

  it('writes a header value that decodes back to the name, whatever the name', () => {
    fc.assert(
      fc.property(
        fc
          .string({ unit: 'grapheme', minLength: 1 })
          .filter((name) => !/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(name)),
        (name) => {
          const header = contentDisposition('attachment', name);
          expect(header).toMatch(/^[\x20-\x7e]+$/);
          const extended = /filename\*=UTF-8''([^;]+)$/.exec(header)?.[1];
          const plain = /filename="([^"]*)"/.exec(header)?.[1];
          expect(extended === undefined ? plain : decodeURIComponent(extended)).toBe(name);
        },
      ),
    );
  });
});

describe('planFile', () => {
  const hash = () => 'cafe';
  const bytes = new Uint8Array(10);

  it('tags by the handler’s tag, then size and date, then the bytes; none for a stream', () => {
    expect(fileTag(sendFile(bytes, { type: 'a/b', etag: 'mine' }), hash)).toBe('"mine"');
    expect(fileTag(sendFile(bytes, { type: 'a/b', lastModified: 4096_000 }), hash)).toBe(
      `"a-${(4096_000).toString(16)}"`,
    );
    expect(fileTag(sendFile(bytes, { type: 'a/b' }), hash)).toBe('"cafe"');
    expect(fileTag(sendFile(new ReadableStream(), { type: 'a/b' }), hash)).toBeUndefined();
  });

  it('answers 412 to If-Match without the file’s strong tag, and to If-Unmodified-Since before its date, ranges included', () => {
    const file = sendFile(bytes, { type: 'a/b', lastModified: Date.UTC(2026, 0, 2) });
    const tag = fileTag(file, hash) as string;
    const stale = (changes: Partial<FileRequest>) => {
      try {
        planFile(file, { ...request, ...changes }, tag, {});
        return false;
      } catch (error) {
        return (error as { code?: string }).code === 'PRECONDITION_FAILED';
      }
    };
    expect(stale({ ifMatch: '"nope"', range: 'bytes=0-1' })).toBe(true);
    expect(stale({ ifMatch: `W/${tag}` })).toBe(true);
    expect(
      stale({ ifUnmodifiedSince: new Date(Date.UTC(1970, 0, 1)).toUTCString(), range: 'bytes=0-1' }),
    ).toBe(true);
    // Met: the file's own tag (among others), `*`, a date at or after its own; a date that is
    // no HTTP date is ignored; If-Match wins over If-Unmodified-Since.
    expect(planFile(file, { ...request, ifMatch: `"x", ${tag}`, range: 'bytes=0-1' }, tag, {}).status).toBe(
      206,
    );
    expect(planFile(file, { ...request, ifMatch: '*' }, tag, {}).status).toBe(200);
    const same = new Date(Date.UTC(2026, 0, 2)).toUTCString();
    expect(planFile(file, { ...request, ifUnmodifiedSince: same }, tag, {}).status).toBe(200);
    expect(planFile(file, { ...request, ifUnmodifiedSince: 'long ago' }, tag, {}).status).toBe(200);
    const old = new Date(Date.UTC(1970, 0, 1)).toUTCString();
    expect(planFile(file, { ...request, ifMatch: tag, ifUnmodifiedSince: old }, tag, {}).status).toBe(200);
    // A write answering with a file has run by then: its preconditions are the route's, not the file's.
    expect(
      planFile(file, { ...request, method: 'PUT', ifMatch: '"nope"', ifUnmodifiedSince: old }, tag, {})
        .status,
    ).toBe(200);
  });

  it('answers 304 on a held tag only for reads, and If-None-Match before If-Modified-Since', () => {
    const file = sendFile(bytes, { type: 'a/b', lastModified: Date.UTC(2026, 0, 1) });
    const tag = fileTag(file, hash);
    const later = new Date(Date.UTC(2026, 0, 2)).toUTCString();
    expect(planFile(file, { ...request, ifNoneMatch: `W/${tag}` }, tag, {}).status).toBe(304);
    expect(planFile(file, { ...request, method: 'POST', ifNoneMatch: tag }, tag, {}).status).toBe(200);
    expect(planFile(file, { ...request, ifModifiedSince: later }, tag, {}).status).toBe(304);
    expect(
      planFile(file, { ...request, ifNoneMatch: '"other"', ifModifiedSince: later }, tag, {}).status,
    ).toBe(200);
    expect(planFile(file, { ...request, ifModifiedSince: 'yesterday-ish' }, tag, {}).status).toBe(200);
  });

  it('answers 304 to a held tag that holds a comma (it was cut in two at the comma, and never matched)', () => {
    const file = sendFile(bytes, { type: 'a/b', etag: 'v1,2' });
    const tag = fileTag(file, hash);
    expect(planFile(file, { ...request, ifNoneMatch: '"v1,2"' }, tag, {}).status).toBe(304);
    expect(planFile(file, { ...request, ifNoneMatch: '"old", W/"v1,2"' }, tag, {}).status).toBe(304);
    expect(planFile(file, { ...request, ifNoneMatch: '"v1"' }, tag, {}).status).toBe(200);
  });

  it('refuses the media types, names and tags no header can carry', () => {
    expect(() => sendFile(bytes, { type: 'pdf' })).toThrow('is not a media type');
    expect(() => sendFile(bytes)).toThrow('say the media type');
    expect(() => sendFile(bytes, { type: 'a/b', name: 'evil\r\nSet-Cookie: x=1' })).toThrow(
      'control characters',
    );
    expect(() => sendFile(bytes, { type: 'a/b', etag: 'a"b' })).toThrow('entity tag');
    expect(() => sendFile(new ReadableStream(), { type: 'a/b', size: -1 })).toThrow('whole number');
    expect(() => sendFile({} as never, { type: 'a/b' })).toThrow('bytes, a Blob or File, or a stream');
  });

  it('sends the user-content policy unless the answer or the route says otherwise', () => {
    const policyOf = (file: ReturnType<typeof sendFile>, base: Record<string, string> = {}) =>
      planFile(file, request, undefined, base).headers['content-security-policy'];
    expect(policyOf(sendFile(bytes, { type: 'a/b' }))).toBe("default-src 'none'; sandbox");
    expect(policyOf(sendFile(bytes, { type: 'a/b', contentSecurityPolicy: false }))).toBeUndefined();
    expect(policyOf(sendFile(bytes, { type: 'a/b', contentSecurityPolicy: "default-src 'self'" }))).toBe(
      "default-src 'self'",
    );
    expect(policyOf(sendFile(bytes, { type: 'a/b' }), { 'content-security-policy': "img-src 'self'" })).toBe(
      "img-src 'self'",
    );
    expect(() => sendFile(bytes, { type: 'a/b', contentSecurityPolicy: 'a\r\nb' })).toThrow(
      'contentSecurityPolicy',
    );
  });

  it('takes a File’s own type, name and date', () => {
    const file = sendFile(new File(['hi'], 'notes.txt', { type: 'text/plain', lastModified: 5_000 }));
    expect([file.type, file.name, file.lastModified, file.source.size]).toEqual([
      'text/plain',
      'notes.txt',
      5_000,
      2,
    ]);
  });
});
