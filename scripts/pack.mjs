#!/usr/bin/env node
/**
 * `npm run pack`: the framework's tarball as it is published. What `files` lists (the built
 * dist/ and bin/), README and LICENSE, with a package.json that leaves out what only this
 * repository uses: its scripts (`prepare` builds a checkout on `npm install`, and npm would flag
 * it as an install script on every install of the tarball), dev dependencies, workspaces and
 * allowScripts. Packed from a staging directory, so this repository's files never change.
 *
 *   node scripts/pack.mjs [--pack-destination DIR] [--json]
 *
 * Run the build first (`npm run pack` does); plain `npm pack` here is refused (`prepack`).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const at = args.indexOf('--pack-destination');
const destination = resolve(at >= 0 ? (args[at + 1] ?? '.') : root);
const json = args.includes('--json');

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
// `private` keeps every client (npm, yarn, pnpm, bun) from publishing this repository's own
// package.json, with or without its scripts; the packed one is the one to publish.
for (const key of ['private', 'scripts', 'devDependencies', 'workspaces', 'allowScripts'])
  delete manifest[key];

if (!existsSync(join(root, 'dist', 'index.js'))) {
  process.stderr.write('pack: dist/ is missing; run `npm run build` first (npm run pack does)\n');
  process.exit(1);
}
const staging = mkdtempSync(join(tmpdir(), 'proceed-pack-'));
try {
  for (const entry of [...manifest.files, 'README.md', 'LICENSE'])
    cpSync(join(root, entry), join(staging, entry), { recursive: true });
  writeFileSync(join(staging, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const packed = spawnSync(
    'npm',
    ['pack', '--ignore-scripts', '--pack-destination', destination, ...(json ? ['--json'] : [])],
    { cwd: staging, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  process.exitCode = packed.status ?? 1;
} finally {
  rmSync(staging, { recursive: true, force: true });
}
