/**
 * Every TypeScript block (ts, tsx) of README.md and docs/*.md compiles: each block is a module of its own,
 * checked under the strict tsconfig `npm create proceed` writes, against the built package
 * (dist/*.d.ts, as an app sees it), all in one tsc run. A diagnostic names the markdown file and
 * line. What blocks may use without declaring it is the prelude below; a block that cannot
 * compile is marked `<!-- snippet: skip (reason) -->` on the line before its fence. README.md,
 * "Development", says so for contributors.
 */
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { manifestModule } from '../src/cli/manifest.js';
import type { RouteManifest } from '../src/client/manifest.js';
import { root } from './processes.js';

const run = promisify(execFile);
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

/** One fenced block of a markdown file. */
interface Snippet {
  /** The markdown file, relative to the repository. */
  file: string;
  /** The line of the opening fence (1-based): the code's first line is `line + 1`. */
  line: number;
  /** The fence's indentation, taken off every line of the code (a block in a list item). */
  indent: number;
  language: string;
  code: string;
  /** Why the block is not compiled: the reason of a `<!-- snippet: skip (reason) -->` line just before it. */
  skip: string | undefined;
}

const fence = /^( *)(`{3,})(.*)$/;
const skipMarker = /^\s*<!--\s*snippet:\s*skip\b(.*?)-->\s*$/;
const typescript = new Set(['ts', 'typescript', 'tsx']);

/** The fenced blocks of a markdown text, and what is wrong with its markup (a fence without a language …). */
function extractSnippets(file: string, text: string): { snippets: Snippet[]; problems: string[] } {
  const lines = text.split('\n');
  const snippets: Snippet[] = [];
  const problems: string[] = [];
  const markers = new Set<number>();
  lines.forEach((line, index) => {
    if (skipMarker.test(line)) markers.add(index);
  });
  for (let index = 0; index < lines.length; index++) {
    const open = fence.exec(lines[index] ?? '');
    if (open === null) continue;
    const [, spaces = '', ticks = '```', info = ''] = open;
    const start = index;
    const body: string[] = [];
    for (index++; index < lines.length; index++) {
      const line = lines[index] ?? '';
      if (line.trim() === ticks) break;
      body.push(line.startsWith(spaces) ? line.slice(spaces.length) : line.trimStart());
    }
    const at = `${file}:${start + 1}`;
    if (index >= lines.length) problems.push(`${at}: the block is never closed`);
    const language = info.trim().split(/\s+/)[0] ?? '';
    if (language === '') problems.push(`${at}: a block without a language (ts, sh, json, http, text …)`);
    let skip: string | undefined;
    if (markers.delete(start - 1)) {
      skip = /^\s*\((.*\S.*)\)\s*$/.exec(skipMarker.exec(lines[start - 1] ?? '')?.[1] ?? '')?.[1]?.trim();
      if (skip === undefined)
        problems.push(`${at}: a skip marker needs a reason: <!-- snippet: skip (why) -->`);
      else if (!typescript.has(language))
        problems.push(`${at}: a skip marker before a block that is not TypeScript`);
    }
    snippets.push({ file, line: start + 1, indent: spaces.length, language, code: body.join('\n'), skip });
  }
  for (const marker of markers)
    problems.push(`${file}:${marker + 1}: a skip marker that is not just before a fence`);
  return { snippets, problems };
}

/**
 * What the snippets may use without declaring it: the app's own things (its database, pool,
 * collections, user type …), one small fictional blog. A global script, so that every snippet
 * sees them without an import; a snippet's own declarations shadow them. Library names (`z`,
 * `procedure`, `createApp` …) are not here: snippets import them, as an app does.
 */
