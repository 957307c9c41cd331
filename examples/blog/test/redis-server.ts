/**
 * A Redis server of the test's own, on a free port: to stop and restart it without touching the
 * machine's shared one. Nothing is saved to disk.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { inCi } from './ci.js';
import { freePort } from './ports.js';

export class RedisServer {
  port = 0;

  /** Whether redis-server is installed: skipped without it, a failure under CI=true (.ci/run installs it). */
  static installed(): boolean {
    const found = spawnSync('sh', ['-c', 'command -v redis-server'], { stdio: 'ignore' }).status === 0;
    if (!found && inCi()) throw new Error('redis-server is not installed; CI requires it');
    return found;
  }
  #child: ChildProcess | undefined;

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts it (on a free port the first time, on the same port after `stop`); a no-op while it runs. */
  async start(): Promise<this> {
    if (this.#child !== undefined) return this;
    if (this.port === 0) this.port = await freePort();
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`redis-server could not run (apt-get install redis-server): ${error.message}`));
      });
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
    }).catch((error: unknown) => {
      child.kill('SIGKILL');
      throw error;
    });
    this.#child = child;
    return this;
  }

  /** Kills it outright, as a crash would. */
  async stop(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (child === undefined || child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }
}
