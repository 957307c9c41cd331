/**
 * Upload bodies, for every adapter (docs/uploads.md): what is refused before anything runs (the
 * media type, a declared length over the limit), and the reading itself, a form through busboy or
 * a raw body as one file, with each limit checked as the bytes arrive (and, with `checkContent`,
 * each file's first bytes: src/http/upload-content.ts). Files above the memory threshold go to
 * the request's spool (src/http/spool.ts).
 */
import type busboy from 'busboy';
import { ProceedError, ValidationError } from '../core/errors.js';
import { isMediaType } from '../core/files.js';
import { UnavailableError } from '../core/unavailable.js';
import { DeferredBody, type FileField, type UploadPlan } from '../core/uploads.js';
import { codedBodyRefusal } from './fetch-body.js';
import { mediaTypeOf } from './json.js';
import type { Spool, SpooledWrite, Spools } from './spool.js';
import { contentCheck } from './upload-content.js';
import {
  cleanFileName,
  drainedOrClosed,
  type FormState,
  fileNameOf,
  fileRefusal,
  formParser,
  keepingType,
  loadFormParser,
  malformed,
  notAMediaType,
  refuseOverLimits,
  sizeText,
  takesType,
  unreadable,
  unsupported,
  uploadTooLarge,
} from './upload-parts.js';

/**
 * The server's own storage failed under an upload (no file descriptor left, a full disk): a 503
 * whose cause is logged, not the client's 400 "could not be read" (docs/uploads.md, "Limits").
 */
const notStored = (error: unknown) =>
  error instanceof ProceedError
    ? error
    : new UnavailableError(error, 'The server could not store the upload now; retry shortly');

type Headers = Readonly<Record<string, string | string[] | undefined>>;

const oneHeader = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/**
 * What is refused before the route runs anything (no context, no guard, no byte read): a body
 * of the wrong media type (415) and one whose `Content-Length` is over the route's total (413).
 * Both close the connection, so the body is never read.
 */
export function uploadRefusal(plan: UploadPlan, headers: Headers): ProceedError | undefined {
  const coded = codedBodyRefusal(headers['content-encoding']);
  if (coded !== undefined) return coded;
  const type = mediaTypeOf(headers['content-type']);
  if (plan.mode === 'form') {
    if (type !== 'multipart/form-data')
      return unsupported(
        type === ''
          ? 'This route takes multipart/form-data: the request named no media type'
          : `This route takes multipart/form-data, not ${type}`,
      );
  } else {
    const [name, field] = plan.fields.entries().next().value as [string, FileField];
    if (type !== '' && !isMediaType(type)) return notAMediaType(name);
    if (!takesType(field, type === '' ? 'application/octet-stream' : type))
      return unsupported(
        type === ''
          ? `This route takes a file of type ${(field.types ?? []).join(', ')}: the part named no media type`
          : `This route takes a file of type ${(field.types ?? []).join(', ')}, not ${type}`,
      );
  }
  const length = Number(oneHeader(headers['content-length']) ?? Number.NaN);
  if (length > plan.limits.total)
    return uploadTooLarge(`The body is ${length} bytes; this route takes at most ${bodyLimitText(plan)}`);
  return undefined;
}

/**
 * A route's body limit as a refusal states it: a form's total with its largest file beside it,
 * so that a file over its field's own limit is not answered with a larger number than that limit.
 */
function bodyLimitText(plan: UploadPlan): string {
  const { total, fileSize } = plan.limits;
  if (plan.mode === 'raw') return sizeText(total);
  const largest = Math.max(
    ...[...plan.fields.values()].map((field) => Math.min(fileSize, field.maxSize ?? fileSize)),
  );
  return `${sizeText(total)} in all, a file at most ${sizeText(largest)}`;
}

/**
 * The bytes of a body, as the adapter hands them over; `cancel` stops reading (a refusal
 * midway), settling once the request may be answered.
 */
export interface BodySource {
  readonly chunks: AsyncIterable<Uint8Array>;
  /**
   * Whether, once refused, the rest of the body is read (and dropped) rather than left: the
   * connection may then stay open. Otherwise the answer closes it.
   */
  readonly readsRest: boolean;
  cancel(): Promise<void>;
}

/**
 * One request's upload body: read when the call reaches its input, disposed of (its spooled
 * files removed) by the adapter once the answer is sent or the client leaves.
 */
export class UploadBody extends DeferredBody {
  readonly #plan: UploadPlan;
  readonly #headers: Headers;
  readonly #source: BodySource;
  readonly #spool: Spool | undefined;
  #reading: Promise<unknown> | undefined;
  #cancelling: Promise<void> | undefined;
  #disposed = false;