const globals = `
type Fixture = typeof import('./server/api.js');

interface User { id: string; email: string; name: string; role: 'admin' | 'editor' | 'user' | 'guest'; isActive: boolean }
interface PostRow {
  id: string; title: string; excerpt: string; content: string; authorId: string;
  status: 'draft' | 'published' | 'archived'; version: number; createdAt: Date; updatedAt: Date;
}
interface PostChanges { title?: string | undefined; content?: string | undefined; status?: PostRow['status'] | undefined }
/** The app's data access. */
interface Db {
  users: {
    findById(id: string): Promise<User | undefined>;
    findByEmail(email: string): Promise<(User & { passwordHash: string }) | undefined>;
    create(user: { email: string; passwordHash: string }): Promise<User>;
    setPasswordHash(id: string, passwordHash: string): Promise<void>;
    list(params: { page: number; limit: number }): Promise<{ items: User[]; total: number }>;
  };
  posts: {
    list(limit: number): Promise<PostRow[]>;
    find(id: string): Promise<PostRow | undefined>;
    create(post: { title: string; content: string; authorId?: string }): Promise<PostRow>;
    update(id: string, changes: PostChanges): Promise<PostRow>;
    /** Writes only while the row still has \`version\`; PreconditionFailedError otherwise. */
    updateIfVersion(id: string, version: number, changes: PostChanges): Promise<PostRow>;
  };
}
type AppContext = import('proceedjs/auth').AuthContext<User> & { db: Db };
type Ctx = AppContext;

declare const db: Db;
declare const pool: import('pg').Pool;
declare const app: import('proceedjs').App<AppContext>;
declare const context: (request: import('proceedjs').RequestInfo) => Omit<AppContext, 'request'>;
declare const p: () => import('proceedjs').ProcedureBuilder<AppContext & import('proceedjs').BaseContext>;
declare const tokens: import('proceedjs/auth').TokenService;
declare const credentials: Fixture['credentials'];
type AppHandler<I, O> = (call: { input: I; ctx: AppContext }) => Promise<O>;
declare const logIn: AppHandler<{ email: string; password: string }, import('proceedjs/auth').TokenPair>;
declare const register: AppHandler<{ email: string; password: string }, import('proceedjs/auth').TokenPair>;
declare const Post: Fixture['Post'];
declare const User: Fixture['User'];
declare const posts: Fixture['posts'];
declare const users: Fixture['users'];
declare const auth: Fixture['auth'];
declare const api: Fixture['api'];

// In a browser app.
declare const client: import('proceedjs/client').Client<Fixture['api']>;
declare const baseUrl: string;
declare const routes: import('proceedjs/client').RouteManifest;
declare const postId: string;
declare const session: { accessToken: string };
declare const myFetch: typeof fetch;
declare const localStorage: { getItem(key: string): string | null };
declare function refreshSession(): Promise<void>;
declare function signIn(): Promise<{ accessToken: string; refreshToken: string }>;
declare function showNotice(message: string): void;
declare const form: { setError(field: string, message: string): void };
declare function loadPost(): Promise<PostRow>;
declare function loadPage(): Promise<{ data: PostRow[] }>;
`;

const routesOfApi: RouteManifest = {
  posts: {
    listPosts: { method: 'GET', path: '/posts', inputMode: 'query' },
    getPost: { method: 'GET', path: '/posts/:id', inputMode: 'query' },
    createPost: { method: 'POST', path: '/posts', inputMode: 'body' },
    updatePost: { method: 'PUT', path: '/posts/:id', inputMode: 'update' },
    deletePost: { method: 'DELETE', path: '/posts/:id', inputMode: 'query' },
    publishPost: { method: 'POST', path: '/posts/:id/publish', inputMode: 'body' },
  },
  users: { getUser: { method: 'GET', path: '/users/:id', inputMode: 'query' } },
  auth: {
    login: { method: 'POST', path: '/auth/login', inputMode: 'body' },
    refresh: { method: 'POST', path: '/auth/refresh', inputMode: 'body' },
  },
};

