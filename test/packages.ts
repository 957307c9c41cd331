/**
 * Packing the repository's packages as `npm publish` would, from what `npm test`'s build made
 * (`npm pack` by a person runs the `prepare` build first; here scripts are skipped).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { childEnv, root } from './processes.js';

const run = promisify(execFile);

export interface Packed {
  /** The tarball's absolute path. */
  tarball: string;
  /** Every file in it, relative to the package root. */
  files: string[];
}

/** `npm pack` of the package at `directory` (relative to the repository) into `destination`. */
export async function pack(directory: string, destination: string): Promise<Packed> {
  const { stdout } = await run(
    'npm',
    ['pack', '--ignore-scripts', '--json', '--pack-destination', destination],
    { cwd: join(root, directory), env: childEnv() },
  );
  const [result] = JSON.parse(stdout) as [{ filename: string; files: { path: string }[] }];
  return { tarball: join(destination, result.filename), files: result.files.map((file) => file.path).sort() };
}
