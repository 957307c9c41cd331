import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = join(root, 'bin/proceed.js');
const minimalDirectory = join(root, 'examples/minimal');
const minimalEntry = 'examples/minimal/src/app.ts';
const minimalRoutes = ['GET /api/tasks', 'GET /api/tasks/:id', 'POST /api/tasks'];

/** Each test starts node processes that compile TypeScript; a loaded machine makes that slow. */
const slow = { timeout: 60_000 };

const scratch = mkdtempSync(join(tmpdir(), 'proceed-cli-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A project folder outside the repository that still resolves `proceed` and `zod`. */
function project(name: string, files: Record<string, string>): string {
  const directory = join(scratch, name);
  mkdirSync(directory, { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(directory, 'node_modules'), 'dir');
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(join(directory, file, '..'), { recursive: true });
    writeFileSync(join(directory, file), text);
  }
  return directory;
}

function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const key of ['PORT', 'HOST', 'LOG_LEVEL', 'DATABASE_URL'] as const)
    if (!(key in extra)) delete env[key];
  return env;
}

interface Running {
  child: ChildProcess;
  output(): string;
  waitFor(pattern: RegExp | string, timeoutMs?: number): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcess>();

afterEach(() => {
  // The CLI runs in its own process group here, so a leftover server and its children all go.
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
});

function launch(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Running {
  const child = spawn(process.execPath, [bin, ...args], {
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
  const waitFor = (pattern: RegExp | string, timeoutMs = 30_000) =>
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
          reject(new Error(`The CLI exited before ${String(pattern)}; output:\n${output}`));
        }
      };
      listeners.add(check);
      check();
    });
  return { child, output: () => output, waitFor, exited };
}

async function runCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [bin, ...args], {
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

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function fetchText(url: string): Promise<string | undefined> {
  try {
    return await (await fetch(url)).text();
  } catch {
    return undefined;
  }
}

async function eventually(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`Timed out: ${what}`);
}