/** Modules the snippets import by relative path, as an app's own files. */
const fixtures: Record<string, string> = {
  'snippet-globals.d.ts': globals,
  // The server module client.md's browser code imports its types from.
  'server/api.ts': `
import { procedure, procedures } from 'proceedjs';
import { cursorInput, cursorPage } from 'proceedjs/pagination';
import { resource } from 'proceedjs/resource';
import { z } from 'zod';

export const Post = resource('Post', {
  public: { id: z.uuid(), title: z.string(), excerpt: z.string() },
  authenticated: { content: z.string(), authorId: z.uuid(), status: z.enum(['draft', 'published', 'archived']) },
  admin: { createdAt: z.date(), updatedAt: z.date() },
});
export const User = resource('User', {
  public: { id: z.uuid(), name: z.string() },
  authenticated: { email: z.email(), role: z.enum(['admin', 'editor', 'user', 'guest']) },
  admin: { isActive: z.boolean() },
});
export const credentials = z.object({ email: z.email(), password: z.string().min(8).max(1024) });

const p = procedure<AppContext>;
const row = {} as PostRow;
const id = z.object({ id: z.uuid() });

export const posts = procedures('posts', {
  listPosts: p()
    .input(cursorInput({ cursor: z.uuid() }))
    .output(cursorPage(Post.public))
    .query(() => ({ data: [row], nextCursor: null, prevCursor: null })),
  getPost: p().input(id).output(Post.public).query(() => row),
  createPost: p()
    .input(z.object({ title: z.string(), content: z.string() }))
    .output(Post.authenticated)
    .mutation(() => row),
  updatePost: p()
    .input(z.object({ id: z.uuid(), data: z.object({ title: z.string().optional() }) }))
    .output(Post.authenticated)
    .mutation(() => row),
  deletePost: p().input(id).mutation(() => undefined),
  publishPost: p()
    .rest({ method: 'POST', path: '/posts/:id/publish' })
    .input(id)
    .output(Post.authenticated)
    .mutation(() => row),
});
export const users = procedures('users', {
  getUser: p().input(id).output(User.public).query(() => ({ id: '', name: '' })),
});
export const auth = procedures('auth', {
  login: p()
    .rest({ method: 'POST', path: '/auth/login' })
    .input(credentials)
    .mutation(() => ({ accessToken: '', refreshToken: '' })),
  refresh: p()
    .rest({ method: 'POST', path: '/auth/refresh' })
    .input(z.object({ refreshToken: z.string() }))
    .mutation(() => ({ accessToken: '', refreshToken: '' })),
});
export const api = [posts, users, auth] as const;
`,
  'server/errors.ts': `
import { defineErrors } from 'proceedjs';

export const blogErrors = defineErrors({
  INVALID_TRANSITION: { status: 409, title: 'Invalid state transition' },
});
`,
  // What \`proceed manifest --out routes.json\` (or \`routes.ts\`) writes for server/api.ts.
  'snippets/routes.json': `${JSON.stringify(routesOfApi, null, 2)}\n`,
  'snippets/routes.ts': manifestModule(routesOfApi),
  // The queries docs/tanstack-query.md's React component imports ("the module above").
  'snippets/queries.ts': `
import { createClient } from 'proceedjs/client';
import { queryUtils } from 'proceedjs/tanstack-query';
import type { api } from '../server/api.js';

export const queries = queryUtils(createClient<typeof api>({ baseUrl: 'https://api.example.com' }));
`,
  // The event stream docs/events.md's client reads (its first example).
  'snippets/feed.ts': `
import { eventStream, procedure, procedures } from 'proceedjs';
import { z } from 'zod';

export const feed = procedures('posts', {
  postEvents: procedure()
    .rest({ method: 'GET', path: '/posts/events' })
    .output(eventStream(z.object({ id: z.string(), title: z.string() })))
    .query(async function* () {}),
});
`,
  // An app's Drizzle tables and database (as in the blog's src/db/).
  'snippets/db.ts': `
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { boolean, pgTable, text, uuid } from 'drizzle-orm/pg-core';

export const users = pgTable('users', {
  id: uuid('id').primaryKey(),
  email: text('email').notNull(),
  name: text('name').notNull(),
  passwordHash: text('password_hash').notNull(),
  role: text('role', { enum: ['admin', 'editor', 'user', 'guest'] }).notNull(),
  isActive: boolean('is_active').notNull(),
});
export const posts = pgTable('posts', {
  id: uuid('id').primaryKey(),
  authorId: uuid('author_id').notNull(),
  title: text('title').notNull(),
  excerpt: text('excerpt').notNull(),
  content: text('content').notNull(),
  status: text('status', { enum: ['draft', 'published', 'archived'] }).notNull(),
});
export const notes = pgTable('notes', {
  id: uuid('id').primaryKey(),
  ownerId: uuid('owner_id').notNull(),
  title: text('title').notNull(),
  isPrivate: boolean('is_private').notNull(),
});
export const db: NodePgDatabase = drizzle(process.env.DATABASE_URL ?? '');
export async function connect(url: string | undefined): Promise<Db> {
  return { url } as never;
}
`,
  // The blog's entry reads its settings, then loads the app (docs/cli.md).
  'snippets/settings.ts': `
export interface BlogOptions { inspect: boolean; workers: number; clustered: boolean }
export function readSettings(_options: BlogOptions): void {}
`,
  'snippets/app.ts': `
import { type App, createApp } from 'proceedjs';
import type { BlogOptions } from './settings.js';

export async function createBlogApp(_options: BlogOptions): Promise<App<AppContext>> {
  return createApp<AppContext>({ context }).mount([]);
}
`,
};

