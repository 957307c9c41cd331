/**
 * The compiled blog as an operator starts it, for the suites that need its own process (a
 * restart, its memory): `proceed start examples/blog/dist/main.js` on a port the system picks,
 * configured by its environment.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { blogDirectory, proceedBin } from './support.js';

export interface BlogProcess {
  child: ChildProcess;
  origin: string;
  output: () => string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts the blog on a port the system picks, read from its "Server listening" line (a port found
 * free beforehand could be taken by another test's server while the database starts, and the
 * health check would then reach that server), and resolves once its health check passes.
 */
export async function startBlogProcess(env: Record<string, string>): Promise<BlogProcess> {
  const child = spawn(
    process.execPath,
    [proceedBin, 'start', 'dist/main.js', '--port', '0', '--host', '127.0.0.1'],
    {
      cwd: blogDirectory,
      env: { ...process.env, LOG_LEVEL: 'info', NODE_ENV: 'development', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  let origin = '';
  // A new PGlite directory runs initdb: seconds, more on a busy machine.
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`The blog exited early (${child.exitCode}):\n${output}`);
    origin ||= /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] ?? '';
    const healthy =
      origin !== '' &&
      (await fetch(`${origin}/api/health`).then(
        (response) => response.status === 200,
        () => false,
      ));
    if (healthy) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`The blog did not become healthy in 90 s:\n${output}`);
    }
    await new Promise((wait) => setTimeout(wait, 100));
  }
  return {
    child,
    origin,
    output: () => output,
    stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}
