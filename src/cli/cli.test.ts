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
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import {
  accepts,
  bin,
  eventually,
  fetchText,
  freePort,
  type LaunchOptions,
  launch,
  type Running,
  requestInFlight,
  root,
  runToEnd,
} from '../../test/processes.js';

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

/** A JavaScript app: things kept in memory, each stamped with the pid of the process that made it. */
const thingsApp = `
import { createApp, procedure, procedures } from 'proceedjs';
import { z } from 'zod';
const things = [];
export default createApp().mount([
  procedures('things', {
    listThings: procedure().query(() => ({ data: things })),
    createThing: procedure()
      .input(z.object({ name: z.string() }))
      .mutation(({ input }) => {
        const thing = { id: String(things.length + 1), name: input.name, pid: process.pid };
        things.push(thing);
        return thing;
      }),
  }),
]);
`;

/** The pids in the "Server listening" log lines, in order. */
function listeningPids(server: Running): number[] {
  return server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes('Server listening'))
    .map((line) => (JSON.parse(line) as { pid: number }).pid);
}

/** The CLI, started as `node bin/proceed.js …`, in a process group of its own. */
const launchCli = (args: string[], options: LaunchOptions = {}): Running =>
  launch(process.execPath, [bin, ...args], options);

const runCli = (args: string[], options: LaunchOptions = {}) =>
  runToEnd(process.execPath, [bin, ...args], options);

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

  it('names the file and line of a compiled module that does not parse, which Node keeps out of the error', async () => {
    const directory = project('unparsed', {
      'dist/app.js': "import './broken.js';\nexport default {};\n",
      'dist/broken.js': 'export const settings = {\n',
    });
    const result = await runCli(['routes', 'dist/app.js'], { cwd: directory });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('proceed: dist/app.js could not be loaded: Unexpected end of input');
    expect(result.stderr).toContain(`${pathToFileURL(join(directory, 'dist/broken.js')).href}:2`);
    expect(result.stderr).not.toContain('node:internal');
  });

  it('refuses an --out it cannot write in one line, and an empty one as a usage mistake', async () => {
    const directory = mkdtempSync(join(scratch, 'out-'));
    const intoDirectory = await runCli(['manifest', minimalEntry, '--out', directory]);
    expect(intoDirectory.code).toBe(1);
    expect(intoDirectory.stderr).toBe(`proceed: Could not write ${directory}: it is a directory\n`);
    const empty = await runCli(['openapi', minimalEntry, '--out', '']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(
      /^proceed: --out names the file to write: it was given an empty name\n\nUsage: proceed openapi/,
    );
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
  it('tells a factory entry it will not serve: the blog then opens no database and needs no secret', async () => {
    const directory = project('blog-routes', {});
    const blog = fileURLToPath(new URL('../../examples/blog/src/main.ts', import.meta.url));
    const result = await runCli(['routes', blog], { cwd: directory, env: { NODE_ENV: 'production' } });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('POST    /api/posts/:id/publish');
    expect(result.stderr).toBe('');
    expect(existsSync(join(directory, '.data'))).toBe(false);
  });

  it('marks the apps an entry makes as inspected, so services given when the app serves are never asked for, and refuses to serve them', async () => {
    const directory = project('inspected', {
      'app.mjs': `
import { createApp, procedure, procedures } from 'proceedjs';
import { authenticated, authPlugin } from 'proceedjs/auth';
import { idempotencyPlugin } from 'proceedjs/idempotency';
const app = createApp();
const fail = () => { throw new Error('a service was asked for while the app was only read'); };
await app.register(authPlugin, fail);
await app.register(idempotencyPlugin, { store: fail, creates: true });
app.mount([procedures('things', { createThing: procedure().guard(authenticated).mutation(() => ({ ok: true })) })]);
if (process.env.LISTEN_TOO === '1') await app.listen({ port: 0 });
export default app;
`,
    });
    const routes = await runCli(['routes', 'app.mjs'], { cwd: directory });
    expect(routes.stderr).toBe('');
    expect(routes.stdout).toMatch(/POST\s+\/api\/things\s+things\.createThing\s+authenticated/);
    const openapi = await runCli(['openapi', 'app.mjs'], { cwd: directory });
    expect(openapi.code).toBe(0);
    const document = JSON.parse(openapi.stdout);
    expect(document.paths['/api/things'].post.parameters).toContainEqual(
      expect.objectContaining({ name: 'Idempotency-Key' }),
    );
    expect(Object.keys(document.paths['/api/things'].post.responses)).toContain('401');
    // An empty LOG_LEVEL is unset: the app is silenced, and its line does not reach the JSON.
    const chatty = project('chatty', {
      'package.json': '{ "type": "module" }\n',
      'app.mjs': `import { createApp } from 'proceedjs';
const app = createApp();
app.log.info('loading the app');
export default app;
`,
    });
    const quiet = await runCli(['openapi', 'app.mjs'], { cwd: chatty, env: { LOG_LEVEL: '' } });
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).not.toContain('loading the app');
    expect(JSON.parse(quiet.stdout)).toMatchObject({ openapi: '3.1.0' });
    const listening = await runCli(['routes', 'app.mjs'], { cwd: directory, env: { LISTEN_TOO: '1' } });
    expect(listening.code).toBe(1);
    expect(listening.stderr).toContain('This app was built to be inspected');
  });

  it('finds the entry package.json names, as in the blog, and says so when it is missing', async () => {
    const blog = fileURLToPath(new URL('../../examples/blog', import.meta.url));
    const result = await runCli(['routes'], { cwd: blog, env: { NODE_ENV: 'production' } });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('POST    /api/posts/:id/attachments');
    const directory = project('named-entry', {
      'package.json': '{ "type": "module", "proceed": { "entry": "server/entry.ts" } }\n',
      'src/app.ts': 'export {};\n',
    });
    const missing = await runCli(['routes'], { cwd: directory });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      'App entry not found: server/entry.ts, which package.json names as proceed.entry',
    );
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
import { createApp, guard, procedure, procedures, step } from 'proceedjs';
const admin = guard({ name: 'admin', check: () => false });
const open = guard({ name: 'open', check: () => true });
// A step that may answer 403 checks access, as owned() does; one that may not is no check.
const member = step({ name: 'member', documents: { problems: ['FORBIDDEN'] }, run: ({ next }) => next() });
const tenant = step({ name: 'tenant', documents: { problems: ['NOT_FOUND'] }, run: ({ next }) => next() });
const things = procedures('things', {
  listThings: procedure().query(() => []),
  deleteThing: procedure().guard(admin, open).mutation(() => undefined),
  archiveThing: procedure()
    .rest({ method: 'POST', path: '/things/:id/archive' })
    .guard(open)
    .use(tenant)
    .use(member)
    .mutation(() => null),
});
export default () => createApp({ logger: false }).mount([things], { prefix: '/v1' });
`,
    });
    const table = await runCli(['routes'], { cwd: directory });
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('DELETE  /v1/things/:id          things.deleteThing   admin, open');
    expect(table.stdout).toContain('POST    /v1/things/:id/archive  things.archiveThing  open, member');
    const json = await runCli(['routes', '--json'], { cwd: directory });
    expect(JSON.parse(json.stdout)).toEqual([
      { method: 'GET', path: '/v1/things', procedure: 'things.listThings', guards: [] },
      {
        method: 'DELETE',
        path: '/v1/things/:id',
        procedure: 'things.deleteThing',
        guards: ['admin', 'open'],
      },
      {
        method: 'POST',
        path: '/v1/things/:id/archive',
        procedure: 'things.archiveThing',
        guards: ['open', 'member'],
      },
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
    // What was written, and nothing else: no request line of the app, no warning.
    expect(result.stdout).toBe(`Wrote ${out} (5 operations)\n`);
    expect(result.stderr).toBe('');
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

  it('ends quietly, exit code 0, when its reader closes the pipe early (`proceed openapi | head -c 10`)', async () => {
    // A shell's pipe, as a user's: a Node child's stdout is a socket, which never says EPIPE here.
    // The blog's document (150 KB) is more than a pipe holds, so the write outlives the reader.
    const result = await runToEnd(
      'bash',
      [
        '-c',
        `"${process.execPath}" "${bin}" openapi | head -c 10 > /dev/null; echo "exit \${PIPESTATUS[0]}"`,
      ],
      { cwd: join(root, 'examples/blog'), env: { NODE_ENV: 'production' } },
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('exit 0\n');
  });

  it("reads a document served by a route of app.server (Fastify's own, as @fastify/swagger adds)", async () => {
    const directory = project('documented-fastify', {
      'src/app.ts': `
import { createApp, procedure, procedures } from 'proceedjs';
const things = procedures('things', { listThings: procedure().query(() => []) });
const app = createApp({ logger: false }).mount([things]);
app.server.get('/api/docs/json', async () => ({ openapi: '3.1.0', info: { title: 'From Fastify', version: '4.5.6' }, paths: {} }));
export default app;
`,
    });
    const result = await runCli(['openapi'], { cwd: directory });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as { info: { title: string } }).info.title).toBe('From Fastify');
  });

  it('reads the served document of an app made with proceedjs/node, which has no inject (as the blog is)', async () => {
    const directory = project('documented-node', {
      'src/app.ts': `
import { createApp, procedure, procedures } from 'proceedjs/node';
import { docsPlugin } from 'proceedjs/openapi';
const things = procedures('things', { listThings: procedure().query(() => []) });
export default async () => {
  const app = createApp({ logger: false }).mount([things]);
  await app.register(docsPlugin, { openapi: { info: { title: 'Served on Node', version: '1.2.3' } } });
  return app;
};
`,
    });
    const result = await runCli(['openapi'], { cwd: directory });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const document = JSON.parse(result.stdout) as { info: { title: string }; paths: Record<string, unknown> };
    expect(document.info.title).toBe('Served on Node');
    expect(Object.keys(document.paths)).toContain('/api/things');
  });

  it("writes the AsyncAPI document of the app's socket procedures with --asyncapi, and refuses an app without", async () => {
    const directory = project('sockets', {
      'src/app.ts': `
import { createApp, procedure, procedures, webSocket } from 'proceedjs';
import { z } from 'zod';
const rooms = procedures('rooms', {
  roomSocket: procedure()
    .rest({ method: 'GET', path: '/rooms/:room/socket' })
    .input(z.object({ room: z.string() }))
    .output(webSocket({ receive: z.object({ text: z.string() }), send: z.object({ text: z.string() }) }))
    .query(async function* ({ messages }) {
      for await (const said of messages) yield said;
    }),
});
export default createApp({ logger: false }).mount([rooms]);
`,
    });
    const out = join(directory, 'asyncapi.yaml');
    const written = await runCli(['openapi', '--asyncapi', '--out', out], { cwd: directory });
    expect(written.code).toBe(0);
    expect(written.stdout).toBe(`Wrote ${out} (1 channel)\n`);
    const document = parseYaml(readFileSync(out, 'utf8')) as {
      asyncapi: string;
      channels: Record<string, { address: string }>;
    };
    expect(document.asyncapi).toBe('3.0.0');
    expect(document.channels.roomSocket?.address).toBe('/api/rooms/{room}/socket');
    const none = await runCli(['openapi', minimalEntry, '--asyncapi']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('The app has no WebSocket procedures');
  });

  it('lints the document with the OWASP rules and the override: exit 0 without errors, 1 listing each', async () => {
    const app = (items: string) => `
import { createApp, guard, procedure, procedures, rateLimit } from 'proceedjs';
import { z } from 'zod';
// OWASP wants every write behind a security scheme: a guard puts bearerAuth on it.
const signedIn = guard({ name: 'signed in', requiresUser: true, check: () => true });
// An admin's route under /admin: its requirement names the role, unlike a signed-in user's.
const admin = guard({ name: 'admin', requiresUser: true, roles: ['admin'], check: () => false });
const Thing = z.object({ id: z.uuid(), name: z.string().max(100), tags: ${items} });
export default createApp({ logger: false, userFromContext: true }).mount([
  procedures('things', {
    getThing: procedure()
      .input(z.object({ id: z.uuid() }))
      .output(Thing)
      .query(({ input }) => ({ id: input.id, name: 'a thing', tags: [] })),
    createThing: procedure()
      .guard(signedIn)
      .use(rateLimit({ name: 'writes', max: 10 }))
      .input(z.object({ name: z.string().min(1).max(100), count: z.int().min(1).max(10) }))
      .output(Thing)
      .mutation(({ input }) => ({ id: crypto.randomUUID(), name: input.name, tags: [] })),
    countThings: procedure()
      .rest({ method: 'GET', path: '/admin/things/count' })
      .guard(signedIn, admin)
      .output(z.object({ count: z.int().min(0).max(1000) }))
      .query(() => ({ count: 0 })),
  }),
]);
`;
    const bounded = project('owasp-bounded', { 'src/app.ts': app('z.array(z.string().max(20)).max(5)') });
    const passed = await runCli(['openapi', '--lint'], { cwd: bounded });
    expect(passed.stderr).toBe('');
    expect(passed.code).toBe(0);
    expect(passed.stdout).toMatch(
      /OWASP rules \(with .*openapi-owasp\.spectral\.yaml\): 0 errors, \d+ warnings\n$/,
    );
    // Findings, not the document.
    expect(passed.stdout).not.toContain('"openapi"');

    const unbounded = project('owasp-unbounded', { 'src/app.ts': app('z.array(z.string().max(20))') });
    const failed = await runCli(['openapi', '--lint'], { cwd: unbounded });
    expect(failed.code).toBe(1);
    // One line per finding, errors first: the unbounded array in each answer that holds it.
    expect(failed.stdout.split('\n').slice(0, 2)).toEqual([
      'error owasp:api4:2023-array-limit paths./api/things/{id}.get.responses.200.content.application/json.schema.properties.tags: Schema of type array must specify maxItems.',
      'error owasp:api4:2023-array-limit paths./api/things.post.responses.201.content.application/json.schema.properties.tags: Schema of type array must specify maxItems.',
    ]);
    expect(failed.stdout).toContain(': 2 errors,');
    expect(failed.stderr).toBe('proceed: the OpenAPI document has 2 errors under the OWASP rules\n');

    const misused = await runCli(['openapi', '--lint', '--format', 'yaml'], { cwd: bounded });
    expect(misused.code).toBe(2);
    expect(misused.stderr).toContain('--format needs --out');
  });

  it('writes the manifest as a TypeScript module when --out ends in .ts, saying what it wrote', async () => {
    const out = join(scratch, 'web', 'routes.ts');
    const result = await runCli(['manifest', minimalEntry, '--out', out]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`Wrote ${out} (3 routes)\n`);
    expect(result.stderr).toBe('');
    const module = readFileSync(out, 'utf8');
    expect(module).toContain("import type { RouteManifest } from 'proceedjs/client';");
    expect(module).toMatch(
      /^export default \{\n {2}"tasks": \{[\s\S]*\} as const satisfies RouteManifest;\n$/m,
    );
    const json = join(scratch, 'web', 'routes.json');
    await runCli(['manifest', minimalEntry, '--out', json]);
    expect(Object.keys(JSON.parse(readFileSync(json, 'utf8')) as object)).toEqual(['tasks']);
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
    const server = launchCli(['start', minimalEntry, '--port', String(flagPort)], {
      env: { PORT: String(envPort) },
    });
    await server.waitFor(`Server listening at http://127.0.0.1:${flagPort}`);
    const health = await fetch(`http://127.0.0.1:${flagPort}/api/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const tasks = await fetch(`http://127.0.0.1:${flagPort}/api/tasks`);
    expect(await tasks.json()).toEqual({ data: [{ id: '1', title: 'Try Proceed', done: false }] });
    // Not on PORT: its log names the flag's port alone (probing PORT itself could meet another
    // test's server that took the freed port meanwhile).
    expect(server.output()).not.toContain(`:${envPort}`);
    const logged = server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    for (const route of minimalRoutes) expect(logged).toContain(route);
    // A TypeScript entry runs in a child process that has tsx loaded.
    expect(listeningPids(server)).not.toContain(server.pid);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.output()).toContain('SIGTERM received: shutting down');
  });

  it('runs a compiled entry in its own process, on plain node, and exits 0 on SIGTERM', async () => {
    const directory = project('compiled', { 'package.json': '{ "type": "module" }\n', 'app.js': thingsApp });
    const port = await freePort();
    const server = launchCli(['start', 'app.js', '--port', String(port)], { cwd: directory });
    await server.waitFor(`Server listening at http://127.0.0.1:${port}`);
    expect(listeningPids(server)).toEqual([server.pid]);
    expect(await fetchText(`http://127.0.0.1:${port}/api/things`)).toBe('{"data":[]}');
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });

  it('stops with npx: npm exec passes no signal to the shell it runs the command in', async () => {
    const directory = project('npx', { 'package.json': '{ "type": "module" }\n', 'app.js': thingsApp });
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/api/things`;
    const npx = launch('npx', ['--no-install', 'proceed', 'start', 'app.js', '--port', String(port)], {
      cwd: directory,
    });
    await npx.waitFor(`Server listening at http://127.0.0.1:${port}`);
    const [server] = listeningPids(npx);
    expect(server).not.toBe(npx.pid);
    expect(await fetchText(url)).toBe('{"data":[]}');
    // npx alone, as a process manager or a terminal's kill would: not its process group.
    process.kill(npx.pid as number, 'SIGTERM');
    await eventually(async () => (await fetchText(url)) === undefined, 15_000, 'the server stops');
    await eventually(async () => !isRunning(server as number), 15_000, 'the server process exits');
  });

  it('takes the port from PORT and the host from HOST when no flag is given', async () => {
    const port = await freePort();
    const server = launchCli(['start', minimalEntry], { env: { PORT: String(port), HOST: '127.0.0.1' } });
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

describe('proceed start --workers', slow, () => {
  it('refuses a count that is not 1 to 256 or auto, exit 2', async () => {
    for (const workers of ['0', 'lots', '257']) {
      const result = await runCli(['start', minimalEntry, '--workers', workers]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`--workers must be a number from 1 to 256 or "auto", got "${workers}"`);
    }
  });

  it('serves from N processes, replaces one that dies, and drains them all on SIGTERM', async () => {
    const directory = project('cluster', { 'package.json': '{ "type": "module" }\n', 'app.js': thingsApp });
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    // At debug, each request is also logged on arrival: the test sees a worker has it.
    const primary = launchCli(['start', 'app.js', '--port', String(port), '--workers', '2'], {
      cwd: directory,
      env: { LOG_LEVEL: 'debug' },
    });
    await primary.waitFor(`2 workers serving ${origin}`);
    // A worker's own log line can reach the shared output after the primary's summary.
    await eventually(
      async () => listeningPids(primary).length === 2,
      10_000,
      'both workers log that they listen',
    );
    const workers = listeningPids(primary);
    expect(workers).toHaveLength(2);
    expect(workers).not.toContain(primary.pid);
    // One route table for the cluster, not one per worker.
    expect(primary.output().match(/"msg":"POST \/api\/things"/g)).toHaveLength(1);
    // Both workers answer: each counts its own things.
    const created = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        fetch(`${origin}/api/things`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: `thing ${index}` }),
        }).then((response) => response.json() as Promise<{ pid: number }>),
      ),
    );
    expect(new Set(created.map((thing) => thing.pid))).toEqual(new Set(workers));

    const [victim] = workers as [number];
    process.kill(victim, 'SIGKILL');
    await primary.waitFor(
      new RegExp(`worker \\d \\(pid ${victim}\\) was killed by SIGKILL; starting a new one in 500 ms`),
    );
    await eventually(async () => listeningPids(primary).length === 3, 30_000, 'a replacement worker listens');
    expect(await fetchText(`${origin}/api/health`)).toBe('{"status":"ok"}');

    const inFlight = requestInFlight(port, '/api/things?in-flight', { name: 'in flight' });
    await inFlight.sent;
    // A worker has the request (it was routed) before the signal comes.
    await primary.waitFor(/"url":"\/api\/things\?in-flight"[^\n]*"msg":"incoming request"/);
    primary.child.kill('SIGTERM');
    await primary.waitFor('SIGTERM received: stopping 2 workers');
    await eventually(async () => !(await accepts(port)), 10_000, 'the port stops accepting');
    inFlight.finish();
    expect(await inFlight.answer).toMatch(/^HTTP\/1\.1 201 Created/);
    expect(await primary.exited).toEqual({ code: 0, signal: null });
    expect(primary.output()).toContain('every worker has stopped');
  });

  it('lets each worker finish its requests and exit by itself when the primary is killed outright', async () => {
    const directory = project('cluster-orphaned', {
      'package.json': '{ "type": "module" }\n',
      'app.js': thingsApp,
    });
    const port = await freePort();
    const primary = launchCli(['start', 'app.js', '--port', String(port), '--workers', '2'], {
      cwd: directory,
      env: { LOG_LEVEL: 'debug' },
    });
    await primary.waitFor(`2 workers serving http://127.0.0.1:${port}`);
    await eventually(
      async () => listeningPids(primary).length === 2,
      10_000,
      'both workers log that they listen',
    );
    const workers = listeningPids(primary);
    const inFlight = requestInFlight(port, '/api/things?orphaned', { name: 'orphaned' });
    await inFlight.sent;
    await primary.waitFor(/"url":"\/api\/things\?orphaned"[^\n]*"msg":"incoming request"/);
    process.kill(primary.pid, 'SIGKILL');
    // The workers still write to the primary's pipes after it is gone.
    await eventually(async () => primary.output().includes('SIGTERM received'), 10_000, 'a worker drains');
    inFlight.finish();
    expect(await inFlight.answer).toMatch(/^HTTP\/1\.1 201 Created/);
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await eventually(async () => !workers.some(alive), 15_000, 'the workers exit');
    expect(primary.output().match(/SIGTERM received: shutting down/g)).toHaveLength(2);
  });

  it('stops at the first worker when the app refuses to start, exit 1', async () => {
    const directory = project('cluster-refused', {
      'package.json': '{ "type": "module" }\n',
      'app.js': [
        "import { ProceedConfigError } from 'proceedjs';",
        'export default (entry) => {',
        "  throw new ProceedConfigError('This app runs in one process, not ' + entry.workers);",
        '};',
        '',
      ].join('\n'),
    });
    const result = await runCli(['start', 'app.js', '--workers', '3', '--port', String(await freePort())], {
      cwd: directory,
    });
    expect(result.code).toBe(1);
    expect(result.stderr.match(/proceed: This app runs in one process, not 3/g)).toHaveLength(1);
    expect(result.stdout + result.stderr).toContain('before it listened; not starting the others');
  });
});

