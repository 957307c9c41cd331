/**
 * Where an upload's large files wait while the handler runs (docs/uploads.md, "Memory and
 * disk"): one `proceed-upload-*` directory per request, made when the first file passes the
 * memory threshold and removed, with everything in it, when the request ends, whatever happened.
 * Needs `node:fs` (Node.js, Bun, Deno); on Cloudflare Workers files stay in memory.
 */
import type { WriteStream } from 'node:fs';
import { runtime } from './runtime.js';

/** An app's spools of requests still running, removed at shutdown if their requests never end. */
export class Spools {
  readonly #open = new Set<Spool>();

  create(): Spool {
    return new Spool(this.#open);
  }

  /** Removes the directories of every request still holding one (the app's close calls it). */
  async disposeAll(): Promise<void> {
    await Promise.all([...this.#open].map((spool) => spool.dispose()));
  }
}

/** Each spooled upload's file on disk, by the `File` the handler got: what {@link saveFile} links. */
const spooledPaths = new WeakMap<Blob, string>();

/** `node:fs` and its kin, loaded on the first spool (never on Workers, which have no disk). */
let loaded:
  | Promise<{
      mkdtemp: typeof import('node:fs/promises').mkdtemp;
      createWriteStream: typeof import('node:fs').createWriteStream;
      tmpdir: typeof import('node:os').tmpdir;
      join: typeof import('node:path').join;
    }>
  | undefined;

function fileSystem(): NonNullable<typeof loaded> {
  loaded ??= Promise.all([
    import('node:fs/promises'),
    import('node:fs'),
    import('node:os'),
    import('node:path'),
  ]).then(([promises, fs, os, path]) => ({
    mkdtemp: promises.mkdtemp,
    createWriteStream: fs.createWriteStream,
    tmpdir: os.tmpdir,
    join: path.join,
  }));
  return loaded;
}

/** One file being written to the spool. */
export interface SpooledWrite {
  write(chunk: Uint8Array): Promise<void>;
  /** Ends the file and hands it over as a `File` backed by the disk. */
  finish(name: string, type: string): Promise<File>;
}

export class Spool {
  #directory: Promise<string> | undefined;
  #disposed: Promise<void> | undefined;
  readonly #streams = new Set<WriteStream>();
  #count = 0;
  readonly #open: Set<Spool>;

  constructor(open: Set<Spool>) {
    this.#open = open;
  }

  /** Starts a file of its own in the request's directory (made on first use). */
  async create(): Promise<SpooledWrite> {
    if (this.#disposed !== undefined) throw new Error('The upload ended before its file was stored');
    const { mkdtemp, createWriteStream, tmpdir, join } = await fileSystem();
    // Disposed while the modules loaded: no directory may be made now, nothing would remove it.
    if (this.#disposed !== undefined) throw new Error('The upload ended before its file was stored');
    if (this.#directory === undefined) {
      this.#open.add(this);
      this.#directory = mkdtemp(join(tmpdir(), 'proceed-upload-'));
    }
    const directory = await this.#directory;
    if (this.#disposed !== undefined) throw new Error('The upload ended before its file was stored');
    const path = join(directory, String(++this.#count));
    const stream = createWriteStream(path, { flags: 'wx' });
    this.#streams.add(stream);
    // A failure surfaces through the next write or finish; never as an unhandled 'error'.
    let failure: Error | undefined;
    stream.on('error', (error) => {
      failure = error;
    });
    let size = 0;
    return {
      write: (chunk) => {
        if (failure !== undefined) return Promise.reject(failure);
        size += chunk.byteLength;
        if (stream.write(chunk)) return Promise.resolve();
        return new Promise<void>((resolve, reject) => {
          const drained = () => settle(undefined);
          const closed = () => settle(failure ?? new Error('The spooled file was closed'));
          const settle = (error: Error | undefined) => {
            stream.off('drain', drained);
            stream.off('close', closed);
            if (error !== undefined || failure !== undefined) reject(error ?? failure);
            else resolve();
          };
          stream.once('drain', drained);
          stream.once('close', closed);
        });
      },
      finish: async (name, type) => {
        await new Promise<void>((resolve, reject) => {
          stream.end((error?: Error | null) => (error ? reject(error) : resolve()));
        });
        this.#streams.delete(stream);
        if (failure !== undefined) throw failure;
        return diskFile(path, size, name, type);
      },
    };
  }

  /** Removes the directory and what is in it; safe to call more than once. */
  dispose(): Promise<void> {
    this.#disposed ??= this.#remove();
    return this.#disposed;
  }

  async #remove(): Promise<void> {
    for (const stream of this.#streams) stream.destroy();
    this.#streams.clear();
    const pending = this.#directory;
    if (pending === undefined) return;
    try {
      const directory = await pending.catch(() => undefined);
      if (directory === undefined) return;
      const { rm } = await import('node:fs/promises');
      // A write stream closes its descriptor asynchronously: retried while the directory is busy.
      await rm(directory, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
    } finally {
      this.#open.delete(this);
    }
  }
}

/** A `File` whose bytes stay on disk, as the runtime makes one; remembered for {@link saveFile}. */
async function diskFile(path: string, size: number, name: string, type: string): Promise<File> {
  const file = await runtime.diskFile(path, size, name, type);
  spooledPaths.set(file, path);
  return file;
}

/** The error codes of a link that the file system cannot make: another device, or no links at all. */
const cannotLink = new Set(['EXDEV', 'EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/**
 * Writes a file's bytes to `path`, which must not exist yet (`EEXIST` otherwise), without holding
 * them in memory (docs/uploads.md, "Storing a file without holding it"). An upload the handler got
 * whole, spooled on disk, is hard-linked there when `path` is on the same file system: no byte is
 * copied, and the `File` stays readable until the answer is sent. Anything else (a small upload
 * held in memory, another file system, any `Blob`) is streamed, a chunk written before the next is
 * read. A copy that fails midway is removed. Needs `node:fs` (Node.js, Bun, Deno).
 *
 * @example
 * await saveFile(input.scan, `/srv/scans/${id}`);
 */
export async function saveFile(file: Blob, path: string): Promise<void> {
  const { link, open, rm } = await import('node:fs/promises');
  const spooled = spooledPaths.get(file);
  if (spooled !== undefined) {
    try {
      await link(spooled, path);
      return;
    } catch (error) {
      if (!cannotLink.has((error as { code?: string }).code ?? '')) throw error;
    }
  }
  const handle = await open(path, 'wx');
  try {
    for await (const chunk of file.stream() as unknown as AsyncIterable<Uint8Array>)
      await handle.write(chunk);
    await handle.close();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(path, { force: true });
    throw error;
  }
}