/** Builds the compile options from the scaffolder's tsconfig, so the two cannot drift apart. */
function tsconfig(files: readonly string[]): string {
  const template = JSON.parse(
    readFileSync(join(root, 'packages/create-proceed/template/tsconfig.json'), 'utf8'),
  ) as { compilerOptions: Record<string, unknown> };
  const { outDir: _outDir, sourceMap: _sourceMap, ...compilerOptions } = template.compilerOptions;
  // React components (docs/tanstack-query.md) compile as a React app's do.
  return JSON.stringify(
    { compilerOptions: { ...compilerOptions, jsx: 'react-jsx', noEmit: true }, files },
    null,
    2,
  );
}

const diagnostic = /^(.+?)\((\d+),(\d+)\): (error|warning) (TS\d+): (.*)$/;

/** Orders `file:line:column …` texts by file, then line and column as numbers. */
function byPlace(a: string, b: string): number {
  const place = (text: string) => /^(\S*?):(\d+):(\d+) /.exec(text) ?? [text, text, '0', '0'];
  const [, fileA = '', lineA, columnA] = place(a);
  const [, fileB = '', lineB, columnB] = place(b);
  return fileA.localeCompare(fileB) || Number(lineA) - Number(lineB) || Number(columnA) - Number(columnB);
}

/**
 * Compiles the TypeScript blocks that are not skipped in one tsc run, in a directory under
 * node_modules/.cache (so that `proceedjs`, `zod` … resolve as in an app). Returns tsc's
 * diagnostics, each rewritten to name the markdown file and line: `docs/x.md:12:5 TS2304 …`.
 */
