/**
 * Starts a script on another runtime from its npm package in node_modules/.bin (Bun, Deno, or
 * wrangler dev for workerd) and waits until it says where it listens: the suites that send
 * their requests to `app.fetch` on those runtimes over a real socket share it.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { freePort } from '../processes.js';

export interface RuntimeCommand {
  name: string;
  /** `bun`, `deno` or `wrangler`, from node_modules/.bin. */
  command: string;
  /** Its arguments, given a free port (wrangler takes no port 0). */
  args: (port: number) => string[];
  /** Where it says it listens, in its output: the first group is the origin. */
  address: RegExp;
}

/** The runtime's origin, and how to stop it (its whole process group). */
export interface RuntimeServer {
  origin: string;
  close(): Promise<void>;
}

/** The scripts of test/runtimes/serve.ts and traced-serve.ts announce themselves this way. */
export const announcedAddress = /\{"address":"([^"]+)"\}/;

/** What wrangler dev prints once it serves. */
export const wranglerReady = /Ready on (http:\/\/[^\s]+)/;

/** What Bun and wrangler resolve `proceedjs` to: the package's `bun` and `workerd` entry, from the sources. */
export const runtimesTsconfig = fileURLToPath(new URL('./tsconfig.json', import.meta.url));

/** wrangler dev with `config`, on 127.0.0.1 and `port`, without its interactive session. */
export const wranglerDev = (config: string) => (port: number) => [
  'dev',
  '--config',
  config,
  '--tsconfig',
  runtimesTsconfig,
  '--ip',
  '127.0.0.1',
  '--port',
  String(port),
  '--inspector-port',
  '0',
  '--show-interactive-dev-session=false',
];

/**
 * A runtime that is missing or does not start fails, everywhere: they are dev dependencies, so a
 * skip would only hide a broken install.
 */
export async function startOnRuntime({
  name,
  command,
  args,
  address,
}: RuntimeCommand): Promise<RuntimeServer> {
  const child = spawn(
    fileURLToPath(new URL(`../../node_modules/.bin/${command}`, import.meta.url)),
    args(await freePort()),
    {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      stdio: ['ignore', 'pipe', 'pipe'],
      // Wrangler: no telemetry, no prompts, no update check over a network CI lacks.
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true', NO_UPDATE_NOTIFIER: '1' },
      detached: true,
    },
  );
  const close = async () => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    // The whole group: wrangler runs workerd as a child of its own.
    process.kill(-child.pid, 'SIGTERM');
    await exited;
  };
  let output = '';
  const listening = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not listen in 60 s:\n${output}`)), 60_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const found = address.exec(output)?.[1];
      if (found !== undefined) {
        clearTimeout(timer);
        resolve(found);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(
        new Error(`${name}: ${error.message} (bun, deno and wrangler are dev dependencies: npm install)`),
      );
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}):\n${output}`));
    });
  });
  try {
    return { origin: await listening, close };
  } catch (error) {
    await close();
    throw error;
  }
}
