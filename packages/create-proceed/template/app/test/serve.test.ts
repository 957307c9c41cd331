/**
 * The app as `npm start` runs it, over HTTP: on its runtime, with a database in memory; and the
 * CLI reading it with no database at all.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The runtime this app was made for (npm create proceed -- --runtime …).
const runtime: string = '{{runtime}}'.startsWith('{{') ? 'node' : '{{runtime}}';
const root = fileURLToPath(new URL('..', import.meta.url));

/** A file of an installed package, in this app's node_modules or a parent's. */
function installed(file: string): string {
  for (let directory = root; ; directory = dirname(directory)) {
    const candidate = join(directory, 'node_modules', file);
    if (existsSync(candidate)) return candidate;
    if (dirname(directory) === directory) throw new Error(`node_modules/${file} is not installed`);
  }
}

/** The CLI on this app's runtime: `proceed <args>`. */
function proceed(args: string[], env: Record<string, string>): ChildProcess {
  const cli = [installed('proceedjs/bin/proceed.js'), ...args];
  const exe = process.platform === 'win32' ? '.exe' : '';
  const [executable, argv] =
    runtime === 'bun'
      ? [installed('bun/bin/bun.exe'), cli]
      : runtime === 'deno'
        ? // Deno reads `./x.js` in a TypeScript import as `./x.ts` only with --sloppy-imports.
          [installed(`deno/deno${exe}`), ['run', '--allow-all', '--sloppy-imports', ...cli]]
        : [process.execPath, cli];
  const { DATABASE_URL: _, JWT_SECRET: __, ...inherited } = process.env;
  return spawn(executable, argv, {
    cwd: root,
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function output(child: ChildProcess): { text(): string } {
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  return { text: () => text };
}

describe(`the app on ${runtime}`, () => {
  it(`serves over HTTP on ${runtime} in production, and exits 0 on SIGTERM`, {
    timeout: 60_000,
  }, async () => {
    const server = proceed(['start', 'src/app.ts', '--port', '0'], {
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      DATABASE_URL: 'memory://',
      JWT_SECRET: randomBytes(48).toString('base64url'),
    });
    const log = output(server);
    const origin = await new Promise<string>((resolve, reject) => {
      const check = () => {
        const listening = /Server listening at (http:\/\/[\d.:]+)/.exec(log.text());
        if (listening?.[1] !== undefined) resolve(listening[1]);
      };
      server.stdout?.on('data', check);
      server.stderr?.on('data', check);
      server.once('exit', (code) =>
        reject(new Error(`exited with ${code} before listening:\n${log.text()}`)),
      );
    });
    expect((await fetch(`${origin}/api/health`)).status).toBe(200);
    const registered = await fetch(`${origin}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'serve@example.com', password: 'correct horse', name: 'Served' }),
    });
    expect(registered.status).toBe(201);
    const { accessToken } = (await registered.json()) as { accessToken: string };
    const created = await fetch(`${origin}/api/notes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
      body: JSON.stringify({ title: 'Served', body: `on ${runtime}` }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect(await (await fetch(`${origin}/api/notes/${id}`)).json()).toMatchObject({ id, title: 'Served' });
    server.kill('SIGTERM');
    const [code] = await once(server, 'exit');
    expect(code).toBe(0);
  });

  it('prints its routes with no database to reach and no secret', { timeout: 60_000 }, async () => {
    const cli = proceed(['routes'], {
      NODE_ENV: 'production',
      // Nothing listens on port 1: opening this database would fail.
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/nothing',
    });
    const log = output(cli);
    const [code] = await once(cli, 'exit');
    expect(log.text()).toContain('POST');
    expect(log.text()).toContain('/api/auth/register');
    expect(log.text()).toContain('/api/notes/:id');
    expect(code).toBe(0);
  });
});