async function compileSnippets(snippets: readonly Snippet[]): Promise<string[]> {
  if (!existsSync(join(root, 'dist/index.d.ts')))
    throw new Error(
      'No dist/: snippets compile against the built package; run `node scripts/build.mjs --no-check`',
    );
  // A build older than the sources would check the docs against yesterday's API.
  const built = statSync(join(root, 'dist/index.d.ts')).mtimeMs;
  const newer = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' }).find(
    (file) =>
      /\.ts$/.test(file) &&
      !/\.test(-d)?\.ts$/.test(file) &&
      statSync(join(root, 'src', file)).mtimeMs > built,
  );
  if (newer !== undefined)
    throw new Error(
      `dist/ is older than src/${newer}: snippets compile against the built package; run \`node scripts/build.mjs --no-check\``,
    );
  const cache = join(root, 'node_modules/.cache');
  mkdirSync(cache, { recursive: true });
  const directory = mkdtempSync(join(cache, 'docs-snippets-'));
  try {
    const sources = new Map<string, Snippet>();
    for (const [path, content] of Object.entries(fixtures)) {
      mkdirSync(dirname(join(directory, path)), { recursive: true });
      writeFileSync(join(directory, path), content);
    }
    for (const snippet of snippets) {
      const extension = snippet.language === 'tsx' ? 'tsx' : 'ts';
      const name = `snippets/${snippet.file.replace(/\.md$/, '').replace(/\W+/g, '-')}-${snippet.line}.${extension}`;
      // `export {}` makes every block a module: top-level await, and names of its own.
      writeFileSync(join(directory, name), `${snippet.code}\nexport {};\n`);
      sources.set(resolve(directory, name), snippet);
    }
    const fixtureFiles = Object.keys(fixtures).filter((path) => path.endsWith('.ts'));
    const files = [...fixtureFiles, ...[...sources.keys()].map((path) => path.slice(directory.length + 1))];
    writeFileSync(join(directory, 'tsconfig.json'), tsconfig(files));
    let output: string;
    try {
      ({ stdout: output } = await run(process.execPath, [tsc, '-p', 'tsconfig.json', '--pretty', 'false'], {
        cwd: directory,
        maxBuffer: 16 * 1024 * 1024,
      }));
    } catch (error) {
      const failed = error as { stdout?: string; stderr?: string; message: string };
      if (failed.stdout === undefined || failed.stdout === '') throw error;
      output = failed.stdout;
    }
    const diagnostics: string[] = [];
    for (const line of output.split('\n')) {
      const match = diagnostic.exec(line);
      if (match === null) {
        // A message's further lines, indented, belong to the diagnostic before them.
        if (line.trim() !== '' && diagnostics.length > 0) diagnostics[diagnostics.length - 1] += `\n${line}`;
        else if (line.trim() !== '') diagnostics.push(line);
        continue;
      }
      const [, path = '', row = '0', column = '0', , code, message] = match;
      const snippet = sources.get(resolve(directory, path));
      const where =
        snippet === undefined
          ? `(snippet machinery) ${path}:${row}:${column}`
          : `${snippet.file}:${snippet.line + Number(row)}:${snippet.indent + Number(column)}`;
      diagnostics.push(`${where} ${code} ${message}`);
    }
    return diagnostics.sort(byPlace);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

const documents = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/** The blocks to compile: TypeScript, not skipped. */
const compiled = (snippets: readonly Snippet[]) =>
  snippets.filter((snippet) => typescript.has(snippet.language) && snippet.skip === undefined);

describe('the code blocks of README.md and docs/*.md', () => {
  const extracted = documents.map((file) => extractSnippets(file, readFileSync(join(root, file), 'utf8')));
  const snippets = extracted.flatMap((each) => each.snippets);

  it('each have a language; a skip marker has a reason and stands just before a TypeScript block', () => {
    expect(extracted.flatMap((each) => each.problems)).toEqual([]);
    expect(compiled(snippets).length).toBeGreaterThan(40);
  });

  it.concurrent('compile, every TypeScript one, under the strict tsconfig of a new app', async () => {
    const diagnostics = await compileSnippets(compiled(snippets));
    expect(diagnostics.join('\n')).toBe('');
  });

  it.concurrent('that do not compile are reported with their file and line', async () => {
    const markdown = [
      '# Broken', // 1
      '',
      '1. In a list item:',
      '',
      '   ```ts', // 5
      "   import { createApp } from 'proceedjs';",
      '',
      '   export default createApp({ compresion: false });', // 8: a typo
      '   ```',
      '',
      '<!-- snippet: skip (shows the mistake) -->',
      '```ts',
      "const skipped: number = 'not compiled';",
      '```',
      '',
      '```typescript', // 16
      'const count: number = posts.name; // a placeholder, of the wrong type',
      '```',
    ].join('\n');
    const { snippets, problems } = extractSnippets('docs/broken.md', markdown);
    expect(problems).toEqual([]);
    expect(snippets.map(({ line, indent, skip }) => ({ line, indent, skip }))).toEqual([
      { line: 5, indent: 3, skip: undefined },
      { line: 12, indent: 0, skip: 'shows the mistake' },
      { line: 16, indent: 0, skip: undefined },
    ]);
    const diagnostics = await compileSnippets(compiled(snippets));
    expect(diagnostics).toEqual([
      expect.stringMatching(/^docs\/broken\.md:8:31 TS2561 .*'compresion' does not exist/),
      expect.stringMatching(/^docs\/broken\.md:17:7 TS2322 .* is not assignable to type 'number'/),
    ]);
  });

  it('refuse a skip marker without a reason, or away from a block', () => {
    const { problems } = extractSnippets(
      'docs/marked.md',
      ['<!-- snippet: skip -->', '```ts', 'x', '```', '', '<!-- snippet: skip (why) -->', '', '```'].join(
        '\n',
      ),
    );
    expect(problems).toEqual([
      'docs/marked.md:2: a skip marker needs a reason: <!-- snippet: skip (why) -->',
      'docs/marked.md:8: the block is never closed',
      'docs/marked.md:8: a block without a language (ts, sh, json, http, text …)',
      'docs/marked.md:6: a skip marker that is not just before a fence',
    ]);
  });
});