  /** `spools`: where files past the memory threshold go; undefined keeps them in memory (Workers). */
  constructor(plan: UploadPlan, headers: Headers, source: BodySource, spools: Spools | undefined) {
    super();
    this.#plan = plan;
    this.#headers = headers;
    this.#source = source;
    this.#spool = spools?.create();
  }

  get started(): boolean {
    return this.#reading !== undefined;
  }

  /** Whether a refusal leaves the connection open (the source reads the rest of the body). */
  get readsRest(): boolean {
    return this.#source.readsRest;
  }

  read(): Promise<unknown> {
    this.#reading ??= (this.#plan.mode === 'form' ? this.#readForm() : this.#readRaw()).catch(
      async (error: unknown) => {
        // A refusal is answered once the source lets it be (webBodySource, on Workers).
        await this.#cancel();
        throw error;
      },
    );
    return this.#reading;
  }

  #cancel(): Promise<void> {
    this.#cancelling ??= this.#source.cancel().catch(() => undefined);
    return this.#cancelling;
  }

  /** Stops reading and removes what was spooled; the files handed to the handler go with it. */
  async dispose(): Promise<void> {
    if (!this.#disposed) {
      this.#disposed = true;
      if (this.#reading === undefined) await this.#cancel();
    }
    await this.#spool?.dispose();
  }

  /** Holds one file's bytes: in memory up to the threshold, then in the spool. */
  #part(): { write(chunk: Uint8Array): Promise<void>; finish(name: string, type: string): Promise<File> } {
    const memory = this.#plan.limits.memory;
    const spool = this.#spool;
    let chunks: Uint8Array[] = [];
    let size = 0;
    let disk: SpooledWrite | undefined;
    return {
      write: async (chunk) => {
        size += chunk.byteLength;
        try {
          if (disk !== undefined) return await disk.write(chunk);
          // Copied: a runtime may reuse the buffer of a chunk it handed over.
          chunks.push(chunk.slice());
          if (spool === undefined || size <= memory) return;
          disk = await spool.create();
          const held = chunks;
          chunks = [];
          for (const each of held) await disk.write(each);
        } catch (error) {
          throw notStored(error);
        }
      },
      finish: async (name, type) => {
        try {
          return keepingType(
            disk !== undefined
              ? await disk.finish(name, type)
              : new File(chunks as BlobPart[], name, { type }),
            type,
          );
        } catch (error) {
          throw notStored(error);
        }
      },
    };
  }

  async #readRaw(): Promise<File> {
    const field = this.#plan.fields.values().next().value as FileField;
    // The whole body is the file: `total` bounds it as much as `fileSize` does.
    const limit = Math.min(
      this.#plan.limits.fileSize,
      this.#plan.limits.total,
      field.maxSize ?? Number.POSITIVE_INFINITY,
    );
    const part = this.#part();
    const type = mediaTypeOf(this.#headers['content-type']) || 'application/octet-stream';
    // With checkContent, the first bytes must bear the type's signature (src/http/upload-content.ts).
    const check = contentCheck(this.#plan, field, type);
    let size = 0;
    try {
      for await (const chunk of this.#source.chunks) {
        size += chunk.byteLength;
        if (size > limit)
          throw uploadTooLarge(`The file is larger than this route takes (at most ${sizeText(limit)})`);
        if (check !== undefined) await check.take(chunk);
        await part.write(chunk);
      }
      await check?.end();
    } catch (error) {
      check?.close();
      void this.#cancel();
      throw error instanceof ProceedError ? error : unreadable();
    }
    return part.finish(fileNameOf(oneHeader(this.#headers['content-disposition'])), type);
  }

  #readForm(): Promise<Record<string, unknown>> {
    // The body waits in its stream meanwhile, as it does for a slow handler.
    const loading = loadFormParser();
    if (loading !== undefined)
      return loading.then(
        () => this.#readForm(),
        (error: unknown) => {
          void this.#cancel();
          throw error;
        },
      );
    const { limits } = this.#plan;
    const contentType = oneHeader(this.#headers['content-type']) ?? '';
    let parser: busboy.Busboy;
    try {
      parser = formParser(contentType, limits);
    } catch (error) {
      void this.#cancel();
      return Promise.reject(malformed((error as Error).message));
    }
    // Null prototype: a part named __proto__ is a key like any other, refused below.
    const values: Record<string, unknown> = Object.create(null);
    const parts: Promise<void>[] = [];
    let failure: ProceedError | undefined;
    let failed: (error: ProceedError) => void = () => undefined;
    const failing = new Promise<never>((_resolve, reject) => {
      failed = reject;
    });
    failing.catch(() => undefined);
    const fail = (error: ProceedError) => {
      if (failure !== undefined) return;
      failure = error;
      failed(error);
      void this.#cancel();
      parser.destroy(error);
    };
    const add = (name: string, value: unknown, multiple: boolean) => {
      if (name === '__proto__' || name === 'constructor' || name === 'prototype')
        return fail(
          new ValidationError([{ path: name, message: `The part name "${name}" is not accepted` }]),
        );
      const before = values[name];
      if (before === undefined) values[name] = value;
      else if (!multiple && value instanceof File)
        fail(new ValidationError([{ path: name, message: 'Takes one file; the form sent more' }]));
      else values[name] = Array.isArray(before) ? [...before, value] : [before, value];
    };
    const form: FormState = { add, fail, failed: () => failure !== undefined };
    this.#takeParts(parser, form, parts);
    refuseOverLimits(parser, limits, fail);
    const parsed = new Promise<void>((resolve) => {
      parser.on('close', resolve);
      parser.on('error', (error: Error) =>
        fail(error instanceof ProceedError ? error : malformed(error.message.replace(/^Multipart: /, ''))),
      );
    });
    return Promise.race([
      (async () => {
        await this.#pump(parser, limits.total, bodyLimitText(this.#plan), form);
        await parsed;
        await Promise.all(parts);
        if (failure !== undefined) throw failure;
        return { ...values };
      })(),
      failing,
    ]);
  }

  /** The form's parts as busboy reads them: fields added, files checked and received. */
  #takeParts(parser: busboy.Busboy, form: FormState, parts: Promise<void>[]): void {
    const { limits, fields } = this.#plan;
    const { add, fail } = form;
    // busboy hands on a part whose Content-Disposition names no field, its name undefined.
    const unnamed = () => malformed('a part names no field (Content-Disposition: form-data; name="…")');
    parser.on('field', (name, value, info) => {
      if (typeof name !== 'string' || name === '') return fail(unnamed());
      if (info.valueTruncated)
        return fail(uploadTooLarge(`The field "${name}" is larger than ${sizeText(limits.fieldSize)}`));
      if (fields.has(name))
        return fail(new ValidationError([{ path: name, message: 'Expected a file; the form sent text' }]));
      add(name, value, true);
    });
    parser.on('file', (name, stream, info) => {
      const field = fields.get(name);
      const type = info.mimeType.toLowerCase();
      // Destroyed with the form's failure, which is answered; never an unhandled 'error'.
      stream.on('error', () => undefined);
      if (typeof name !== 'string' || name === '') {
        stream.resume();
        return fail(unnamed());
      }
      if (field === undefined) {
        stream.resume();
        return fail(new ValidationError([{ path: name, message: 'This field takes no file' }]));
      }
      const refusal = fileRefusal(name, type, field);
      if (refusal !== undefined) {
        stream.resume();
        return fail(refusal);
      }
      const limit = Math.min(limits.fileSize, field.maxSize ?? Number.POSITIVE_INFINITY);
      parts.push(this.#receiveFile(stream, name, info.filename ?? '', type, field, limit, form));
    });
  }

  /** One file of a form, checked and spooled as it arrives, then added to the form's values. */
  async #receiveFile(
    stream: AsyncIterable<Uint8Array>,
    name: string,
    fileName: string,
    type: string,
    field: FileField,
    limit: number,
    form: FormState,
  ): Promise<void> {
    const part = this.#part();
    const check = contentCheck(this.#plan, field, type);
    let size = 0;
    try {
      for await (const chunk of stream) {
        size += chunk.byteLength;
        if (size > limit)
          throw uploadTooLarge(
            `The file "${name}" is larger than this route takes (at most ${sizeText(limit)})`,
          );
        if (check !== undefined) await check.take(chunk);
        await part.write(chunk);
      }
      await check?.end();
      if (form.failed()) return;
      form.add(name, await part.finish(cleanFileName(fileName), type), field.multiple);
    } catch (error) {
      check?.close();
      form.fail(error instanceof ProceedError ? error : unreadable());
    }
  }

  /** Feeds the body to the form's parser, refusing it past `total` bytes. */
  async #pump(parser: busboy.Busboy, total: number, limitText: string, form: FormState): Promise<void> {
    let received = 0;
    try {
      for await (const chunk of this.#source.chunks) {
        if (form.failed()) return;
        received += chunk.byteLength;
        if (received > total)
          return form.fail(uploadTooLarge(`The body is larger than this route takes (at most ${limitText})`));
        if (!parser.write(chunk)) await drainedOrClosed(parser);
      }
    } catch (error) {
      return form.fail(error instanceof ProceedError ? error : unreadable());
    }
    parser.end();
  }
}
