/**
 * The blog on Bun or Deno for the end-to-end suites: `BLOG_RUNTIME=bun|deno` makes `startBlog`
 * run the compiled blog as `npm run start:bun` / `start:deno` do (`proceed start dist/main.js` on
 * that runtime, from its npm package), configured through the environment as a deployment is,
 * and read its reset mail from its log (the development mailer logs each one).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import type { BlogOptions } from '../src/app.js';
import { blogDirectory, installedCommand, proceedBin } from './support.js';

export { blogDirectory };

export type BlogRuntime = 'bun' | 'deno';

/** The runtime the suites run the blog on; undefined: in this Node process. */
export function blogRuntime(): BlogRuntime | undefined {
  const chosen = process.env.BLOG_RUNTIME;
  if (chosen === undefined || chosen === '' || chosen === 'node') return undefined;
  if (chosen === 'bun' || chosen === 'deno') return chosen;
  throw new Error(`BLOG_RUNTIME must be node, bun or deno (got "${chosen}")`);
}

/** The environment that says what `options` say, as an operator would write it. */
function environmentOf(options: Partial<BlogOptions>): Record<string, string> {
  const env: Record<string, string> = {};
  const unsupported = (
    ['database', 'mailer', 'attachments', 'logger', 'workers', 'clustered', 'inspect'] as const
  ).filter((key) => key !== 'database' && options[key] !== undefined);
  if (unsupported.length > 0)
    throw new Error(
      `A blog on another runtime is configured by its environment only: ${unsupported.join(', ')}`,
    );
  if (options.databaseUrl !== undefined) env.DATABASE_URL = options.databaseUrl;
  if (options.attachmentsDirectory !== undefined) env.ATTACHMENTS_DIR = options.attachmentsDirectory;
  if (options.jwtSecret !== undefined) env.JWT_SECRET = options.jwtSecret;
  if (options.passwordCost !== undefined) {
    const { N = 16_384, r = 8, p = 5 } = options.passwordCost;
    env.PASSWORD_HASH_COST = `${N},${r},${p}`;
  }
  env.NODE_ENV = options.production === true ? 'production' : 'development';
  if (options.admin !== undefined) {
    env.ADMIN_EMAIL = options.admin.email;
    env.ADMIN_PASSWORD = options.admin.password;
  }
  if (options.authRateLimit !== undefined) env.AUTH_RATE_LIMIT = String(options.authRateLimit);
  if (options.trustProxy !== undefined) env.TRUST_PROXY = String(options.trustProxy);
  if (options.redisUrl !== undefined) env.REDIS_URL = options.redisUrl;
  if (options.rateLimitOnStoreError !== undefined)
    env.RATE_LIMIT_ON_STORE_ERROR = options.rateLimitOnStoreError;
  if (options.metricsPort !== undefined) env.METRICS_PORT = String(options.metricsPort);
  if (options.corsOrigins !== undefined)
    env.CORS_ORIGINS = options.corsOrigins === '*' ? '*' : options.corsOrigins.join(',');
  return env;
}

export interface RuntimeBlog {
  origin: string;
  mail: { to: string; name: string; token: string; expiresAt: Date }[];
  stop(): Promise<void>;
}

/**
 * The command that runs `proceed <args>` on `runtime`, as `npm start`, `npm run start:bun` and
 * `npm run start:deno` do, from the blog's directory ({@link blogDirectory}).
 *
 * @example
 * const { command, args } = proceedCommand('deno', ['start', 'dist/main.js', '--port', '0']);
 * spawn(command, args, { cwd: blogDirectory });
 */
export function proceedCommand(
  runtime: BlogRuntime | 'node',
  args: readonly string[],
): { command: string; args: string[] } {
  if (runtime === 'node') return { command: process.execPath, args: [proceedBin, ...args] };
  return {
    command: installedCommand(runtime),
    args: runtime === 'bun' ? [proceedBin, ...args] : ['run', '--allow-all', proceedBin, ...args],
  };
}

/** Starts the compiled blog on `runtime`, listening on a free port of 127.0.0.1. */
export async function startOnRuntime(
  runtime: BlogRuntime,
  options: Partial<BlogOptions>,
): Promise<RuntimeBlog> {
  const { command, args } = proceedCommand(runtime, ['start', 'dist/main.js', '--port', '0']);
  const { PATH, HOME, TMPDIR } = process.env;
  const child: ChildProcess = spawn(command, args, {
    cwd: blogDirectory,
    env: {
      ...(PATH === undefined ? {} : { PATH }),
      ...(HOME === undefined ? {} : { HOME }),
      ...(TMPDIR === undefined ? {} : { TMPDIR }),
      LOG_LEVEL: 'info',
      ...environmentOf(options),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const mail: RuntimeBlog['mail'] = [];
  let output = '';
  let pending = '';
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`The blog on ${runtime} did not listen in 60 s:\n${output}`)),
      60_000,
    );
    const read = (chunk: Buffer) => {
      const text = chunk.toString();
      if (output.length < 100_000) output += text;
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as {
          msg?: string;
          to?: string;
          name?: string;
          token?: string;
          expiresAt?: string;
        };
        const listening = /^Server listening at (\S+)/.exec(entry.msg ?? '');
        if (listening?.[1] !== undefined) {
          clearTimeout(timer);
          resolve(listening[1]);
        }
        if (entry.msg?.startsWith('Password reset requested (development mailer') === true) {
          mail.push({
            to: entry.to ?? '',
            name: entry.name ?? '',
            token: entry.token ?? '',
            expiresAt: new Date(entry.expiresAt ?? 0),
          });
        }
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', (chunk: Buffer) => {
      if (output.length < 100_000) output += chunk.toString();
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`The blog on ${runtime} exited (${code}) before listening:\n${output}`));
    });
  });
  return {
    origin,
    mail,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
