/**
 * File answers (docs/files.md): a procedure declared with `.output(download())` answers with the
 * bytes its handler hands to {@link sendFile} or {@link fileAt}, with their media type and name.
 * This module only describes the file and how to read it, whole or a range of it; the HTTP rules
 * (ranges, conditional requests, `Content-Disposition`) live in src/http/files.ts.
 */

/** What a file's bytes can come as. A Node.js `Readable` is an `AsyncIterable<Uint8Array>`. */
export type FileBody =
  | Uint8Array
  | ArrayBuffer
  | Blob
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array>;

export interface FileAnswerOptions {
  /** The media type (`application/pdf`); a `Blob` or `File` with a type of its own may leave it out. */
  readonly type?: string;
  /** The name the client saves it under (`Content-Disposition`); a `File` brings its own. */
  readonly name?: string;
  /** `attachment` (the default) asks the browser to save it; `inline` to show it. */
  readonly disposition?: 'attachment' | 'inline';
  /** The length in bytes of a stream, when known: sent as `Content-Length`. */
  readonly size?: number;
  /** When the content last changed: `Last-Modified`, and the default entity tag with the size. */
  readonly lastModified?: Date | number;
  /** An entity tag of your own (a content hash kept in storage), without quotes. */
  readonly etag?: string;
  /**
   * The answer's `Content-Security-Policy`: {@link userContentPolicy} by default, so that a file a
   * user uploaded and a browser opens runs nothing and reaches nothing; `false` sends none (a PDF
   * shown `inline`, which a sandboxed viewer refuses). A route's own header wins over both.
   */
  readonly contentSecurityPolicy?: string | false;
}

/** The default policy of a file answer: no script, no subresource, a sandboxed origin (docs/files.md). */
export const userContentPolicy = "default-src 'none'; sandbox";

/**
 * Characters a name is shown without: controls (C0, DEL, C1), format characters (Unicode category
 * Cf: the bidirectional overrides that make `evil\u202Etxt.exe` display as `evilexe.txt`,
 * zero-width characters, the byte-order mark) and the line and paragraph separators.
 */
const invisible = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/**
 * A name as it may be stored and shown: without control, format (bidirectional overrides,
 * zero-width characters) and separator characters. Applied to every uploaded file's name and to
 * every name a file answer sends (docs/uploads.md).
 *
 * @example
 * visibleName('evil\u202Etxt.exe') // 'eviltxt.exe'
 */
export function visibleName(name: string): string {
  return name.replace(invisible, '');
}

/**
 * A media type as RFC 6838 names one (`type/subtype`, each a restricted name of at most 127
 * characters), without parameters: what an upload's type must be (docs/uploads.md).
 */
const restrictedMediaType = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/i;

/** Whether `type` (without parameters) is a media type by RFC 6838's grammar. */
export function isMediaType(type: string): boolean {
  return restrictedMediaType.test(type);
}

/** A range of bytes, first and last included. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/** Where the bytes are read from, whole or (when the size is known and it can seek) a range. */
export interface ByteSource {
  readonly size: number | undefined;
  /** Whether `read` takes a range: bytes, a Blob and a file on disk can; a stream cannot. */
  readonly seekable: boolean;
  /** The bytes themselves, when they are in memory (their entity tag hashes them). */
  readonly bytes: Uint8Array | undefined;
  read(range?: ByteRange): Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;
  /**
   * The bytes (or a range) as a `Blob` that reads them when sent, where they can be one (a `Blob`,
   * a file on disk): for a runtime that sends a stream without its `Content-Length`.
   */
  readonly blob?: (range?: ByteRange) => Promise<Blob>;
  /** Lets go of bytes that will not be sent (HEAD, 304, a failure): a stream is cancelled. */
  discard(): void;
}

