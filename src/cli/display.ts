/** How the CLI names files in what it prints. */
import { relative } from 'node:path';

/** A file relative to `cwd` when it lies below it, else as given: for messages. */
export function displayPath(file: string, cwd = process.cwd()): string {
  const shown = relative(cwd, file);
  return shown === '' || shown.startsWith('..') ? file : shown;
}
