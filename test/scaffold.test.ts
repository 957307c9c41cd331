/**
 * A new user's first ten minutes, from packed tarballs as the registry would serve them:
 * `npm create proceed` (here `npm exec` of the create-proceed tarball), `npm install`,
 * `npm test`, `npm run build`, then production: dev dependencies pruned (no TypeScript, no tsx),
 * `npm start`, the API over HTTP, SIGTERM, exit 0. The default template (notes on a database)
 * also runs its tests on PostgreSQL, is read by the CLI with no database, is driven through the
 * typed client, and starts twice on one PostgreSQL. Its notes' tests run on the template as
 * shipped; then `proceed generate resource` adds a resource with no terminal, and every later step
 * (the whole test run, the type check, the build, production) runs on the app with it, with no
 * edit: the generator only adds to the template's code. Each step's time is printed.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import pg from 'pg';
import { createClient, type RouteManifest } from 'proceedjs/client';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { api } from '../packages/create-proceed/template/app/src/app.js';
import { freshInstallArgs, installArgs, pack } from './packages.js';
import { createScratchDatabase } from './postgres.js';
import { freePort, launch, runToEnd } from './processes.js';

const scratch = mkdtempSync(join(tmpdir(), 'proceed-scaffold-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs a command in the app and fails with its output unless it exits 0. */
async function succeed(
  cwd: string,
  command: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<string> {
  const result = await runToEnd(command, args, { cwd, env });
  const output = `${result.stdout}\n${result.stderr}`;
  if (result.code !== 0)
    throw new Error(`${command} ${args.join(' ')} exited with ${result.code}:\n${output}`);
  return output;
}

/** How long each step takes, printed once the test has measured them all. */
function stopwatch() {
  const times: [string, number][] = [];
  return {
    async time<T>(step: string, work: () => Promise<T>): Promise<T> {
      const started = performance.now();
      try {
        return await work();
      } finally {
        times.push([step, (performance.now() - started) / 1000]);
      }
    },
    print(what: string): void {
      console.log(`${what}:\n${times.map(([step, s]) => `  ${step}: ${s.toFixed(1)} s`).join('\n')}`);
    },
  };
}

/** The two tarballs, packed once for every test of the file. */
type Packed = Awaited<ReturnType<typeof pack>>;
let packing: Promise<[Packed, Packed]> | undefined;
const packed = () => {
  packing ??= Promise.all([pack('.', scratch), pack('packages/create-proceed', scratch)]);
  return packing;
};

/**
 * `npm create proceed` as the registry would run it: the scaffolder's tarball, with the
 * framework's tarball as the app's `proceedjs`. Returns the app's directory and the output.
 */
async function create(name: string, ...options: string[]): Promise<{ app: string; output: string }> {
  const [framework, scaffolder] = await packed();
  const output = await succeed(scratch, 'npm', [
    'exec',
    '--yes',
    `--package=${scaffolder.tarball}`,
    '--',
    'create-proceed',
    name,
    ...options,
    '--proceed',
    framework.tarball,
  ]);
  return { app: join(scratch, name), output };
}

/** A JWT secret long enough for production. */
const secret = { JWT_SECRET: 'a-secret-of-at-least-32-bytes-for-the-tests' };

describe('npm create proceed, from the packed tarballs', () => {
  it('scaffolds the app template: it installs, takes a generated resource, passes its tests on PGlite and PostgreSQL, is read with no database, serves in production, and two instances on one PostgreSQL migrate once', {
    timeout: 900_000,
  }, async () => {
    const postgresUrl = inject('postgresUrl');
    const clock = stopwatch();
    const [framework] = await clock.time('pack both tarballs', () => packed());
    const { app, output: created } = await clock.time('scaffold', () => create('my-api'));
    expect(created).toContain('Created my-api in my-api:');
    expect(created).toContain('src/notes.ts');
    const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    // The tarball is the app's own: it and its Docker image build from a clean copy anywhere.
    expect(manifest.dependencies.proceedjs).toBe(`file:vendor/${basename(framework.tarball)}`);
    expect(existsSync(join(app, 'vendor', basename(framework.tarball)))).toBe(true);
    expect(readFileSync(join(app, 'Dockerfile'), 'utf8')).toContain('COPY vendor ./vendor\nRUN npm ci');
    expect(readFileSync(join(app, 'src/app.ts'), 'utf8')).toContain("title: 'My API'");

    const installed = await clock.time('npm install', () => succeed(app, 'npm', freshInstallArgs));
    // Every package it pulled in supports the Node.js Proceed supports.
    expect(installed).not.toContain('EBADENGINE');

    // Without TEST_DATABASE_URL its PostgreSQL tests are skipped, saying why (shown on the
    // notes' file alone: the whole run follows, on PostgreSQL too when there is one).
    const onPglite = stripVTControlCharacters(
      await clock.time('npm test (PGlite, the notes file)', () =>
        succeed(app, 'npm', ['test', '--', 'test/notes.test.ts'], { TEST_DATABASE_URL: '' }),
      ),
    );
    expect(onPglite).toMatch(/Tests\s+\d+ passed \| \d+ skipped/);

    // The app as scaffolded, committed: what destroy must leave it as.
    const git = (...args: string[]) =>
      succeed(app, 'git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args]);
    await git('init', '--quiet');
    await git('add', '-A');
    await git('commit', '--quiet', '-m', 'As scaffolded');
    /** What the generator added or changed since then, by path: drizzle-kit's metadata by name only. */
    const generatedFiles = async () => {
      const changed = (await git('status', '--porcelain', '--untracked-files=all'))
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => line.slice(3))
        .sort();
      return Object.fromEntries(
        changed.map((path) => [
          path,
          path.startsWith('drizzle/meta/') ? '' : readFileSync(join(app, path), 'utf8'),
        ]),
      );
    };

    // `proceed generate resource` with no terminal: a list, an enum, a reference to a user, a
    // field only its owner sees, a date and a time. The rest of this test runs on the app with bookmarks added, and
    // its tests and type check pass with no edit.
    const generate = [
      'proceed',
      'generate',
      'resource',
      'bookmarks',
      'url:string',
      'tags:string[]',
      'status:enum:unread,read',
      'author:ref:users?',
      'notes:text?@owner',
      // Written and read back on PGlite and PostgreSQL by the generated test.
      'due:date?',
      'remindAt:datetime?',
    ];
    const generated = await clock.time('proceed generate resource', () => succeed(app, 'npx', generate));
    const firstGeneration = await generatedFiles();
    expect(generated).toContain('Added bookmarks:');
    expect(generated).toContain("await client.bookmarks.createBookmark({ url: 'https://example.com/first',");
    const migration = readdirSync(join(app, 'drizzle')).find((name) => name.endsWith('_bookmarks.sql'));
    expect(migration).toBe('0001_bookmarks.sql');
    const sql = readFileSync(join(app, 'drizzle', migration ?? ''), 'utf8');
    expect(sql).toContain('CREATE TABLE "bookmarks"');
    expect(sql).toContain('"tags" varchar(255)[] NOT NULL');
    expect(sql).toContain('REFERENCES "public"."users"("id") ON DELETE cascade');
    expect(sql).toContain('REFERENCES "public"."users"("id") ON DELETE set null');
    expect(sql).toContain('CREATE INDEX "bookmarks_author_id_idx"');
    // Run again, it refuses: exit 2, one line, nothing written.
    const again = await runToEnd('npx', generate, { cwd: app });
    expect(again.code).toBe(2);
    expect(again.stderr.trim()).toBe('proceed: src/bookmarks.ts exists already: nothing was written');

    // Verbose: every test's name is printed, not only the slow ones'.
    const tested = stripVTControlCharacters(
      await clock.time(`npm test (PGlite${postgresUrl === null ? '' : ' and PostgreSQL'})`, () =>
        succeed(app, 'npm', ['test', '--', '--reporter=verbose'], {
          TEST_DATABASE_URL: postgresUrl ?? '',
          CI: 'true',
        }),
      ),
    );
    expect(tested).toMatch(/✓ test\/bookmarks\.test\.ts/);
    if (postgresUrl === null) expect(tested).toMatch(/Tests\s+\d+ passed \| \d+ skipped/);
    else {
      expect(tested).toMatch(/Tests\s+\d+ passed \(\d+\)/);
      expect(tested).not.toContain('skipped');
      expect(tested).toContain('are applied once when two instances start at the same time');
    }
    // A PostgreSQL that TEST_DATABASE_URL names and nothing answers at fails the run, never skips.
    const unreachable = await runToEnd('npm', ['test', '--', 'test/migrations.test.ts'], {
      cwd: app,
      env: { TEST_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/postgres', CI: 'true' },
    });
    expect(unreachable.code).not.toBe(0);
    expect(stripVTControlCharacters(unreachable.stdout)).toMatch(/Tests\s+2 failed/);
    await clock.time('npm run typecheck', () => succeed(app, 'npm', ['run', 'typecheck']));

    // Taken back before any database applied its migration: the app is as it was committed.
    const destroyed = await clock.time('proceed destroy resource', () =>
      succeed(app, 'npx', ['proceed', 'destroy', 'resource', 'bookmarks']),
    );
    expect(destroyed).toContain('Took back bookmarks:');
    expect((await git('status', '--porcelain')).trim()).toBe('');
    // And made again, for the rest of this test.
    // Made again, it is what was tested and type checked above: the same files, the same code
    // (drizzle-kit's snapshot and journal name each generation by a new id and time).
    await clock.time('proceed generate resource (again)', () => succeed(app, 'npx', generate));
    expect(await generatedFiles()).toEqual(firstGeneration);

    // The CLI reads the app in production with no database to reach and no secret.
    const nothing = { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/nothing', NODE_ENV: 'production' };
    const routes = await clock.time('npx proceed routes', () =>
      succeed(app, 'npx', ['proceed', 'routes'], nothing),
    );
    for (const route of [
      'POST /api/auth/register',
      'GET /api/auth/me',
      'GET /api/notes',
      'DELETE /api/notes/:id',
      'POST /api/bookmarks',
    ])
      expect(routes).toMatch(new RegExp(route.replace(' ', '\\s+')));
    const openapi = JSON.parse(await succeed(app, 'npx', ['proceed', 'openapi'], nothing)) as {
      paths: Record<string, unknown>;
      components: { schemas: Record<string, unknown> };
    };
    expect(Object.keys(openapi.paths)).toContain('/api/notes/{id}');
    // Every array says how long it may be (the OWASP rules of `proceed openapi --lint` ask it),
    // the generated resource's listing too.
    expect(unboundedArrays(openapi)).toEqual([]);
    // A note's answer is one of its views, chosen per record.
    expect(Object.keys(openapi.components.schemas)).toEqual(
      expect.arrayContaining(['NotePublic', 'NoteOwner', 'NoteAdmin', 'UserAuthenticated']),
    );
    const routeManifest = JSON.parse(
      await succeed(app, 'npx', ['proceed', 'manifest'], nothing),
    ) as RouteManifest;
    expect(existsSync(join(app, '.data'))).toBe(false);

    // The seed, into the embedded database in .data/db; a second run changes nothing.
    const seeded = await clock.time('npm run seed', () =>
      succeed(app, 'npm', ['run', 'seed'], { SEED_PASSWORD: 'seeded password' }),
    );
    expect(seeded).toContain(
      'Sign in as admin@example.com or ada@example.com with the password seeded password',
    );
    expect(await succeed(app, 'npm', ['run', 'seed'])).toContain('The database is seeded already');

    // Taken back after the seed applied its migration to .data/db: a new migration drops it.
    const dropped = await clock.time('proceed destroy resource (applied)', () =>
      succeed(app, 'npx', ['proceed', 'destroy', 'resource', 'bookmarks']),
    );
    expect(dropped).toContain('a migration that drops the table (0001_bookmarks was applied)');
    const drop = readdirSync(join(app, 'drizzle')).find((name) => name.endsWith('_drop_bookmarks.sql'));
    expect(readFileSync(join(app, 'drizzle', drop ?? ''), 'utf8')).toContain('DROP TABLE "bookmarks"');
    expect(existsSync(join(app, 'src/bookmarks.ts'))).toBe(false);

    await clock.time('npm run build', () => succeed(app, 'npm', ['run', 'build']));
    expect(existsSync(join(app, 'dist/app.js'))).toBe(true);
    await succeed(app, 'npm', ['prune', '--omit=dev', '--no-audit', '--no-fund']);
    for (const dev of ['typescript', 'tsx', 'vitest', 'drizzle-kit'])
      expect(existsSync(join(app, 'node_modules', dev))).toBe(false);

    // npm start as a new user would: the embedded database the seed filled.
    const port = await freePort();
    const server = launch('npm', ['start'], {
      cwd: app,
      env: { PORT: String(port), NODE_ENV: 'production', ...secret },
    });
    await clock.time('npm start (until listening)', () =>
      server.waitFor(`Server listening at http://127.0.0.1:${port}`),
    );
    const origin = `http://127.0.0.1:${port}`;
    expect(await (await fetch(`${origin}/api/health`)).json()).toEqual({ status: 'ok' });
    const client = (token?: string) =>
      createClient<typeof api>({
        baseUrl: origin,
        routes: routeManifest,
        ...(token === undefined ? {} : { token }),
      });

    const session = await client().auth.register({
      email: 'grace@example.com',
      password: 'correct horse',
      name: 'Grace',
    });
    const login = await client().auth.login({ email: 'grace@example.com', password: 'correct horse' });
    expect(login.user).toEqual(session.user);
    const grace = client(login.accessToken);
    expect(await grace.auth.me()).toEqual(session.user);
    const note = await grace.notes.createNote({
      title: 'From a tarball',
      body: 'It works.',
      isPrivate: true,
    });
    expect(await grace.notes.getNote({ id: note.id })).toMatchObject({
      title: 'From a tarball',
      isPrivate: true,
    });
    expect(await grace.notes.updateNote({ id: note.id, data: { isPrivate: false } })).toMatchObject({
      isPrivate: false,
    });
    // Grace's note and the seed's public one, newest first; not the seed's private one.
    const titles = async (token?: string) =>
      (await client(token).notes.listNotes()).data.map((listed) => listed.title);
    expect(await titles()).toEqual(['From a tarball', 'Welcome']);
    const admin = await client().auth.login({ email: 'admin@example.com', password: 'seeded password' });
    expect(await titles(admin.accessToken)).toEqual(['From a tarball', 'Diary', 'Welcome']);
    expect(await grace.notes.deleteNote({ id: note.id })).toEqual({ success: true });
    const refreshed = await client().auth.refresh({ refreshToken: login.refreshToken });
    await client(refreshed.accessToken).auth.logout();
    await expect(client(refreshed.accessToken).auth.me()).rejects.toMatchObject({ status: 401 });

    process.kill(server.pid, 'SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });

    if (postgresUrl !== null) {
      // Two instances started together on one new database: one applies the migrations while
      // the other waits for its lock, and both serve the same accounts.
      const database = await createScratchDatabase(postgresUrl, 'scaffold_app');
      try {
        const ports = [await freePort(), await freePort()];
        const instances = ports.map((instancePort) =>
          launch('npm', ['start'], {
            cwd: app,
            env: {
              PORT: String(instancePort),
              NODE_ENV: 'production',
              DATABASE_URL: database.url,
              ...secret,
            },
          }),
        );
        await clock.time('two instances on one PostgreSQL (until both listen)', () =>
          Promise.all(
            instances.map((instance, i) =>
              instance.waitFor(`Server listening at http://127.0.0.1:${ports[i]}`),
            ),
          ),
        );
        const journal = JSON.parse(readFileSync(join(app, 'drizzle/meta/_journal.json'), 'utf8')) as {
          entries: unknown[];
        };
        const sql = new pg.Client({ connectionString: database.url });
        await sql.connect();
        try {
          const applied = await sql.query('SELECT hash FROM drizzle.__drizzle_migrations');
          expect(applied.rowCount).toBe(journal.entries.length);
        } finally {
          await sql.end();
        }
        const [first, second] = ports.map((instancePort) => `http://127.0.0.1:${instancePort}`);
        const signedUp = await createClient<typeof api>({
          baseUrl: `${first}`,
          routes: routeManifest,
        }).auth.register({ email: 'twice@example.com', password: 'correct horse', name: 'Twice' });
        const elsewhere = createClient<typeof api>({
          baseUrl: `${second}`,
          routes: routeManifest,
          token: signedUp.accessToken,
        });
        expect((await elsewhere.auth.me()).id).toBe(signedUp.user.id);
        for (const instance of instances) process.kill(instance.pid, 'SIGTERM');
        for (const instance of instances) expect(await instance.exited).toEqual({ code: 0, signal: null });
      } finally {
        await database.drop();
      }
    }
    clock.print('npm create proceed my-api (the app template)');
  });

  it('scaffolds the minimal template, which installs, builds, passes its test and serves in production', {
    timeout: 300_000,
  }, async () => {
    const clock = stopwatch();
    const [framework] = await packed();
    const { app, output: created } = await clock.time('scaffold', () =>
      create('my-app', '--template', 'minimal'),
    );
    expect(created).toContain('Created my-app in my-app:');
    expect(created).toContain('npm run dev');
    const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(manifest.dependencies).toEqual({
      proceedjs: `file:vendor/${basename(framework.tarball)}`,
      zod: expect.any(String),
    });

    const installed = await clock.time('npm install', () => succeed(app, 'npm', installArgs));
    expect(installed).not.toContain('EBADENGINE');

    await clock.time('npm run build', () => succeed(app, 'npm', ['run', 'build']));
    expect(existsSync(join(app, 'dist/app.js'))).toBe(true);
    expect(existsSync(join(app, 'dist/app.test.js'))).toBe(false);

    const tested = await clock.time('npm test', () => succeed(app, 'npm', ['test']));
    expect(stripVTControlCharacters(tested)).toMatch(/Tests\s+4 passed/);

    await succeed(app, 'npm', ['prune', '--omit=dev', '--no-audit', '--no-fund']);
    for (const dev of ['typescript', 'tsx', 'vitest'])
      expect(existsSync(join(app, 'node_modules', dev))).toBe(false);
    // Without tsx, a TypeScript entry is refused with what to do about it.
    const typescript = await runToEnd('npx', ['proceed', 'routes', 'src/app.ts'], { cwd: app });
    expect(typescript.code).toBe(1);
    expect(typescript.stderr).toContain(
      'src/app.ts is TypeScript, and running TypeScript needs tsx, which is not installed',
    );

    const port = await freePort();
    const server = launch('npm', ['start'], {
      cwd: app,
      env: { PORT: String(port), NODE_ENV: 'production' },
    });
    await clock.time('npm start (until listening)', () =>
      server.waitFor(`Server listening at http://127.0.0.1:${port}`),
    );
    const origin = `http://127.0.0.1:${port}`;
    const health = await fetch(`${origin}/api/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const note = await fetch(`${origin}/api/notes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'From a tarball', body: 'It works.' }),
    });
    expect(note.status).toBe(201);
    const { id } = (await note.json()) as { id: string };
    expect(await (await fetch(`${origin}/api/notes`)).json()).toEqual({
      data: [{ id, title: 'From a tarball' }],
    });

    process.kill(server.pid, 'SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    clock.print('npm create proceed my-app -- --template minimal');
  });

  it('scaffolds a Cloudflare Worker (minimal template) that passes its tests, serving under wrangler dev, and bundles for deploy', {
    timeout: 300_000,
  }, async () => {
    const { app } = await create('on-workers', '--runtime', 'workers', '--template', 'minimal');
    const installed = await succeed(app, 'npm', installArgs);
    expect(installed).not.toContain('EBADENGINE');
    // Its serve test runs the Worker on workerd under wrangler dev, over a socket.
    const tested = stripVTControlCharacters(await succeed(app, 'npm', ['test']));
    expect(tested).toMatch(/Tests\s+4 passed/);
    expect(tested).toContain('listens on workers, answers over HTTP');
    await succeed(app, 'npm', ['run', 'typecheck']);
    // What `npm run deploy` would upload, bundled without uploading.
    await succeed(app, 'npm', ['run', 'build']);
    expect(existsSync(join(app, 'dist/worker.js'))).toBe(true);
  });

  it('refuses a Worker of the app template, saying to add --template minimal', {
    timeout: 120_000,
  }, async () => {
    const [framework, scaffolder] = await packed();
    const refused = await runToEnd(
      'npm',
      ['exec', '--yes', `--package=${scaffolder.tarball}`, '--', 'create-proceed', 'app-on-workers'].concat([
        '--runtime',
        'workers',
        '--proceed',
        framework.tarball,
      ]),
      { cwd: scratch },
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('add --template minimal for a Worker');
    expect(existsSync(join(scratch, 'app-on-workers'))).toBe(false);
  });

  it.each(['bun', 'deno'])(
    'scaffolds the app template for %s, which passes its tests there and serves on it',
    {
      timeout: 600_000,
    },
    async (runtime) => {
      const { app } = await create(`on-${runtime}`, '--runtime', runtime);
      await succeed(app, 'npm', installArgs);
      // Its serve test runs the app on the runtime, from the runtime's npm package; the others
      // run on Node whatever the runtime, and ran above in the Node app.
      const tested = stripVTControlCharacters(
        await succeed(app, 'npm', ['test', '--', '--reporter=verbose', 'test/serve.test.ts'], {
          TEST_DATABASE_URL: '',
        }),
      );
      expect(tested).toMatch(/Tests\s+2 passed/);
      expect(tested).toContain(`serves over HTTP on ${runtime} in production`);

      await succeed(app, 'npm', ['run', 'build']);
      const port = await freePort();
      const server = launch('npm', ['start'], {
        cwd: app,
        env: { PORT: String(port), NODE_ENV: 'production', DATABASE_URL: 'memory://', ...secret },
      });
      await server.waitFor(
        `Server listening at http://127.0.0.1:${port} (${runtime === 'bun' ? 'Bun' : 'Deno'}, app.fetch)`,
      );
      const health = await fetch(`http://127.0.0.1:${port}/api/health`);
      expect(health.status).toBe(200);
      process.kill(server.pid, 'SIGTERM');
      expect(await server.exited).toEqual({ code: 0, signal: null });
    },
  );
});

/** Where a document holds an array schema without `maxItems`, as JSON pointers. */
function unboundedArrays(value: unknown, at = ''): string[] {
  if (typeof value !== 'object' || value === null) return [];
  const schema = value as { type?: unknown; maxItems?: unknown };
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const own = types.includes('array') && schema.maxItems === undefined ? [at] : [];
  return [...own, ...Object.entries(value).flatMap(([key, inner]) => unboundedArrays(inner, `${at}/${key}`))];
}