describe('proceed dev', slow, () => {
  const appSource = (word: string) => `
import { createHash } from 'node:crypto';
import { createApp, procedure, procedures } from 'proceedjs';
// Which secret the app signs with, without showing it.
const secret = createHash('sha256').update(process.env.JWT_SECRET ?? '').digest('hex').slice(0, 8);
const greetings = procedures('greetings', {
  listGreetings: procedure().query(() => ({ text: '${word}', secret })),
});
export default async () => createApp().mount([greetings]);
`;

  const greeting = async (url: string) => {
    const text = await fetchText(url);
    return text === undefined ? undefined : (JSON.parse(text) as { text: string; secret: string });
  };

  it('restarts on change with one secret for the session, survives a broken edit, and exits 0 on SIGTERM', {
    timeout: 90_000,
  }, async () => {
    const directory = project('dev', {
      'src/app.ts': appSource('hello'),
      'src/util/words.ts': 'export {};\n',
    });
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/api/greetings`;
    const dev = launchCli(['dev', '--port', String(port)], { cwd: directory, env: { JWT_SECRET: '' } });
    await dev.waitFor(`Server listening at http://127.0.0.1:${port}`, 30_000);
    expect(dev.output()).toContain('[proceed dev] watching src');
    expect(dev.output()).toContain(
      '[proceed dev] JWT_SECRET is not set: an app that signs tokens gets one random secret for this session',
    );
    expect(dev.output()).toMatch(
      /METHOD\s+PATH\s+PROCEDURE\s+GUARDS\nGET\s+\/api\/greetings\s+greetings\.listGreetings/,
    );
    const first = await greeting(url);
    expect(first?.text).toBe('hello');

    writeFileSync(join(directory, 'src/app.ts'), appSource('bonjour'));
    await eventually(async () => (await greeting(url))?.text === 'bonjour', 30_000, 'the edited app serves');
    // A new process, the same secret: tokens signed before the restart still verify.
    expect((await greeting(url))?.secret).toBe(first?.secret);
    expect(dev.output()).toContain('[proceed dev] src/app.ts changed: restarting');

    writeFileSync(join(directory, 'src/app.ts'), 'export default (;\n');
    await dev.waitFor('waiting for a change to restart', 30_000);
    // A change in a nested directory counts too.
    writeFileSync(join(directory, 'src/app.ts'), appSource('hallo'));
    writeFileSync(join(directory, 'src/util/words.ts'), 'export const words = 1;\n');
    await eventually(async () => (await greeting(url))?.text === 'hallo', 30_000, 'the fixed app serves');

    dev.child.kill('SIGTERM');
    expect(await dev.exited).toEqual({ code: 0, signal: null });
    expect(await fetchText(url)).toBeUndefined();
  });
});

/** Whether a process with this pid is still there. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
