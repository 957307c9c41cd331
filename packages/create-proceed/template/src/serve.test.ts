import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The runtime this app was made for (npm create proceed -- --runtime …); the template itself, in
// Proceed's repository, runs on Node.js.
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

/** A port nothing listens on now (Wrangler needs one named). */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  return typeof address === 'object' && address !== null ? address.port : 0;
}

/** How the runtime runs the app's source: `proceed start` serves it there, Wrangler a Worker. */
async function command(): Promise<[string, string[]]> {
  if (runtime === 'workers') {
    const wrangler = installed('wrangler/bin/wrangler.js');
    const port = String(await freePort());
    return [
      process.execPath,
      [wrangler, 'dev', '--ip', '127.0.0.1', '--port', port, '--inspector-port', '0'],
    ];
  }
  const start = [installed('proceedjs/bin/proceed.js'), 'start', 'src/app.ts', '--port', '0'];
  // The runtimes' own executables, which their npm packages put there (no shell shim: Windows too).
  const exe = process.platform === 'win32' ? '.exe' : '';
  if (runtime === 'bun') return [installed('bun/bin/bun.exe'), start];
  if (runtime === 'deno') return [installed(`deno/deno${exe}`), ['run', '--allow-all', ...start]];
  return [process.execPath, start];
}

describe(`the app on ${runtime}`, () => {
  it(`listens on ${runtime}, answers over HTTP, and exits 0 on SIGTERM`, { timeout: 60_000 }, async () => {
    const [executable, args] = await command();
    const server = spawn(executable, args, {
      cwd: root,
      // Wrangler: no usage metrics sent from a test.
      env: { ...process.env, LOG_LEVEL: 'info', NODE_ENV: 'production', WRANGLER_SEND_METRICS: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const origin = await new Promise<string>((resolve, reject) => {
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        const listening = /(?:Server listening at|Ready on) (http:\/\/[\d.:]+)/.exec(output);
        if (listening?.[1] !== undefined) resolve(listening[1]);
      };
      server.stdout.on('data', read);
      server.stderr.on('data', read);
      server.once('exit', (code) => reject(new Error(`exited with ${code} before listening:\n${output}`)));
    });
    expect((await fetch(`${origin}/api/health`)).status).toBe(200);
    const created = await fetch(`${origin}/api/notes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Served', body: `on ${runtime}` }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect(await (await fetch(`${origin}/api/notes/${id}`)).json()).toEqual({ id, title: 'Served' });
    server.kill('SIGTERM');
    const [code] = await once(server, 'exit');
    expect(code).toBe(0);
  });
});
