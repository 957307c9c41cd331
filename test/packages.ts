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
 * `npm install`'s arguments for an app made from the tarballs, as a new user runs it: every
 * package resolved from the registry. The app template's install, the first test of
 * test/scaffold.test.ts and the one with the most packages, runs it so, and so refreshes npm's
 * cache once a run.
 */
export const freshInstallArgs = ['install', '--no-audit', '--no-fund'];

/**
 * The other installs of the suite: `--prefer-offline`, so what npm has cached of the registry's
 * answers is used without asking again, and anything missing is fetched. They install mostly the
 * same packages; asking the registry about each of them every time cost 28 to 41 s an install,
 * against 9 to 19 s. What they cannot see: a release newer than the cache (on a machine that
 * keeps its npm cache, an install that ran before this one's first) of a package only they
 * install (the runtimes' packages, Wrangler), which a new user would get.
 */
export const installArgs = [...freshInstallArgs, '--prefer-offline'];
