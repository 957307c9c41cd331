/**
 * Packing the repository's packages as they are published, from what `npm test`'s build made:
 * the framework with scripts/pack.mjs (what `npm run pack` runs after its build), create-proceed
 * with `npm pack` (its `prepack` build skipped here).
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
  const { stdout } =
    directory === '.'
      ? await run(
          process.execPath,
          [join(root, 'scripts/pack.mjs'), '--json', '--pack-destination', destination],
          {
            cwd: root,
            env: childEnv(),
          },
        )
      : await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', destination], {
          cwd: join(root, directory),
          env: childEnv(),
        });
  const [result] = JSON.parse(stdout) as [{ filename: string; files: { path: string }[] }];
  return { tarball: join(destination, result.filename), files: result.files.map((file) => file.path).sort() };
}

/**
 * `npm install`'s arguments for an app made from the tarballs. `--prefer-offline`: what npm has
 * cached of the registry's answers is used without asking again, anything else is fetched. The
 * suite installs six apps on mostly the same packages; asking the registry about every one of
 * them six times was a third of its time (28 s against 9 s an install). The first install of a
 * run on a clean machine still resolves every package from the registry, as a new user's does.
 */
export const installArgs = ['install', '--no-audit', '--no-fund', '--prefer-offline'];
