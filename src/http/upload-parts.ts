/**
 * The pieces an upload is read with (src/http/uploads.ts): its refusals, the multipart parser
 * held to the route's limits, what a file part may be, and file names as handlers get them.
 */
import type { Writable } from 'node:stream';
import type busboy from 'busboy';
import { ProceedError } from '../core/errors.js';
import { isMediaType, visibleName } from '../core/files.js';
import type { FileField, UploadPlan } from '../core/uploads.js';

// Whether the connection stays open after one of these is the adapter's to decide, by one rule:
// the rest of the body is read on and dropped within bounds (src/http/lingering.ts).
export const uploadTooLarge = (detail: string) => new ProceedError('PAYLOAD_TOO_LARGE', detail);

export const unsupported = (detail: string) => new ProceedError('UNSUPPORTED_MEDIA_TYPE', detail);

export const unreadable = () => new ProceedError('BAD_REQUEST', 'The request body could not be read');

export const malformed = (reason: string) =>
  new ProceedError('BAD_REQUEST', `The form could not be read: ${reason}`);

/** A part's or a raw body's media type outside RFC 6838's grammar (or over its 255 characters). */
export const notAMediaType = (path: string) => {
  const message = 'The media type is not type/subtype as RFC 6838 writes it (at most 255 characters)';
  // A route whose whole input is the file has no field to name: its body's header is at fault.
  const where = path === '' ? 'Content-Type' : path;
  return new ProceedError('VALIDATION_FAILED', `${where}: ${message}`, { errors: [{ path, message }] });
};

export const sizeText = (bytes: number) =>
  bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0
    ? `${bytes / (1024 * 1024)} MiB`
    : bytes >= 1024 && bytes % 1024 === 0
      ? `${bytes / 1024} KiB`
      : `${bytes} bytes`;

/** Whether a field takes a part of this media type. */
export function takesType(field: FileField, type: string): boolean {
  return field.types === undefined || field.types.includes(type);
}

/** busboy, once the first form was read: an app that takes no form never loads it. */
let makeParser: typeof busboy | undefined;
let loadingParser: Promise<void> | undefined;

/**
 * Loads busboy for {@link formParser}: undefined once it is loaded, else the loading (one for
 * every form that waits, tried again after a failure).
 */
export function loadFormParser(): Promise<void> | undefined {
  if (makeParser !== undefined) return undefined;
  loadingParser ??= import('busboy').then(
    (module) => {
      makeParser = module.default;
    },
    (error: unknown) => {
      loadingParser = undefined;
      throw error;
    },
  );
  return loadingParser;
}

/** A multipart parser (busboy) held to the route's limits; {@link loadFormParser} first. */
export function formParser(contentType: string, limits: UploadPlan['limits']): busboy.Busboy {
  if (makeParser === undefined) throw new Error('formParser: busboy is not loaded yet (loadFormParser)');
  return makeParser({
    headers: { 'content-type': contentType },
    limits: {
      files: limits.files,
      fields: limits.fields,
      fieldSize: limits.fieldSize,
      parts: limits.files + limits.fields,
      fieldNameSize: 200,
    },
    // Browsers send file names as raw UTF-8.
    defParamCharset: 'utf8',
  });
}

/** Fails a form with a 413 once it has more files, fields or parts than the route takes. */
export function refuseOverLimits(
  parser: busboy.Busboy,
  limits: UploadPlan['limits'],
  fail: (error: ProceedError) => void,
): void {
  const over = (what: string, limit: number) => () =>
    fail(uploadTooLarge(`The form has more ${what} than this route takes (at most ${limit})`));
  parser.on('filesLimit', over('files', limits.files));
  parser.on('fieldsLimit', over('fields', limits.fields));
  parser.on('partsLimit', over('parts', limits.files + limits.fields));
}

/** Why a form's file part is refused by its type before a byte of it is read, or undefined. */
export function fileRefusal(name: string, type: string, field: FileField): ProceedError | undefined {
  if (!isMediaType(type)) return notAMediaType(name);
  if (!takesType(field, type))
    return unsupported(`The file "${name}" is ${type}; it takes ${(field.types ?? []).join(', ')}`);
  return undefined;
}

/** A form being read: what adds a value, what fails it (once), and whether it has failed. */
export interface FormState {
  add(name: string, value: unknown, multiple: boolean): void;
  fail(error: ProceedError): void;
  failed(): boolean;
}

/** Waits for a writable to take more, or to close (a failure destroys it): one listener each, removed after. */
export function drainedOrClosed(writable: Writable): Promise<void> {
  return new Promise((resolve) => {
    const settle = () => {
      writable.off('drain', settle);
      writable.off('close', settle);
      resolve();
    };
    writable.once('drain', settle);
    writable.once('close', settle);
  });
}

/**
 * The file with the media type the client sent: Bun appends `;charset=utf-8` to text types,
 * which a schema's `.mime(['text/plain'])` would then refuse.
 */
export function keepingType(file: File, type: string): File {
  if (file.type !== type) Object.defineProperty(file, 'type', { value: type });
  return file;
}

/**
 * The file name of a raw upload, from `Content-Disposition` (RFC 6266: `filename*` in UTF-8 wins
 * over `filename`); `upload` when it names none.
 */
export function fileNameOf(header: string | undefined): string {
  if (header === undefined) return 'upload';
  // Neither the charset nor the language runs past a blank, a `;` or a `=`: text two parts of the
  // pattern could both take (blanks, or `filename*=` again and again) made a header without its
  // second quote quadratic (16,000 blanks took 146 ms).
  const extended = /filename\*\s*=\s*([^'\s;=]*)'[^';]*'([^;]+)/i.exec(header);
  if (extended?.[2] !== undefined && (extended[1] ?? '').toLowerCase() === 'utf-8') {
    try {
      return cleanFileName(decodeURIComponent(extended[2].trim()));
    } catch {
      // A malformed escape: fall back to the plain name.
    }
  }
  const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/i.exec(header);
  return cleanFileName(plain?.[1]?.replace(/\\(.)/g, '$1') ?? plain?.[2] ?? '');
}

/**
 * A file name as the handler gets it, from a form part or a raw body alike: without the
 * directories a client may put before it, without control characters (NUL, CR, LF: a database
 * or a header would refuse them) or format characters (a right-to-left override shows
 * `evil\u202Etxt.exe` as `evilexe.txt`), and `upload` when nothing is left or only `.` or `..`.
 */
export function cleanFileName(name: string): string {
  const clean = visibleName(name);
  const base = clean.slice(Math.max(clean.lastIndexOf('/'), clean.lastIndexOf('\\')) + 1);
  return base === '' || base === '.' || base === '..' ? 'upload' : base;
}
