/**
 * What `npm publish` would ship: compiled JavaScript, declarations and source maps for every
 * subpath export, the bin, the OWASP ruleset override, README and LICENSE, nothing else; and the community's checkers
 * (publint, Are the Types Wrong) find nothing to report.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Packed, pack } from './packages.js';
import { childEnv, root } from './processes.js';

const run = promisify(execFile);
const destination = mkdtempSync(join(tmpdir(), 'proceed-pack-'));
afterAll(() => rmSync(destination, { recursive: true, force: true }));

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  exports: Record<string, { types: string; default: string } | string>;
  bin: Record<string, string>;
};

/** Runs a checker installed in the repository; a non-zero exit fails with its report. */
async function check(command: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run(join(root, 'node_modules/.bin', command), args, { env: childEnv() });
    return stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout: string; stderr: string };
    throw new Error(`${command} reported problems:\n${stdout}\n${stderr}`);
  }
}

describe('the proceedjs package', { timeout: 120_000 }, () => {
  let packed: Packed;
  beforeAll(async () => {
    packed = await pack('.', destination);
  });

  it('ships dist/, the bin, the OWASP ruleset override, README, LICENSE and package.json, nothing else', () => {
    const outside = packed.files.filter((file) => !file.startsWith('dist/'));
    expect(outside).toEqual([
      'LICENSE',
      'README.md',
      'bin/proceed.js',
      'openapi-owasp.spectral.yaml',
      'package.json',
    ]);
    expect(
      packed.files.filter((file) => /\.test(-d)?\.|fixtures|\.cases\.|\.tsbuildinfo/.test(file)),
    ).toEqual([]);
    expect(packed.files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
    expect(Object.values(manifest.bin)).toEqual(['./bin/proceed.js']);
  });

  it("ships a package.json without this repository's scripts, dev dependencies and workspaces", async () => {
    const { stdout } = await run('tar', ['-xOzf', packed.tarball, 'package/package.json']);
    const shipped = JSON.parse(stdout) as Record<string, unknown>;
    // No client publishes the repository's own package.json; the packed one is not private.
    expect(
      (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { private?: boolean }).private,
    ).toBe(true);
    // `prepare` would be flagged as an install script on every install of the tarball.
    for (const key of ['private', 'scripts', 'devDependencies', 'workspaces', 'allowScripts'])
      expect(shipped, key).not.toHaveProperty(key);
    expect(shipped.exports).toEqual(manifest.exports);
    expect(shipped.dependencies).toEqual(
      (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: unknown })
        .dependencies,
    );
  });

  it('has JavaScript, declarations and a source map with its sources for every subpath export', () => {
    const entries = Object.entries(manifest.exports).filter(([subpath]) => subpath !== './package.json');
    expect(entries.map(([subpath]) => subpath)).toEqual([
      '.',
      './node',
      './auth',
      './pagination',
      './resource',
      './openapi',
      './client',
      './config',
      './metrics',
      './mcp',
      './idempotency',
      './tanstack-query',
      './opentelemetry',
    ]);
    for (const [, target] of entries) {
      if (typeof target === 'string') throw new Error(`${target}: every export has types and default`);
      const javascript = target.default.replace(/^\.\//, '');
      expect(packed.files).toContain(javascript);
      expect(packed.files).toContain(target.types.replace(/^\.\//, ''));
      expect(packed.files).toContain(`${javascript}.map`);
      const map = JSON.parse(readFileSync(join(root, `${javascript}.map`), 'utf8')) as {
        sourcesContent?: string[];
      };
      expect(map.sourcesContent?.[0]?.length ?? 0).toBeGreaterThan(0);
    }
    // The CLI the bin loads is there too.
    expect(packed.files).toContain('dist/cli/main.js');
    expect(packed.files).toContain('dist/cli/worker.js');
  });

  it('passes publint (strict) and Are the Types Wrong (ESM only)', async () => {
    expect(await check('publint', ['run', packed.tarball, '--strict'])).toContain('All good');
    await check('attw', [packed.tarball, '--profile', 'esm-only', '--no-color']);
  });

  it('refuses plain npm pack and npm publish with the way to pack, and lets npm run pack through', async () => {
    const npm = (...args: string[]) =>
      run('npm', args, { cwd: root, env: childEnv() }).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
      );
    for (const refused of [await npm('pack', '--dry-run'), await npm('publish', '--dry-run')]) {
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('Pack the framework with `npm run pack`');
    }
    // What `npm run pack` runs first, as npm runs it there: the script's own `pre` step.
    expect(await npm('run', 'prepack')).toEqual({ code: 0, stderr: '' });
  });
});

describe('the create-proceed package', { timeout: 120_000 }, () => {
  let packed: Packed;
  beforeAll(async () => {
    packed = await pack('packages/create-proceed', destination);
  });

  it('ships its compiled bin and the template, nothing else', () => {
    expect(packed.files.filter((file) => !file.startsWith('dist/') && !file.startsWith('template/'))).toEqual(
      ['LICENSE', 'README.md', 'package.json'],
    );
    expect(packed.files).toContain('dist/index.js');
    expect(packed.files).toEqual(
      expect.arrayContaining([
        'template/gitignore',
        'template/Dockerfile',
        'template/src/app.ts',
        'template/src/app.test.ts',
        'template/tsconfig.json',
      ]),
    );
    expect(packed.files.filter((file) => /^dist\/.*\.test\./.test(file))).toEqual([]);
  });

  it('passes publint (strict)', async () => {
    expect(await check('publint', ['run', packed.tarball, '--strict'])).toContain('All good');
  });
});
