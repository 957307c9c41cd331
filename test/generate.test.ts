/**
 * `proceed generate resource` in an app made by `npm create proceed`, from the packed tarballs
 * and with no terminal: scaffold, install, generate bookmarks, then the app's own `npm test` (on
 * PGlite, and on PostgreSQL when there is one) and `tsc --noEmit`, with no edit in between.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { installArgs, pack } from './packages.js';
import { runToEnd } from './processes.js';

const scratch = mkdtempSync(join(tmpdir(), 'proceed-generate-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs a command in `cwd`, no TTY, and fails with its output unless it exits 0. */
async function succeed(cwd: string, command: string, args: string[], env: Record<string, string> = {}) {
  const result = await runToEnd(command, args, { cwd, env });
  const output = stripVTControlCharacters(`${result.stdout}\n${result.stderr}`);
  if (result.code !== 0)
    throw new Error(`${command} ${args.join(' ')} exited with ${result.code}:\n${output}`);
  return output;
}

describe('proceed generate resource, in an app from the packed tarballs', () => {
  it('adds bookmarks: the app passes its tests and type-checks with no edit', {
    timeout: 600_000,
  }, async () => {
    const postgresUrl = inject('postgresUrl');
    const times: string[] = [];
    const time = async <T>(step: string, work: () => Promise<T>): Promise<T> => {
      const started = performance.now();
      try {
        return await work();
      } finally {
        times.push(`  ${step}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
      }
    };
    try {
      const [framework, scaffolder] = await time('pack both tarballs', () =>
        Promise.all([pack('.', scratch), pack('packages/create-proceed', scratch)]),
      );
      await time('scaffold', () =>
        succeed(scratch, 'npm', [
          'exec',
          '--yes',
          `--package=${scaffolder.tarball}`,
          '--',
          'create-proceed',
          'my-api',
          '--proceed',
          framework.tarball,
        ]),
      );
      const app = join(scratch, 'my-api');
      await time('npm install', () => succeed(app, 'npm', installArgs));

      const generate = [
        'proceed',
        'generate',
        'resource',
        'bookmarks',
        'url:string',
        'title:string',
        'notes:text',
      ];
      const generated = await time('proceed generate resource', () => succeed(app, 'npx', generate));
      expect(generated).toContain('Added bookmarks:');
      expect(generated).toContain(
        "api.bookmarks.createBookmark({ url: 'url 1', title: 'title 1', notes: 'notes 1' })",
      );
      const migration = readdirSync(join(app, 'drizzle')).find((name) => name.endsWith('_bookmarks.sql'));
      expect(migration).toBe('0001_bookmarks.sql');
      const sql = readFileSync(join(app, 'drizzle', migration ?? ''), 'utf8');
      expect(sql).toContain('CREATE TABLE "bookmarks"');
      expect(sql).toContain('REFERENCES "public"."users"("id") ON DELETE cascade');

      // Run again, it refuses: exit 2, one line, nothing written.
      const again = await runToEnd('npx', generate, { cwd: app });
      expect(again.code).toBe(2);
      expect(again.stderr.trim()).toBe('proceed: src/bookmarks.ts exists already: nothing was written');

      const tested = stripVTControlCharacters(
        await time(`npm test (PGlite${postgresUrl === null ? '' : ' and PostgreSQL'})`, () =>
          succeed(app, 'npm', ['test'], { TEST_DATABASE_URL: postgresUrl ?? '', CI: 'true' }),
        ),
      );
      expect(tested).toMatch(/✓ test\/bookmarks\.test\.ts/);
      if (postgresUrl === null) expect(tested).toMatch(/Tests\s+\d+ passed \| \d+ skipped/);
      else {
        expect(tested).toMatch(/Tests\s+\d+ passed \(\d+\)/);
        expect(tested).not.toContain('skipped');
      }
      await time('tsc --noEmit', () => succeed(app, 'npx', ['tsc', '--noEmit']));
    } finally {
      console.log(`proceed generate, end to end:\n${times.join('\n')}`);
    }
  });
});
