import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  apiTitle,
  packageName,
  proceedDependency,
  ScaffoldError,
  scaffold,
  shownDirectory,
} from './scaffold.js';
import {
  appDependencyVersions,
  appDevDependencyVersions,
  dependencyVersions,
  devDependencyVersions,
  runtimeVersions,
} from './versions.js';

const scratch = mkdtempSync(join(tmpdir(), 'create-proceed-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const repository = new URL('../../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, repository), 'utf8');

interface Manifest {
  name: string;
  private: boolean;
  type: string;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

describe('scaffold', () => {
  it('writes the app template by default: the notes API on a database, its migrations, tests, seed and README', async () => {
    const directory = join(scratch, 'My Notes API');
    const app = await scaffold({ directory, platform: 'linux' });
    expect(app).toMatchObject({ name: 'my-notes-api', template: 'app' });
    expect(app.files).toEqual([
      '.dockerignore',
      '.gitignore',
      'Dockerfile',
      'README.md',
      'drizzle.config.ts',
      'drizzle/0000_init.sql',
      'drizzle/meta/0000_snapshot.json',
      'drizzle/meta/_journal.json',
      'package.json',
      'src/app.ts',
      'src/auth.ts',
      'src/context.ts',
      'src/db.ts',
      'src/notes.ts',
      'src/schema.ts',
      'src/seed.ts',
      'test/auth.test.ts',
      'test/client.ts',
      'test/databases.ts',
      'test/migrations.test.ts',
      'test/notes.test.ts',
      'test/outage.test.ts',
      'test/serve.test.ts',
      'tsconfig.build.json',
      'tsconfig.json',
      'vitest.config.ts',
    ]);
    const manifest = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as Manifest;
    expect(manifest).toMatchObject({ name: 'my-notes-api', private: true, type: 'module' });
    expect(manifest.scripts).toEqual({
      dev: 'exec proceed dev',
      build: 'tsc -p tsconfig.build.json',
      start: 'exec proceed start dist/app.js',
      test: 'vitest run',
      typecheck: 'tsc --noEmit',
      'db:generate': 'drizzle-kit generate',
      seed: 'tsx src/seed.ts',
    });
    expect(manifest.dependencies).toEqual({
      '@electric-sql/pglite': appDependencyVersions['@electric-sql/pglite'],
      'drizzle-orm': appDependencyVersions['drizzle-orm'],
      pg: appDependencyVersions.pg,
      proceedjs: '^0.1.0',
      zod: dependencyVersions.zod,
    });
    expect(Object.keys(manifest.devDependencies)).toEqual([
      '@types/node',
      '@types/pg',
      'drizzle-kit',
      'pino-pretty',
      'tsx',
      'typescript',
      'vitest',
    ]);
    const tsconfig = JSON.parse(readFileSync(join(directory, 'tsconfig.json'), 'utf8')) as {
      compilerOptions: Record<string, unknown>;
      include: string[];
    };
    expect(tsconfig.compilerOptions).toMatchObject({
      strict: true,
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: true,
    });
    expect(tsconfig.include).toEqual(['src', 'test', 'vitest.config.ts', 'drizzle.config.ts']);
    const readme = readFileSync(join(directory, 'README.md'), 'utf8');
    expect(readme).toMatch(/^# my-notes-api\n/);
    expect(readme).toContain('| `npm start` | runs the compiled app: `proceed start dist/app.js` |');
    expect(readme).not.toMatch(/\{\{\w+\}\}/);
    expect(readFileSync(join(directory, '.gitignore'), 'utf8')).toContain('.data/');
    // The image holds the migrations the app applies at start, and a directory PGlite may write.
    const dockerfile = readFileSync(join(directory, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain(
      'COPY --from=build /app/drizzle ./drizzle\nRUN mkdir .data && chown node .data\nUSER node\n',
    );
    for (const file of app.files)
      expect(readFileSync(join(directory, file), 'utf8'), file).not.toMatch(/\{\{(?!runtime)\w+\}\}/);
  });

  it('writes the minimal template: the README tour as src/app.ts, its test, and nothing of a database', async () => {
    const directory = join(scratch, 'minimal-app');
    const app = await scaffold({ directory, platform: 'linux', template: 'minimal' });
    expect(app).toMatchObject({ name: 'minimal-app', template: 'minimal' });
    expect(app.files).toEqual([
      '.dockerignore',
      '.gitignore',
      'Dockerfile',
      'README.md',
      'package.json',
      'src/app.test.ts',
      'src/app.ts',
      'src/serve.test.ts',
      'tsconfig.build.json',
      'tsconfig.json',
      'vitest.config.ts',
    ]);
    const manifest = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as Manifest;
    expect(manifest.scripts).toEqual({
      dev: 'exec proceed dev',
      build: 'tsc -p tsconfig.build.json',
      start: 'exec proceed start dist/app.js',
      test: 'vitest run',
      typecheck: 'tsc --noEmit',
    });
    expect(manifest.dependencies).toEqual({ proceedjs: '^0.1.0', zod: dependencyVersions.zod });
    expect(Object.keys(manifest.devDependencies)).toEqual([
      '@types/node',
      'pino-pretty',
      'tsx',
      'typescript',
      'vitest',
    ]);
    const tsconfig = JSON.parse(readFileSync(join(directory, 'tsconfig.json'), 'utf8')) as {
      compilerOptions: Record<string, unknown>;
    };
    expect(tsconfig.compilerOptions).toMatchObject({
      strict: true,
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: true,
      module: 'NodeNext',
      outDir: 'dist',
    });
    expect(readFileSync(join(directory, 'src/app.ts'), 'utf8')).toBe(
      read('packages/create-proceed/template/src/app.ts'),
    );
    expect(readFileSync(join(directory, 'README.md'), 'utf8')).toMatch(/^# minimal-app\n/);
    expect(readFileSync(join(directory, '.gitignore'), 'utf8')).toContain('node_modules/');
    const dockerfile = readFileSync(join(directory, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain('COPY --from=build /app/dist ./dist\nUSER node\n');
    expect(dockerfile).toContain('CMD ["node_modules/.bin/proceed", "start", "dist/app.js"]');
    // The same template asked for by name.
    const named = await scaffold({ directory: join(scratch, 'named-app'), template: 'app' });
    expect(named.template).toBe('app');
  });

  it('refuses an unknown template, naming the two there are, without writing anything', async () => {
    const directory = join(scratch, 'on-rails');
    await expect(scaffold({ directory, template: 'rails' })).rejects.toThrow(ScaffoldError);
    await expect(scaffold({ directory, template: 'rails' })).rejects.toThrow(
      '--template rails: choose app (notes with auth on a database, the default) or minimal (one file, in memory)',
    );
    expect(existsSync(directory)).toBe(false);
  });

  it('starts without exec on Windows, whose shell has none', async () => {
    const directory = join(scratch, 'windows-app');
    await scaffold({ directory, platform: 'win32' });
    const manifest = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as Manifest;
    expect(manifest.scripts.start).toBe('proceed start dist/app.js');
    expect(manifest.scripts.dev).toBe('proceed dev');
  });

  it('uses an empty directory, and refuses one with files in it without writing anything', async () => {
    const empty = join(scratch, 'empty');
    mkdirSync(empty);
    await expect(scaffold({ directory: empty })).resolves.toMatchObject({ name: 'empty' });

    const cloned = join(scratch, 'cloned');
    mkdirSync(join(cloned, '.git'), { recursive: true });
    await expect(scaffold({ directory: cloned })).resolves.toMatchObject({ name: 'cloned' });

    const file = join(scratch, 'a-file');
    writeFileSync(file, '');
    await expect(scaffold({ directory: file })).rejects.toThrow(/a-file is a file: choose a directory/);

    const taken = join(scratch, 'taken');
    mkdirSync(taken);
    writeFileSync(join(taken, 'notes.txt'), 'mine');
    await expect(scaffold({ directory: taken })).rejects.toThrow(ScaffoldError);
    await expect(scaffold({ directory: taken })).rejects.toThrow(/is not empty: choose a new directory/);
    expect(readdirSync(taken)).toEqual(['notes.txt']);
  });

  it('keeps a tarball given with --proceed in the app, named by a relative path and copied in by the Dockerfile; a checkout is named relative to the app', async () => {
    const tarball = join(scratch, 'proceedjs-9.9.9.tgz');
    writeFileSync(tarball, 'a tarball');
    const directory = join(scratch, 'vendored');
    const app = await scaffold({ directory, proceed: tarball, platform: 'linux' });
    expect(app.files).toContain('vendor/proceedjs-9.9.9.tgz');
    expect(readFileSync(join(directory, 'vendor/proceedjs-9.9.9.tgz'), 'utf8')).toBe('a tarball');
    const manifest = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as Manifest;
    expect(manifest.dependencies.proceedjs).toBe('file:vendor/proceedjs-9.9.9.tgz');
    expect(readFileSync(join(directory, 'Dockerfile'), 'utf8')).toContain(
      'COPY package.json package-lock.json ./\nCOPY vendor ./vendor\nRUN npm ci',
    );

    const checkout = join(scratch, 'checkout');
    mkdirSync(checkout, { recursive: true });
    const linked = join(scratch, 'apps', 'linked');
    await scaffold({ directory: linked, proceed: checkout, platform: 'linux' });
    const linkedManifest = JSON.parse(readFileSync(join(linked, 'package.json'), 'utf8')) as Manifest;
    expect(linkedManifest.dependencies.proceedjs).toBe('file:../../checkout');
    expect(existsSync(join(linked, 'vendor'))).toBe(false);
    // A version from the registry: nothing to copy, and the Dockerfile as it was.
    const registry = join(scratch, 'registry');
    await scaffold({ directory: registry, platform: 'linux' });
    expect(readFileSync(join(registry, 'Dockerfile'), 'utf8')).toContain(
      'COPY package.json package-lock.json ./\nRUN npm ci',
    );
  });

  it("titles the API after the app's directory", async () => {
    expect(apiTitle('bookmarks')).toBe('Bookmarks API');
    expect(apiTitle('my-notes-api')).toBe('My Notes API');
    expect(apiTitle('My Notes API')).toBe('My Notes API');
    expect(apiTitle("o'brien_shop")).toBe('O Brien Shop API');
    expect(apiTitle('---')).toBe('API');
    const directory = join(scratch, 'reading-list');
    await scaffold({ directory, platform: 'linux' });
    expect(readFileSync(join(directory, 'src/app.ts'), 'utf8')).toContain(
      "openapi: { info: { title: 'Reading List API', version: '0.1.0' } }",
    );
  });

  it('names the proceedjs dependency by version, by path or by tarball', () => {
    expect(proceedDependency(undefined)).toBe('^0.1.0');
    expect(proceedDependency('0.2.0-beta.1')).toBe('0.2.0-beta.1');
    expect(proceedDependency('latest')).toBe('latest');
    const tarball = join(scratch, 'proceedjs-0.1.0.tgz');
    writeFileSync(tarball, '');
    expect(proceedDependency(tarball)).toBe(`file:${tarball}`);
    expect(proceedDependency('proceedjs-0.1.0.tgz', scratch)).toBe(`file:${tarball}`);
    expect(proceedDependency('.', scratch)).toBe(`file:${scratch}`);
    expect(existsSync(join(scratch, 'missing.tgz'))).toBe(false);
    expect(() => proceedDependency('missing.tgz', scratch)).toThrow(/--proceed missing.tgz: no such file/);
    expect(() => proceedDependency('./nope', scratch)).toThrow(ScaffoldError);
  });

  it('makes a package name npm accepts from any directory name', () => {
    expect(packageName('My API')).toBe('my-api');
    expect(packageName('.hidden__app')).toBe('hidden__app');
    expect(packageName('Ünïcode app!')).toBe('n-code-app');
    expect(packageName('***')).toBe('proceed-app');
  });
});

describe('shownDirectory', () => {
  it('names an app below the working directory relatively, the directory itself as ., and any other absolutely', () => {
    expect(shownDirectory('/home/me/apps/my-api', '/home/me/apps')).toBe('my-api');
    expect(shownDirectory('/home/me/apps/a/b', '/home/me/apps')).toBe(join('a', 'b'));
    expect(shownDirectory('/home/me/apps', '/home/me/apps')).toBe('.');
    expect(shownDirectory('/tmp/x', '/home/me/apps')).toBe('/tmp/x');
    expect(shownDirectory('/home/me', '/home/me/apps')).toBe('/home/me');
    // A name that only starts with two dots is below it.
    expect(shownDirectory('/home/me/apps/..app', '/home/me/apps')).toBe('..app');
  });
});

describe('scaffold --runtime', () => {
  it('writes start and dev scripts, the runtime package, a Dockerfile and a serve test for Bun', async () => {
    const directory = join(scratch, 'on-bun');
    await scaffold({ directory, platform: 'linux', runtime: 'bun' });
    const manifest = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as Manifest & {
      allowScripts: Record<string, boolean>;
    };
    expect(manifest.scripts.start).toBe('exec bun node_modules/proceedjs/bin/proceed.js start dist/app.js');
    expect(manifest.scripts.dev).toBe(
      'exec bun --watch node_modules/proceedjs/bin/proceed.js start src/app.ts',
    );
    expect(manifest.devDependencies.bun).toBe(runtimeVersions.bun);
    expect(manifest.allowScripts.bun).toBe(true);
    const dockerfile = readFileSync(join(directory, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain('FROM oven/bun:1-slim\n');
    expect(dockerfile).toContain(
      'CMD ["bun", "node_modules/proceedjs/bin/proceed.js", "start", "dist/app.js"]',
    );
    expect(dockerfile).not.toContain('{{');
    expect(readFileSync(join(directory, 'test/serve.test.ts'), 'utf8')).toContain(
      "const runtime: string = 'bun';",
    );
    expect(readFileSync(join(directory, 'README.md'), 'utf8')).toContain(
      'runs the compiled app: `bun node_modules/proceedjs/bin/proceed.js start dist/app.js`',
    );
    const minimal = join(scratch, 'minimal-on-bun');
    await scaffold({ directory: minimal, platform: 'linux', runtime: 'bun', template: 'minimal' });
    expect(readFileSync(join(minimal, 'src/serve.test.ts'), 'utf8')).toContain(
      "const runtime: string = 'bun';",
    );
    expect(readFileSync(join(minimal, 'README.md'), 'utf8')).toContain(
      'runs the compiled app on bun: `bun node_modules/proceedjs/bin/proceed.js start dist/app.js`',
    );
  });

  it('runs Deno with its permissions, and keeps Node.js the default', async () => {
    const deno = join(scratch, 'on-deno');
    await scaffold({ directory: deno, platform: 'linux', runtime: 'deno' });
    const manifest = JSON.parse(readFileSync(join(deno, 'package.json'), 'utf8')) as Manifest;
    expect(manifest.scripts.start).toBe(
      'exec deno run --allow-all node_modules/proceedjs/bin/proceed.js start dist/app.js',
    );
    // The app's TypeScript imports its modules as ./x.js, which Deno reads as ./x.ts only so.
    expect(manifest.scripts.dev).toBe(
      'exec deno run --allow-all --sloppy-imports --watch node_modules/proceedjs/bin/proceed.js start src/app.ts',
    );
    expect(manifest.devDependencies.deno).toBe(runtimeVersions.deno);
    expect(readFileSync(join(deno, 'Dockerfile'), 'utf8')).toContain('FROM denoland/deno:2\n');
    const node = join(scratch, 'on-node');
    await scaffold({ directory: node, platform: 'linux', runtime: 'node' });
    expect(readFileSync(join(node, 'Dockerfile'), 'utf8')).toContain(
      'CMD ["node_modules/.bin/proceed", "start", "dist/app.js"]',
    );
  });

  it('writes a Worker, its wrangler.jsonc and Wrangler scripts for Workers, and no Dockerfile', async () => {
    const directory = join(scratch, 'on-workers');
    const { files } = await scaffold({
      directory,
      platform: 'linux',
      runtime: 'workers',
      template: 'minimal',
    });
    expect(files).toContain('src/worker.ts');
    expect(files).toContain('wrangler.jsonc');
    expect(files).not.toContain('Dockerfile');
    expect(files).not.toContain('.dockerignore');
    const manifest = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as Manifest & {
      allowScripts: Record<string, boolean>;
    };
    expect(manifest.scripts).toMatchObject({
      dev: 'exec wrangler dev',
      build: 'wrangler deploy --dry-run --outdir dist',
      deploy: 'wrangler deploy',
    });
    expect(manifest.scripts.start).toBeUndefined();
    expect(manifest.devDependencies.wrangler).toBe(runtimeVersions.wrangler);
    expect(manifest.allowScripts).toEqual({ esbuild: false, workerd: false, sharp: false });
    const wrangler = readFileSync(join(directory, 'wrangler.jsonc'), 'utf8');
    expect(wrangler).toContain('"name": "on-workers"');
    expect(wrangler).toContain('"compatibility_flags": ["nodejs_compat", "enable_request_signal"]');
    const readme = readFileSync(join(directory, 'README.md'), 'utf8');
    expect(readme).toContain('| `npm run deploy` | publishes the Worker to Cloudflare');
    expect(readme).not.toContain('Dockerfile');
    expect(readme).not.toMatch(/\{\{\w+\}\}/);
  });

  it('refuses unknown runtimes, saying what there is', async () => {
    await expect(scaffold({ directory: join(scratch, 'on-lambda'), runtime: 'lambda' })).rejects.toThrow(
      '--runtime lambda: choose node, bun, deno or workers',
    );
    expect(existsSync(join(scratch, 'on-lambda'))).toBe(false);
  });

  it('refuses a Worker of the app template, which needs a database a Worker cannot open', async () => {
    const directory = join(scratch, 'app-on-workers');
    await expect(scaffold({ directory, runtime: 'workers' })).rejects.toThrow(
      '--runtime workers: the app template keeps its data in PostgreSQL or an embedded PGlite, which a Worker cannot open; add --template minimal for a Worker',
    );
    expect(existsSync(directory)).toBe(false);
  });
});

describe('the template', () => {
  it('is the README tour, word for word', () => {
    const tour = read('README.md').match(/```ts\n([\s\S]*?)```/)?.[1];
    expect(read('packages/create-proceed/template/src/app.ts')).toBe(tour);
  });

  it('starts with the versions Proceed is built and tested with', () => {
    const root = JSON.parse(read('package.json')) as {
      version: string;
      devDependencies: Record<string, string>;
    };
    const own = JSON.parse(read('packages/create-proceed/package.json')) as { version: string };
    expect(own.version).toBe(root.version);
    const all = { ...dependencyVersions, ...devDependencyVersions, ...runtimeVersions };
    for (const [name, version] of Object.entries(all)) {
      expect(`${name}@${version}`).toBe(`${name}@${root.devDependencies[name]}`);
    }
    // The app template's database packages are the blog's; its types of pg, the repository's.
    const blog = JSON.parse(read('examples/blog/package.json')) as { dependencies: Record<string, string> };
    for (const [name, version] of Object.entries(appDependencyVersions))
      expect(`${name}@${version}`).toBe(`${name}@${blog.dependencies[name]}`);
    expect(appDevDependencyVersions['@types/pg']).toBe(root.devDependencies['@types/pg']);
  });

  it('has the migrations drizzle-kit made from its schema, one journal entry per SQL file', () => {
    const journal = JSON.parse(read('packages/create-proceed/template/app/drizzle/meta/_journal.json')) as {
      entries: { tag: string }[];
    };
    const sql = readdirSync(new URL('packages/create-proceed/template/app/drizzle/', repository))
      .filter((file) => file.endsWith('.sql'))
      .sort();
    expect(journal.entries.map((entry) => `${entry.tag}.sql`)).toEqual(sql);
    for (const table of ['users', 'notes'])
      expect(read(`packages/create-proceed/template/app/drizzle/${sql[0]}`)).toContain(
        `CREATE TABLE "${table}"`,
      );
  });
});
