/**
 * What the blog's suites need of child processes and the machine, kept in the blog so that it can
 * be copied out of this repository and tested as it is: the `proceed` CLI from the installed
 * `proceedjs`, the blog's own directory, processes in groups of their own killed after each test
 * (the CI rule is in ./ci.ts, which the global set-up reads too).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect, createServer, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The blog's directory, where its commands run. */
export const blogDirectory = fileURLToPath(new URL('..', import.meta.url));

/** The `proceed` CLI of the installed `proceedjs` (a workspace link here, node_modules in a copy). */
export const proceedBin = (() => {
  const manifest = createRequire(import.meta.url).resolve('proceedjs/package.json');
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: string | Record<string, string> };
  return join(dirname(manifest), typeof bin === 'string' ? bin : (bin.proceed ?? ''));
})();

/** An installed command (`bun`, `deno`), found as npm scripts find it: in the nearest node_modules/.bin. */
export function installedCommand(name: string): string {
  for (let directory = blogDirectory; ; directory = dirname(directory)) {
    const candidate = join(directory, 'node_modules', '.bin', name);
    if (existsSync(candidate)) return candidate;
    if (dirname(directory) === directory) throw new Error(`${name} is not installed: npm install it`);
  }
}

export interface Running {
  child: ChildProcess;
  pid: number;
  output(): string;
  /** Resolves once the output matches; rejects on timeout or when the process ends first. */
  waitFor(pattern: RegExp | string, timeoutMs?: number): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcess>();

/**
 * Kills every process `launch` started that is still running, with its process group: after each
 * test, from test/kill-launched.setup.ts (a setup file runs for every test file, where a hook
 * registered here would run only for the first file of a worker that shares its modules).
 */
export function killLaunched(): void {
  for (const child of running) {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  running.clear();
}

/** This process's environment without the settings a test must choose for itself. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of ['PORT', 'HOST', 'LOG_LEVEL', 'DATABASE_URL', 'NODE_ENV', 'JWT_SECRET'] as const)
    delete env[key];
  // npm's own variables would make a nested npm think it runs inside this test's script.
  for (const key of Object.keys(env)) if (key.startsWith('npm_')) delete env[key];
  return { ...env, ...extra };
}

/**
 * Starts a command in a process group of its own (so a test can signal the whole group, as a
 * terminal's Ctrl+C does), from the blog's directory, and collects its output.
 *
 * @example
 * const server = launch(process.execPath, [proceedBin, 'start', 'dist/main.js']);
 * await server.waitFor('Server listening');
 */
export function launch(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Running {
  const child = spawn(command, args, {
    cwd: options.cwd ?? blogDirectory,
    env: childEnv(options.env ?? {}),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  running.add(child);
  let output = '';
  const listeners = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      for (const listener of listeners) listener();
      resolve({ code, signal });
    });
  });
  const waitFor = (pattern: RegExp | string, timeoutMs = 60_000) =>
    new Promise<void>((resolve, reject) => {
      const matches = () => (typeof pattern === 'string' ? output.includes(pattern) : pattern.test(output));
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`Timed out waiting for ${String(pattern)}; output so far:\n${output}`));
      }, timeoutMs);
      const check = () => {
        if (matches()) {
          clearTimeout(timer);
          listeners.delete(check);
          resolve();
        } else if (child.exitCode !== null || child.signalCode !== null) {
          clearTimeout(timer);
          listeners.delete(check);
          reject(new Error(`The process exited before ${String(pattern)}; output:\n${output}`));
        }
      };
      listeners.add(check);
      check();
    });
  if (child.pid === undefined) throw new Error(`Could not start ${command}`);
  return { child, pid: child.pid, output: () => output, waitFor, exited };
}

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Polls `check` every 100 ms until it is true, or fails after `timeoutMs`. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`Timed out: ${what}`);
}

/**
 * A request that is in flight until `finish()`: its headers and the first half of its JSON body
 * are sent at once, the rest on `finish()`. The server has the request, so a graceful shutdown
 * must wait for it. `answer` resolves with the raw HTTP response.
 */
export interface RequestInFlight {
  /** Resolves once the server has accepted the connection and the first half is sent. */
  sent: Promise<void>;
  finish(): void;
  answer: Promise<string>;
}

export function requestInFlight(port: number, path: string, body: unknown): RequestInFlight {
  const payload = Buffer.from(JSON.stringify(body));
  const half = Math.floor(payload.length / 2);
  const socket: Socket = connect({ host: '127.0.0.1', port });
  const sent = new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${payload.length}\r\nConnection: close\r\n\r\n`,
      );
      socket.write(payload.subarray(0, half), () => resolve());
    });
  });
  const answer = new Promise<string>((resolve, reject) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    socket.once('end', () => resolve(text));
    socket.once('error', reject);
  });
  // write, not end: a client that half-closes before the answer has its request aborted by node.
  return { sent, finish: () => socket.write(payload.subarray(half)), answer };
}
