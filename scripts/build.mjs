#!/usr/bin/env node
/**
 * Builds the framework into dist/, then the packages that compile against it: the blog and
 * create-proceed. Each dist/ is emptied first, so nothing of a deleted source stays behind.
 *
 *   node scripts/build.mjs [--no-check] [project ...]    (default: all three)
 *
 * --no-check emits without type checking (TypeScript's --noCheck, same output). `npm test` uses
 * it right after type checking every file, and `prepare` (which `npm install` runs) so that an
 * install only makes what `npm start` needs (13 s rather than 26): the checking is `npm test`'s.
 * `npm run build` and `npm run pack` check.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const args = process.argv.slice(2);
const noCheck = args.includes('--no-check');
const chosen = args.filter((arg) => arg !== '--no-check');
const projects = chosen.length > 0 ? chosen : ['.', 'examples/blog', 'packages/create-proceed'];

for (const project of projects) {
  const directory = join(root, project);
  rmSync(join(directory, 'dist'), { recursive: true, force: true });
  const result = spawnSync(
    process.execPath,
    [tsc, '-p', join(directory, 'tsconfig.build.json'), ...(noCheck ? ['--noCheck'] : [])],
    { stdio: 'inherit' },
  );
  if (result.status !== 0) {
    process.stderr.write(`build: ${project} failed\n`);
    process.exit(result.status ?? 1);
  }
  if (project === '.') copySwaggerUi();
}

/**
 * The docs UI's files ship in the package (dist/openapi/swagger-ui/), copied from the
 * swagger-ui-dist dev dependency: an app installs no package for them, and none of its install
 * scripts (docs/openapi.md, "The docs UI").
 */
function copySwaggerUi() {
  const from = join(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'), '..');
  const to = join(root, 'dist/openapi/swagger-ui');
  mkdirSync(to, { recursive: true });
  for (const name of [
    'swagger-ui.css',
    'index.css',
    'swagger-ui-bundle.js',
    'swagger-ui-standalone-preset.js',
    'LICENSE',
  ])
    copyFileSync(join(from, name), join(to, name));
}
