import { describe, expect, it } from 'vitest';
import { contentDisposition } from '../http/files.js';
import { answeredFile, dispositionName } from './files.js';

describe('dispositionName', () => {
  it("reads what the server's Content-Disposition writes, the UTF-8 name first", () => {
    for (const name of ['report.pdf', 'Rapport März.pdf', '報告 2026.csv', "it's (1) *draft*.txt"])
      expect(dispositionName(contentDisposition('attachment', name))).toBe(name);
  });

  it('reads the forms other servers send', () => {
    expect(dispositionName('attachment; filename=plain.txt')).toBe('plain.txt');
    expect(dispositionName('inline; FILENAME="a \\"quoted\\" name.txt"')).toBe('a "quoted" name.txt');
    expect(dispositionName('attachment; filename*=utf-8\'\'na%C3%AFve.txt; filename="naive.txt"')).toBe(
      'naïve.txt',
    );
  });

  it('falls back to the plain name when the extended one is no UTF-8 it can read', () => {
    expect(dispositionName('attachment; filename="fallback.txt"; filename*=UTF-8\'\'bad%E0%A4.txt')).toBe(
      'fallback.txt',
    );
    expect(dispositionName('attachment; filename="latin.txt"; filename*=iso-8859-1\'\'caf%E9.txt')).toBe(
      'latin.txt',
    );
  });

  it('keeps only the last segment of a name with folders, and names nothing where there is none', () => {
    expect(dispositionName('attachment; filename="../../etc/passwd"')).toBe('passwd');
    expect(dispositionName('attachment; filename="C:\\\\Windows\\\\win.ini"')).toBe('win.ini');
    expect(dispositionName('attachment; filename=".."')).toBeUndefined();
    expect(dispositionName('attachment')).toBeUndefined();
    expect(dispositionName(null)).toBeUndefined();
  });
});

describe('answeredFile', () => {
  it('makes a File of the bytes with the name and time the headers give, or none', async () => {
    const headers = new Headers({
      'content-disposition': 'attachment; filename="notes.txt"',
      'last-modified': 'Tue, 01 Dec 2026 10:00:00 GMT',
    });
    const file = answeredFile(new Blob(['hello'], { type: 'text/plain' }), headers);
    expect(file.name).toBe('notes.txt');
    expect(file.type).toBe('text/plain');
    expect(file.lastModified).toBe(Date.UTC(2026, 11, 1, 10));
    expect(await file.text()).toBe('hello');
    expect(answeredFile(new Blob(['x']), new Headers()).name).toBe('');
  });
});
