/**
 * Uploads checked by their content (docs/uploads.md, "Checked by content"): with `checkContent`,
 * a file whose declared media type has a signature that the `file-type` package knows must hold
 * the signature of a type its field's `.mime()` lists. file-type is an optional peer dependency,
 * loaded (its `core` entry: Web streams only, no node:fs, so Workers too) at start-up by an app
 * with such a route. The bytes reach it as they arrive, so a file is refused at its first
 * chunks, before it is read or stored whole.
 */
import { ProceedConfigError, ProceedError } from '../core/errors.js';
import type { FileField, UploadPlan } from '../core/uploads.js';

/** What Proceed uses of file-type. */
interface FileType {
  fileTypeFromStream(stream: ReadableStream<Uint8Array>): Promise<{ readonly mime: string } | undefined>;
  readonly supportedMimeTypes: ReadonlySet<string>;
}

let fileType: FileType | undefined;

/**
 * Loads file-type for the routes that check content (`owners`, as `collection.name`), or refuses
 * to start, naming the package to install. Nothing is loaded when no route checks content.
 */
export async function uploadContentReady(owners: readonly string[]): Promise<void> {
  if (fileType !== undefined || owners.length === 0) return;
  try {
    // Inside try: a bundler (esbuild, wrangler) leaves a missing package's import to run time.
    fileType = (await import('file-type/core')) as unknown as FileType;
  } catch (error) {
    throw new ProceedConfigError(
      `${owners.join(', ')} ${owners.length === 1 ? 'checks' : 'check'} uploads by their content (checkContent), which needs the file-type package: npm install file-type@21 (docs/uploads.md)`,
      { cause: error },
    );
  }
}

/** How many first bytes are kept to tell text from binary, for the refusal's wording. */
const sampleSize = 4100;

/**
 * The check of one file's bytes against its field, or undefined when there is none: the route
 * does not check content, the field takes any type, or its declared `type` has no signature that
 * file-type knows (text/plain, text/csv, application/json, image/svg+xml: nothing to compare).
 */
export function contentCheck(plan: UploadPlan, field: FileField, type: string): ContentCheck | undefined {
  if (!plan.checkContent || field.types === undefined) return undefined;
  if (fileType === undefined) throw new Error('contentCheck called before uploadContentReady() resolved');
  if (!fileType.supportedMimeTypes.has(type)) return undefined;
  const what = plan.mode === 'raw' ? 'The body' : `The file "${field.name}"`;
  const takes = `${plan.mode === 'raw' ? 'this route' : 'the field'} takes ${field.types.join(', ')}`;
  return new ContentCheck(fileType, type, field.types, (content) =>
    unsupported(`${what} is declared ${type}, but its content is ${content}; ${takes}`),
  );
}

// The rest of the body is read on and dropped within bounds (src/http/lingering.ts).
const unsupported = (detail: string) => new ProceedError('UNSUPPORTED_MEDIA_TYPE', detail);

/**
 * Hands a file's chunks to file-type one at a time, as it asks for them, until it has recognised
 * the content (or not): each `take` waits for the detector, so no chunk queues up, and once the
 * verdict is in, a refusal is thrown by the next `take` (or by `end`), before more is stored.
 */
export class ContentCheck {
  readonly #takes: readonly string[];
  /** A declared text type (text/*, application/xml: `<?xml …?>` may be left out) passes as text. */
  readonly #textual: boolean;
  readonly #refusal: (content: string) => ProceedError;
  readonly #sample = new Uint8Array(sampleSize);
  #sampled = 0;
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  /** Settles the wait of the last `take`: file-type asked for more, or decided. */
  #asked: (() => void) | undefined;
  #closed = false;
  /** undefined while undecided; null when the content passes. */
  #verdict: ProceedError | null | undefined;
  readonly #decided: Promise<void>;

  constructor(
    detector: FileType,
    type: string,
    takes: readonly string[],
    refusal: (content: string) => ProceedError,
  ) {
    this.#takes = takes;
    this.#textual = type.startsWith('text/') || type === 'application/xml';
    this.#refusal = refusal;
    const stream = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
        },
        pull: () => this.#asked?.(),
        cancel: () => {
          this.#closed = true;
        },
      },
      // Nothing queued ahead: `pull` means file-type is waiting for the next chunk.
      { highWaterMark: 0 },
    );
    // A detector that fails on malformed bytes has recognised nothing.
    this.#decided = detector
      .fileTypeFromStream(stream)
      .catch(() => undefined)
      .then((found) => {
        this.#verdict = this.#judge(found?.mime) ?? null;
        this.#asked?.();
      });
  }

  /** Gives file-type the chunk, waits until it asks for more or decides; throws the refusal. */
  async take(chunk: Uint8Array): Promise<void> {
    if (this.#verdict === undefined && !this.#closed) {
      if (this.#sampled < sampleSize) {
        const kept = chunk.subarray(0, sampleSize - this.#sampled);
        this.#sample.set(kept, this.#sampled);
        this.#sampled += kept.byteLength;
      }
      const asked = new Promise<void>((resolve) => {
        this.#asked = resolve;
      });
      // Copied: the runtime may reuse the chunk's buffer, and file-type keeps what it has not read.
      this.#controller?.enqueue(chunk.slice());
      await asked;
    }
    if (this.#verdict) throw this.#verdict;
  }

  /** The file has ended: waits for the verdict; throws the refusal. */
  async end(): Promise<void> {
    this.close();
    await this.#decided;
    if (this.#verdict) throw this.#verdict;
  }

  /** No more bytes (the end, or a failure elsewhere): file-type finishes with what it has. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#controller?.close();
  }

  #judge(found: string | undefined): ProceedError | undefined {
    if (found !== undefined && this.#takes.includes(found)) return undefined;
    const sample = this.#sample.subarray(0, this.#sampled);
    const text = isText(sample);
    if (found === undefined && text && this.#textual) return undefined;
    return this.#refusal(
      found ?? (sample.byteLength === 0 ? 'empty' : text ? 'text (text/plain)' : 'of no known type'),
    );
  }
}

/**
 * Whether bytes read as text: UTF-8 (a sequence cut at the end allowed) without control
 * characters other than tab, line feed, vertical tab, form feed and carriage return.
 */
export function isText(bytes: Uint8Array): boolean {
  for (const byte of bytes) if (byte === 0x7f || (byte < 0x20 && (byte < 0x09 || byte > 0x0d))) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true });
    return true;
  } catch {
    return false;
  }
}
