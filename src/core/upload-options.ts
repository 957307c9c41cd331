/** The limits of uploads and their check, shared by `.uploads()` and `createApp({ uploads })` (docs/uploads.md). */
import { ProceedConfigError } from './errors.js';
import { closestName } from './options.js';

/** How much an upload may hold. Sizes are bytes. */
export interface UploadLimits {
  /** The largest file (a schema's `.max()` lowers it for its field). Default 10 MiB. */
  readonly fileSize: number;
  /** File parts in one form. Default 10. */
  readonly files: number;
  /** Text parts in one form. Default 100. */
  readonly fields: number;
  /** The largest text part. Default 64 KiB. */
  readonly fieldSize: number;
  /** The whole body. Default `fileSize × files` + 1 MiB for a form, `fileSize` for a raw file. */
  readonly total: number;
  /** A file larger than this is written to a temporary file instead of memory. Default 256 KiB. */
  readonly memory: number;
}

/** What `.uploads()` and `createApp({ uploads })` take: any of the limits, and `checkContent`. */
export interface UploadOptions extends Partial<UploadLimits> {
  /**
   * Checks each file's first bytes against its field's `.mime()` with the `file-type` package
   * (an optional peer dependency: install it), not only the media type the client declared.
   * Default false (docs/uploads.md, "Checked by content").
   */
  readonly checkContent?: boolean;
}

export const MiB = 1024 * 1024;

export const defaultUploadLimits = {
  fileSize: 10 * MiB,
  files: 10,
  fields: 100,
  fieldSize: 64 * 1024,
  memory: 256 * 1024,
} as const;

const limitNames = ['fileSize', 'files', 'fields', 'fieldSize', 'total', 'memory'] as const;
const optionNames = [...limitNames, 'checkContent'];

/** ` (did you mean "fileSize"?)`, as every other option check says it. */
function nearest(key: string): string {
  const near = closestName(key, optionNames);
  return near === undefined ? '' : ` (did you mean "${near}"?)`;
}

/** Refuses what is no limit (a typo, a negative or fractional count), naming where it was given. */
export function checkUploadOptions(where: string, options: unknown): UploadOptions {
  if (typeof options !== 'object' || options === null)
    throw new ProceedConfigError(`${where} takes an object of limits (docs/uploads.md)`);
  for (const [key, value] of Object.entries(options)) {
    if (!optionNames.includes(key))
      throw new ProceedConfigError(
        `${where}: unknown option "${key}"${nearest(key)}. Known options: ${optionNames.join(', ')} (docs/uploads.md)`,
      );
    if (key === 'checkContent') {
      if (typeof value !== 'boolean') throw new ProceedConfigError(`${where}: checkContent is true or false`);
      continue;
    }
    // `memory: 0` spools every file to disk at once.
    const least = key === 'memory' ? 0 : 1;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < least)
      throw new ProceedConfigError(
        `${where}: upload limit ${key} must be a whole number of at least ${least}`,
      );
  }
  return options as UploadOptions;
}
