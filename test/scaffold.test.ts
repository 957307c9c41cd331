/**
 * A new user's first ten minutes, from packed tarballs as the registry would serve them:
 * `npm create proceed` (here `npm exec` of the create-proceed tarball), `npm install`,
 * `npm run build`, `npm test`, then production: dev dependencies pruned (no TypeScript, no tsx),
 * `npm start`, the health route and the first procedure over HTTP, SIGTERM, exit 0.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { pack } from './packages.js';
import { freePort, launch, runToEnd } from './processes.js';

const scratch = mkdtempSync(join(tmpdir(), 'proceed-scaffold-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs a command in the app and fails with its output unless it exits 0. */
async function succeed(cwd: string, command: string, args: string[]): Promise<string> {
  const result = await runToEnd(command, args, { cwd });
  const output = `${result.stdout}\n${result.stderr}`;
  if (result.code !== 0)
    throw new Error(`${command} ${args.join(' ')} exited with ${result.code}:\n${output}`);
  return output;
}

/** The two tarballs, packed once for every test of the file. */
type Packed = Awaited<ReturnType<typeof pack>>;
let packing: Promise<[Packed, Packed]> | undefined;
const packed = () => {
  packing ??= Promise.all([pack('.', scratch), pack('packages/create-proceed', scratch)]);
  return packing;
};

/**
 * `npm create proceed` as the registry would run it: the scaffolder's tarball, with the
 * framework's tarball as the app's `proceedjs`. Returns the app's directory and the output.
 */
async function create(name: string, ...options: string[]): Promise<{ app: string; output: string }> {
  const [framework, scaffolder] = await packed();
  const output = await succeed(scratch, 'npm', [
    'exec',
    '--yes',
    `--package=${scaffolder.tarball}`,
    '--',
    'create-proceed',
    name,
    ...options,
    '--proceed',
    framework.tarball,
  ]);
  return { app: join(scratch, name), output };
}

describe('npm create proceed, from the packed tarballs', () => {
  it('scaffolds an app that installs, builds, passes its test and serves in production', {
    timeout: 300_000,
  }, async () => {
    const [framework] = await packed();
    const { app, output: created } = await create('my-app');
    expect(created).toContain('Created my-app in my-app:');
    expect(created).toContain('npm run dev');
    const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(manifest.dependencies.proceedjs).toBe(`file:${framework.tarball}`);

    const installed = await succeed(app, 'npm', ['install', '--no-audit', '--no-fund']);
    // Every package it pulled in supports the Node.js Proceed supports.
    expect(installed).not.toContain('EBADENGINE');

    await succeed(app, 'npm', ['run', 'build']);
    expect(existsSync(join(app, 'dist/app.js'))).toBe(true);
    expect(existsSync(join(app, 'dist/app.test.js'))).toBe(false);

    const tested = await succeed(app, 'npm', ['test']);
    expect(stripVTControlCharacters(tested)).toMatch(/Tests\s+3 passed/);

    await succeed(app, 'npm', ['prune', '--omit=dev', '--no-audit', '--no-fund']);
    for (const dev of ['typescript', 'tsx', 'vitest'])
      expect(existsSync(join(app, 'node_modules', dev))).toBe(false);
    // Without tsx, a TypeScript entry is refused with what to do about it.
    const typescript = await runToEnd('npx', ['proceed', 'routes', 'src/app.ts'], { cwd: app });
    expect(typescript.code).toBe(1);
    expect(typescript.stderr).toContain(
      'src/app.ts is TypeScript, and running TypeScript needs tsx, which is not installed',
    );

    const port = await freePort();
    const server = launch('npm', ['start'], {
      cwd: app,
      env: { PORT: String(port), NODE_ENV: 'production' },
    });
    await server.waitFor(`Server listening at http://127.0.0.1:${port}`);
    const origin = `http://127.0.0.1:${port}`;
    const health = await fetch(`${origin}/api/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const note = await fetch(`${origin}/api/notes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'From a tarball', body: 'It works.' }),
    });
    expect(note.status).toBe(201);
    const { id } = (await note.json()) as { id: string };
    expect(await (await fetch(`${origin}/api/notes`)).json()).toEqual({
      data: [{ id, title: 'From a tarball' }],
    });

    process.kill(server.pid, 'SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });

  it('scaffolds a Cloudflare Worker that passes its tests, serving under wrangler dev, and bundles for deploy', {
    timeout: 300_000,
  }, async () => {
    const { app } = await create('on-workers', '--runtime', 'workers');
    const installed = await succeed(app, 'npm', ['install', '--no-audit', '--no-fund']);
    expect(installed).not.toContain('EBADENGINE');
    // Its serve test runs the Worker on workerd under wrangler dev, over a socket.
    const tested = stripVTControlCharacters(await succeed(app, 'npm', ['test']));
    expect(tested).toMatch(/Tests\s+3 passed/);
    expect(tested).toContain('listens on workers, answers over HTTP');
    await succeed(app, 'npm', ['run', 'typecheck']);
    // What `npm run deploy` would upload, bundled without uploading.
    await succeed(app, 'npm', ['run', 'build']);
    expect(existsSync(join(app, 'dist/worker.js'))).toBe(true);
  });

  it.each(['bun', 'deno'])(
    'scaffolds an app for %s that passes its tests there and serves on it',
    {
      timeout: 300_000,
    },
    async (runtime) => {
      const { app } = await create(`on-${runtime}`, '--runtime', runtime);
      await succeed(app, 'npm', ['install', '--no-audit', '--no-fund']);
      // Its serve test runs the app on the runtime, from the runtime's npm package.
      const tested = await succeed(app, 'npm', ['test']);
      expect(stripVTControlCharacters(tested)).toMatch(/Tests\s+3 passed/);
      expect(stripVTControlCharacters(tested)).toContain(`listens on ${runtime}, answers over HTTP`);

      await succeed(app, 'npm', ['run', 'build']);
      const port = await freePort();
      const server = launch('npm', ['start'], {
        cwd: app,
        env: { PORT: String(port), NODE_ENV: 'production' },
      });
      await server.waitFor(
        `Server listening at http://127.0.0.1:${port} (${runtime === 'bun' ? 'Bun' : 'Deno'}, app.fetch)`,
      );
      const health = await fetch(`http://127.0.0.1:${port}/api/health`);
      expect(health.status).toBe(200);
      process.kill(server.pid, 'SIGTERM');
      expect(await server.exited).toEqual({ code: 0, signal: null });
    },
  );
});
