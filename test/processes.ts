/**
 * Child processes for end-to-end tests: the CLI, `npm start`, a scaffolded app. Every process
 * started here runs in its own process group and is killed, group and all, after each test.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import { inCi } from './ci.js';

export const root = new URL('../', import.meta.url).pathname.replace(/\/$/, '');
export const bin = `${root}/bin/proceed.js`;

export interface Running {
  child: ChildProcess;
  pid: number;
  output(): string;
  /** Resolves once the output matches; rejects on timeout or when the process ends first. */
  waitFor(pattern: RegExp | string, timeoutMs?: number): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface LaunchOptions {
  cwd?: string;
  /** Added to the environment, after PORT, HOST, LOG_LEVEL, DATABASE_URL and NODE_ENV are cleared. */
  env?: Record<string, string>;
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
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of ['PORT', 'HOST', 'LOG_LEVEL', 'DATABASE_URL', 'NODE_ENV', 'JWT_SECRET'] as const) {
    delete env[key];
  }
  // npm's own variables would make a nested npm think it runs inside this test's script.
  for (const key of Object.keys(env)) if (key.startsWith('npm_')) delete env[key];
  return { ...env, ...extra };
}

/**
 * Starts a command in a process group of its own (so a test can signal the whole group, as a
 * terminal's Ctrl+C does) and collects its output.
 *
 * @example
 * const server = launch(process.execPath, [bin, 'start', 'dist/app.js']);
 * await server.waitFor('Server listening');
 */
export function launch(command: string, args: readonly string[], options: LaunchOptions = {}): Running {
  const child = spawn(command, args, {
    cwd: options.cwd ?? root,
    env: childEnv(options.env),
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

/** Runs a command to its end; resolves with its exit code and output. */
export async function runToEnd(
  command: string,
  args: readonly string[],
  options: LaunchOptions = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(command, args, {
    cwd: options.cwd ?? root,
    env: childEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) =>
    child.on('close', (exitCode) => resolve(exitCode)),
  );
  return { code, stdout, stderr };
}

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The body at `url`, or undefined when nothing answers. */
export async function fetchText(url: string): Promise<string | undefined> {
  try {
    return await (await fetch(url)).text();
  } catch {
    return undefined;
  }
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

/** Whether a TCP connection to the port is accepted. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
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

/**
 * Whether a command is installed. A test that needs one runs when it is; without it the test is
 * skipped on a developer's machine and fails under CI=true (.ci/run installs it), like a service.
 */
export function installed(command: string): boolean {
  const found = spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
  if (!found && inCi()) throw new Error(`${command} is not installed; CI requires it`);
  if (!found) console.warn(`[tools] ${command} is not installed: the tests that need it are skipped`);
  return found;
}