/** `type/subtype` and parameters, as a header carries them: no line breaks, nothing a header refuses. */
const mediaTypePattern =
  /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(?:[ \t]*;[ \t]*[A-Za-z0-9!#$&^_.+-]+=(?:[A-Za-z0-9!#$&^_.+-]+|"[\t\x20\x21\x23-\x7e\x80-\xff]*"))*$/;

/** Whether a string holds no lone surrogate (`String.prototype.isWellFormed`, ES2024). */
const wellFormed = (text: string) => (text as string & { isWellFormed(): boolean }).isWellFormed();

/** Whether a name holds a control character (C0 or DEL), which no header may carry. */
const hasControlCharacter = (name: string) =>
  [...name].some((char) => (char.codePointAt(0) ?? 0) < 0x20 || char === '\u007f');

/** What a procedure declared with `.output(download())` answers: a file's bytes and what they are. */
export class FileAnswer {
  readonly source: ByteSource;
  readonly type: string;
  readonly name: string | undefined;
  readonly disposition: 'attachment' | 'inline';
  /** Milliseconds since the epoch, whole seconds (what `Last-Modified` can say). */
  readonly lastModified: number | undefined;
  readonly etag: string | undefined;
  /** `false`: no policy is sent. */
  readonly contentSecurityPolicy: string | false;

  constructor(source: ByteSource, options: FileAnswerOptions & { type: string }) {
    if (!mediaTypePattern.test(options.type))
      throw new TypeError(
        `sendFile: "${options.type}" is not a media type (type/subtype, e.g. application/pdf)`,
      );
    if (
      options.name !== undefined &&
      (options.name === '' || hasControlCharacter(options.name) || !wellFormed(options.name))
    )
      throw new TypeError('sendFile: name must be a non-empty file name without control characters');
    if (options.etag !== undefined && !/^[!#-~\u0080-\u00ff]+$/.test(options.etag))
      throw new TypeError(
        'sendFile: etag holds characters an entity tag cannot (quotes, spaces, control characters)',
      );
    const policy = options.contentSecurityPolicy ?? userContentPolicy;
    if (policy !== false && (policy === '' || !/^[\x20-\x7e]+$/.test(policy)))
      throw new TypeError('sendFile: contentSecurityPolicy must be a non-empty header value, or false');
    const modified = options.lastModified === undefined ? undefined : Number(options.lastModified);
    if (modified !== undefined && !Number.isFinite(modified))
      throw new TypeError('sendFile: lastModified must be a valid date');
    this.source = source;
    this.type = options.type;
    this.name = options.name;
    this.disposition = options.disposition ?? 'attachment';
    this.lastModified = modified === undefined ? undefined : Math.floor(modified / 1000) * 1000;
    this.etag = options.etag;
    this.contentSecurityPolicy = policy;
  }
}

function checkedSize(size: number | undefined): number | undefined {
  if (size === undefined) return undefined;
  if (!Number.isSafeInteger(size) || size < 0)
    throw new TypeError(`sendFile: size must be a whole number of bytes (got ${size})`);
  return size;
}

function bytesSource(bytes: Uint8Array): ByteSource {
  return {
    size: bytes.byteLength,
    seekable: true,
    bytes,
    read: (range) => (range === undefined ? bytes : bytes.subarray(range.start, range.end + 1)),
    discard: () => undefined,
  };
}

function blobSource(blob: Blob): ByteSource {
  return {
    size: blob.size,
    seekable: true,
    bytes: undefined,
    read: (range) => (range === undefined ? blob : blob.slice(range.start, range.end + 1)).stream(),
    blob: async (range) => (range === undefined ? blob : blob.slice(range.start, range.end + 1)),
    discard: () => undefined,
  };
}

/** A stream is read once, whole: it cannot seek, so ranges are not offered for it. */
function streamSource(
  stream: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  size: number | undefined,
): ByteSource {
  let taken = false;
  return {
    size,
    seekable: false,
    bytes: undefined,
    read: () => {
      if (taken) throw new Error('sendFile: a stream can be sent once; hand each answer a new one');
      taken = true;
      return stream;
    },
    discard: () => {
      if (taken) return;
      taken = true;
      // A file's descriptor, an upstream's socket: closed, not left for the garbage collector.
      if (typeof ReadableStream === 'function' && stream instanceof ReadableStream)
        void stream.cancel().catch(() => undefined);
      else if (typeof (stream as { destroy?: unknown }).destroy === 'function')
        (stream as unknown as { destroy(): void }).destroy();
      else
        void Promise.resolve((stream as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]().return?.()).catch(
          () => undefined,
        );
    },
  };
}

/**
 * A file answer from bytes, a `Blob` or `File`, or a stream (web or Node.js), for a procedure
 * declared with `.output(download())` (docs/files.md).
 *
 * @example
 * return sendFile(pdfBytes, { type: 'application/pdf', name: 'Rapport März.pdf' });
 * return sendFile(uploadedFile); // a File: its own type, name and lastModified
 * return sendFile(createReadStream(path), { type: 'text/csv', name: 'export.csv', size });
 */
export function sendFile(body: FileBody, options: FileAnswerOptions = {}): FileAnswer {
  const ownType = typeof Blob === 'function' && body instanceof Blob ? body.type : '';
  const type = options.type ?? (ownType === '' ? undefined : ownType);
  if (type === undefined) throw new TypeError('sendFile: say the media type ({ type: "application/pdf" })');
  const isFile = typeof File === 'function' && body instanceof File;
  const named = {
    ...options,
    type,
    ...(options.name === undefined && isFile && body.name !== '' ? { name: body.name } : {}),
    ...(options.lastModified === undefined && isFile ? { lastModified: body.lastModified } : {}),
  };
  if (body instanceof Uint8Array) return new FileAnswer(bytesSource(body), named);
  if (body instanceof ArrayBuffer) return new FileAnswer(bytesSource(new Uint8Array(body)), named);
  if (typeof Blob === 'function' && body instanceof Blob) return new FileAnswer(blobSource(body), named);
  const stream = body as ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;
  const isStream =
    (typeof ReadableStream === 'function' && stream instanceof ReadableStream) ||
    typeof (stream as AsyncIterable<Uint8Array>)[Symbol.asyncIterator] === 'function';
  if (!isStream) throw new TypeError('sendFile: the body must be bytes, a Blob or File, or a stream');
  return new FileAnswer(streamSource(stream, checkedSize(options.size)), named);
}

/**
 * A file answer from a file on disk: its size and modification time are read now, and the bytes
 * (or the range a client asks for) when the answer is sent. Needs `node:fs` (Node.js, Bun, Deno;
 * not Cloudflare Workers).
 *
 * @example
 * return fileAt(join(uploads, row.storedName), { type: row.mediaType, name: row.name });
 */
export async function fileAt(
  path: string,
  options: FileAnswerOptions & { type: string },
): Promise<FileAnswer> {
  const { stat } = await import('node:fs/promises');
  const { createReadStream } = await import('node:fs');
  const found = await stat(path);
  if (!found.isFile()) throw new TypeError(`fileAt: ${path} is not a file`);
  const size = found.size;
  return new FileAnswer(
    {
      size,
      seekable: true,
      bytes: undefined,
      // Never past the size the headers announce: a file that grows meanwhile is sent as it was.
      read: (range = { start: 0, end: size - 1 }) =>
        size === 0 ? new Uint8Array(0) : createReadStream(path, { start: range.start, end: range.end }),
      blob: async (range = { start: 0, end: size - 1 }) => {
        const { openAsBlob } = await import('node:fs');
        // Never past the size announced, as read() does.
        return (await openAsBlob(path)).slice(range.start, range.end + 1);
      },
      discard: () => undefined,
    },
    {
      ...options,
      lastModified: options.lastModified ?? found.mtimeMs,
      // The modification time to the microsecond, and the inode: a rewrite of the same size within
      // a second still changes the tag.
      etag:
        options.etag ??
        `${size.toString(16)}-${Math.round(found.mtimeMs * 1000).toString(16)}-${found.ino.toString(16)}`,
    },
  );
}

/** The declaration behind `.output(download())`: what the route documents and the client expects. */
export interface DownloadOutput {
  readonly '~download': true;
  /** The media types the route may answer with (OpenAPI); empty: any. */
  readonly types: readonly string[];
}

/**
 * Declares a procedure that answers with a file (docs/files.md): its handler returns
 * {@link sendFile} or {@link fileAt}, OpenAPI documents a binary response, and the typed client
 * returns a `Blob`.
 *
 * @example
 * procedure().input(z.object({ id: z.string() })).output(download({ types: ['application/pdf'] }))
 */
export function download(options: { types?: readonly string[] } = {}): DownloadOutput {
  const types = options.types ?? [];
  for (const type of types)
    if (!mediaTypePattern.test(type)) throw new TypeError(`download: "${type}" is not a media type`);
  return Object.freeze({ '~download': true, types: Object.freeze([...types]) });
}

export function isDownloadOutput(value: unknown): value is DownloadOutput {
  return (
    typeof value === 'object' && value !== null && (value as { '~download'?: unknown })['~download'] === true
  );
}