describe('help and usage errors', slow, () => {
  it('prints the overview with --help and exits 0', async () => {
    const result = await runCli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: proceed <command> [entry] [options]');
    for (const command of ['start', 'dev', 'routes', 'openapi', 'manifest']) {
      expect(result.stdout).toMatch(new RegExp(`^ {2}${command} `, 'm'));
    }
    expect(result.stdout).toContain('src/app.ts, app.ts, src/index.ts');
  });

  it('prints each command’s help', async () => {
    const start = await runCli(['start', '--help']);
    expect(start.code).toBe(0);
    expect(start.stdout).toContain('Usage: proceed start [entry] [--port N] [--host H]');
    const openapi = await runCli(['help', 'openapi']);
    expect(openapi.stdout).toContain('Usage: proceed openapi');
    const version = await runCli(['--version']);
    const { version: expected } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(version.stdout.trim()).toBe(expected);
  });

  it('rejects a bad port with the message and the usage, exit 2', async () => {
    const result = await runCli(['start', minimalEntry, '--port', 'abc']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('proceed: --port must be a port number from 0 to 65535, got "abc"');
    expect(result.stderr).toContain('Usage: proceed start');
    const env = await runCli(['start', minimalEntry], { env: { PORT: '70000' } });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('PORT must be a port number from 0 to 65535, got "70000"');
  });

  it('rejects unknown flags, commands and extra arguments, exit 2', async () => {
    const flag = await runCli(['routes', '--nope']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("Unknown option '--nope'");
    expect(flag.stderr).toContain('Usage: proceed routes');
    const command = await runCli(['serve']);
    expect(command.code).toBe(2);
    expect(command.stderr).toContain('Unknown command "serve"');
    const extra = await runCli(['routes', 'a.ts', 'b.ts']);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('Unexpected argument "b.ts"');
    const none = await runCli([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('No command given');
  });
});

describe('entries', slow, () => {
  it('names every default it tried when there is no entry, exit 2', async () => {
    const empty = join(scratch, 'empty');
    mkdirSync(empty, { recursive: true });
    const result = await runCli(['routes'], { cwd: empty });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`No app entry found in ${empty}: tried src/app.ts, app.ts, src/index.ts`);
    const start = await runCli(['start'], { cwd: empty });
    expect(start.code).toBe(2);
  });

  it('names a missing explicit entry, exit 2', async () => {
    const result = await runCli(['start', 'nowhere/app.ts']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('App entry not found: nowhere/app.ts');
  });

  it('explains a default export that is not an app, exit 2', async () => {
    const directory = project('not-an-app', {
      'number.ts': 'export default 42;\n',
      'none.ts': 'export const app = 1;\n',
    });
    const number = await runCli(['routes', 'number.ts'], { cwd: directory });
    expect(number.code).toBe(2);
    expect(number.stderr).toContain('number.ts: its default export is number, not an app');
    const none = await runCli(['routes', 'none.ts'], { cwd: directory });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('none.ts has no default export');
  });

  it('reports an app that throws while loading, exit 1, with the stack', async () => {
    const directory = project('throws', { 'src/app.ts': "throw new Error('database unreachable');\n" });
    const result = await runCli(['routes'], { cwd: directory });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Error: database unreachable');
    expect(result.stderr).toContain('src/app.ts');
  });

  it('reports a configuration mistake by its message alone, exit 1', async () => {
    const directory = project('misnamed', {
      'src/app.ts': [
        "import { createApp, procedure, procedures } from 'proceedjs';",
        "export default createApp({ logger: false }).mount([procedures('posts', { publishPost: procedure().mutation(() => null) })]);",
        '',
      ].join('\n'),
    });
    const result = await runCli(['routes'], { cwd: directory });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      'proceed: Procedure "posts.publishPost" has no conventional prefix (list, get, create, update, delete) and no .rest({ method, path }) override',
    );
  });
});

describe('proceed routes', slow, () => {
  it('tells a factory entry it will not serve: the blog then opens no database on disk', async () => {
    const directory = project('blog-routes', {});
    const blog = fileURLToPath(new URL('../../examples/blog/src/app.ts', import.meta.url));
    const result = await runCli(['routes', blog], { cwd: directory });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('POST    /api/posts/:id/publish');
    expect(existsSync(join(directory, '.data'))).toBe(false);
  });

  it('prints the route table of the default entry', async () => {
    const result = await runCli(['routes'], { cwd: minimalDirectory });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout.trimEnd().split('\n')).toEqual([
      'METHOD  PATH            PROCEDURE         GUARDS',
      'GET     /api/tasks      tasks.listTasks   -',
      'GET     /api/tasks/:id  tasks.getTask     -',
      'POST    /api/tasks      tasks.createTask  -',
    ]);
  });

  it('prints guards by name, and JSON with --json', async () => {
    const directory = project('guarded', {
      'src/app.ts': `
import { createApp, guard, procedure, procedures } from 'proceedjs';
const admin = guard({ name: 'admin', check: () => false });
const open = guard({ name: 'open', check: () => true });
const things = procedures('things', {
  listThings: procedure().query(() => []),
  deleteThing: procedure().guard(admin, open).mutation(() => undefined),
  archiveThing: procedure().rest({ method: 'POST', path: '/things/:id/archive' }).mutation(() => null),
});
export default () => createApp({ logger: false }).mount([things], { prefix: '/v1' });
`,
    });
    const table = await runCli(['routes'], { cwd: directory });
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('DELETE  /v1/things/:id          things.deleteThing   admin, open');
    const json = await runCli(['routes', '--json'], { cwd: directory });
    expect(JSON.parse(json.stdout)).toEqual([
      { method: 'GET', path: '/v1/things', procedure: 'things.listThings', guards: [] },
      {
        method: 'DELETE',
        path: '/v1/things/:id',
        procedure: 'things.deleteThing',
        guards: ['admin', 'open'],
      },
      { method: 'POST', path: '/v1/things/:id/archive', procedure: 'things.archiveThing', guards: [] },
    ]);
  });
});

describe('proceed openapi and manifest', slow, () => {
  it('prints a valid OpenAPI document with every route', async () => {
    const result = await runCli(['openapi', minimalEntry, '--title', 'Tasks', '--version', '2.0.0']);
    expect(result.code).toBe(0);
    const document = JSON.parse(result.stdout) as {
      openapi: string;
      info: { title: string; version: string };
      paths: Record<string, Record<string, { operationId: string; tags: string[] }>>;
    };
    expect(document.openapi).toBe('3.1.0');
    expect(document.info).toEqual({ title: 'Tasks', version: '2.0.0' });
    expect(document.paths['/api/tasks']?.get?.operationId).toBe('listTasks');
    expect(document.paths['/api/tasks']?.post?.operationId).toBe('createTask');
    expect(document.paths['/api/tasks/{id}']?.get?.operationId).toBe('getTask');
    expect(document.paths['/api/tasks/{id}']?.get?.tags).toEqual(['tasks']);
    const { default: SwaggerParser } = await import('@apidevtools/swagger-parser');
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
  });

  it('writes YAML to a file when --out ends in .yaml', async () => {
    const out = join(scratch, 'docs', 'openapi.yaml');
    const result = await runCli(['openapi', minimalEntry, '--out', out]);
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain('openapi');
    const document = parseYaml(readFileSync(out, 'utf8')) as {
      openapi: string;
      paths: Record<string, unknown>;
    };
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/api/tasks', '/api/tasks/{id}']));
    const bad = await runCli(['openapi', minimalEntry, '--format', 'xml']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--format must be json or yaml, got "xml"');
  });

  it('prints the document the docs plugin serves, title and version included', async () => {
    const directory = project('documented', {
      'src/app.ts': `
import { createApp, procedure, procedures } from 'proceedjs';
import { docsPlugin } from 'proceedjs/openapi';
const things = procedures('things', { listThings: procedure().query(() => []) });
export default async () => {
  const app = createApp({ logger: false }).mount([things]);
  await app.register(docsPlugin, { openapi: { info: { title: 'Served', version: '9.9.9' } } });
  return app;
};
`,
    });
    const result = await runCli(['openapi'], { cwd: directory });
    expect(result.code).toBe(0);
    const document = JSON.parse(result.stdout) as { info: { title: string; version: string } };
    expect(document.info).toEqual({ title: 'Served', version: '9.9.9' });
  });

  it('prints the client route manifest', async () => {
    const result = await runCli(['manifest', minimalEntry]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      tasks: {
        listTasks: { method: 'GET', path: '/tasks', inputMode: 'query' },
        getTask: { method: 'GET', path: '/tasks/:id', inputMode: 'query' },
        createTask: { method: 'POST', path: '/tasks', inputMode: 'body' },
      },
    });
  });
});

describe('proceed start', slow, () => {
  it('serves on the --port flag over PORT, logs each route, and exits 0 on SIGTERM', async () => {
    const [flagPort, envPort] = [await freePort(), await freePort()];
    const server = launch(['start', minimalEntry, '--port', String(flagPort)], {
      env: { PORT: String(envPort) },
    });
    await server.waitFor(`Server listening at http://127.0.0.1:${flagPort}`);
    const health = await fetch(`http://127.0.0.1:${flagPort}/api/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const tasks = await fetch(`http://127.0.0.1:${flagPort}/api/tasks`);
    expect(await tasks.json()).toEqual({ data: [{ id: '1', title: 'Try Proceed', done: false }] });
    expect(await fetchText(`http://127.0.0.1:${envPort}/api/health`)).toBeUndefined();
    const logged = server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    for (const route of minimalRoutes) expect(logged).toContain(route);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.output()).toContain('SIGTERM received: shutting down');
  });

  it('takes the port from PORT and the host from HOST when no flag is given', async () => {
    const port = await freePort();
    const server = launch(['start', minimalEntry], { env: { PORT: String(port), HOST: '127.0.0.1' } });
    await server.waitFor(`Server listening at http://127.0.0.1:${port}`);
    expect((await fetch(`http://127.0.0.1:${port}/api/health`)).status).toBe(200);
    server.child.kill('SIGINT');
    expect((await server.exited).code).toBe(0);
  });

  it('names the port in use, exit 1', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    try {
      const result = await runCli(['start', minimalEntry, '--port', String(port)]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`proceed: Port ${port} is already in use on 127.0.0.1 (EADDRINUSE)`);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});

describe('proceed dev', slow, () => {
  const appSource = (word: string) => `
import { createApp, procedure, procedures } from 'proceedjs';
const greetings = procedures('greetings', {
  listGreetings: procedure().query(() => ({ text: '${word}' })),
});
export default async () => createApp().mount([greetings]);
`;

  it('restarts on change, survives a broken edit, and exits 0 on SIGTERM', { timeout: 90_000 }, async () => {
    const directory = project('dev', {
      'src/app.ts': appSource('hello'),
      'src/util/words.ts': 'export {};\n',
    });
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/api/greetings`;
    const dev = launch(['dev', '--port', String(port)], { cwd: directory });
    await dev.waitFor(`Server listening at http://127.0.0.1:${port}`, 30_000);
    expect(dev.output()).toContain('[proceed dev] watching src');
    expect(dev.output()).toMatch(
      /METHOD\s+PATH\s+PROCEDURE\s+GUARDS\nGET\s+\/api\/greetings\s+greetings\.listGreetings/,
    );
    expect(await fetchText(url)).toBe('{"text":"hello"}');

    writeFileSync(join(directory, 'src/app.ts'), appSource('bonjour'));
    await eventually(
      async () => (await fetchText(url)) === '{"text":"bonjour"}',
      30_000,
      'the edited app serves',
    );
    expect(dev.output()).toContain('[proceed dev] src/app.ts changed: restarting');

    writeFileSync(join(directory, 'src/app.ts'), 'export default (;\n');
    await dev.waitFor('waiting for a change to restart', 30_000);
    // A change in a nested directory counts too.
    writeFileSync(join(directory, 'src/app.ts'), appSource('hallo'));
    writeFileSync(join(directory, 'src/util/words.ts'), 'export const words = 1;\n');
    await eventually(
      async () => (await fetchText(url)) === '{"text":"hallo"}',
      30_000,
      'the fixed app serves',
    );

    dev.child.kill('SIGTERM');
    expect(await dev.exited).toEqual({ code: 0, signal: null });
    expect(await fetchText(url)).toBeUndefined();
  });
});
