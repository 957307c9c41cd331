/**
 * `proceed destroy resource <collection>`: takes back what `proceed generate resource` added.
 * The files it made are removed and the ones it changed put back as they were; its migration is
 * removed when no database applied it and nothing came after it, else a new migration drops the
 * table (docs/cli.md, "proceed destroy resource").
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve, sep } from 'node:path';
import { CliError } from '../errors.js';
import { checkCollectionName, GenerateError } from './fields.js';
import { listed, withMcpTools } from './render.js';

interface JournalEntry {
  idx: number;
  when: number;
  tag: string;
}
interface Journal {
  entries: JournalEntry[];
}

/** What the command will do, each path relative to the app. */
export interface DestroyPlan {
  collection: string;
  /** src/schema.ts and src/app.ts, as they were before the resource. */
  changed: { path: string; before: string; after: string }[];
  /** The resource's module and test, those that exist. */
  removed: string[];
  /** The migration that made the table. */
  migration: {
    tag: string;
    when: number;
    /** Whether it is the journal's last entry: only then can it be taken back. */
    last: boolean;
    journal: string;
  };
}

const read = (app: string, path: string) => {
  try {
    return readFileSync(join(app, path), 'utf8');
  } catch {
    throw new GenerateError(`No ${path} here: run proceed destroy in an app made by npm create proceed`);
  }
};

/** The names of an import list: `{ a, b }` → [a, b]. */
const namesOf = (list: string) =>
  list
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');

/** src/schema.ts without the collection's table, and without the builders only it used. */
function withoutTable(schema: string, collection: string): string {
  const start = schema.indexOf(`\nexport const ${collection} = pgTable(`);
  // The table as generate writes it: its pgTable(…) call closes a line with `);`, and its row
  // type follows on the next line but one.
  const block =
    start < 0
      ? null
      : new RegExp(
          `^\\nexport const ${collection} = pgTable\\([^]*?\\n\\);\\n\\nexport type \\w+ = typeof ${collection}\\.\\$inferSelect;\\n?`,
        ).exec(schema.slice(start));
  if (start < 0 || block === null)
    throw new GenerateError(
      `src/schema.ts has no table ${collection} as proceed generate writes it (export const ${collection} = pgTable(…); then its export type … = typeof ${collection}.$inferSelect)`,
    );
  const end = start + block[0].length;
  const removed = schema.slice(start, end);
  let rest = `${schema.slice(0, start).trimEnd()}\n${schema.slice(end).replace(/^\n+/, '\n')}`.replace(
    /\n+$/,
    '\n',
  );
  if (new RegExp(`\\b${collection}\\.`).test(rest))
    throw new GenerateError(`src/schema.ts refers to ${collection} outside its table: remove that first`);
  const pgCore = /import \{([^}]*)\} from 'drizzle-orm\/pg-core';/;
  const imported = pgCore.exec(rest);
  if (imported !== null) {
    const body = rest.replace(pgCore, '');
    const kept = namesOf(imported[1] ?? '').filter(
      (name) => !new RegExp(`\\b${name}\\(`).test(removed) || new RegExp(`\\b${name}\\(`).test(body),
    );
    rest = rest.replace(pgCore, () => listed('import { ', kept, " } from 'drizzle-orm/pg-core';"));
  }
  return rest;
}

/** src/app.ts without the collection's import and its place in `api` and the MCP tools. */
function withoutProcedures(app: string, collection: string): string {
  const exported = `${collection}Procedures`;
  const importLine = new RegExp(`\\nimport \\{ ${exported} \\} from '\\./${collection}\\.js';`);
  const apiList = /export const api = \[([^\]]*)\] as const;/;
  const list = apiList.exec(app);
  if (!importLine.test(app) || list === null || !namesOf(list[1] ?? '').includes(exported))
    throw new GenerateError(
      `src/app.ts does not import ${exported} and list it in api as proceed generate does`,
    );
  const members = namesOf(list[1] ?? '').filter((name) => name !== exported);
  return withMcpTools(
    app
      .replace(importLine, '')
      .replace(apiList, () => listed('export const api = [', members, '] as const;')),
    collection,
    false,
  );
}

/**
 * Checks the app and works out what to take back, writing nothing. Throws {@link GenerateError}.
 *
 * @example
 * const plan = planDestroy(process.cwd(), 'bookmarks');
 */
export function planDestroy(app: string, collection: string): DestroyPlan {
  // The same rules as generate: a name it refuses, it never made.
  checkCollectionName(collection);
  const schema = read(app, 'src/schema.ts');
  const appModule = read(app, 'src/app.ts');
  const changed = [
    { path: 'src/schema.ts', before: schema, after: withoutTable(schema, collection) },
    { path: 'src/app.ts', before: appModule, after: withoutProcedures(appModule, collection) },
  ];
  const removed = [`src/${collection}.ts`, `test/${collection}.test.ts`].filter((path) =>
    existsSync(join(app, path)),
  );
  // Generate named its migration after the collection: without one, it did not make this table.
  const journal = read(app, 'drizzle/meta/_journal.json');
  const { entries } = JSON.parse(journal) as Journal;
  const made = new RegExp(`^\\d+_${collection}$`);
  const index = entries.findIndex((entry) => made.test(entry.tag));
  const entry = entries[index];
  if (entry === undefined)
    throw new GenerateError(
      `drizzle/ has no migration named ${collection} (NNNN_${collection}.sql): proceed generate did not make this table, so destroy leaves it alone`,
    );
  const migration = { tag: entry.tag, when: entry.when, last: index === entries.length - 1, journal };
  const users = usesOf(app, collection, removed);
  if (users.length > 0)
    throw new GenerateError(
      `${users.join(', ')} ${users.length === 1 ? 'uses' : 'use'} ${collection}: change ${users.length === 1 ? 'it' : 'them'} first, nothing was changed`,
    );
  return { collection, changed, removed, migration };
}

/**
 * The app's other modules that still use the resource: an import of its module, or its name in
 * quotes (an MCP plugin's collections, say). They would not compile, or name what is gone.
 */
function usesOf(app: string, collection: string, removed: readonly string[]): string[] {
  const module = new RegExp(`from '\\.{1,2}/(?:src/)?${collection}\\.js'|['"]${collection}['"]`);
  const found: string[] = [];
  for (const folder of ['src', 'test']) {
    if (!existsSync(join(app, folder))) continue;
    for (const name of readdirSync(join(app, folder), { recursive: true, encoding: 'utf8' })) {
      const path = `${folder}/${name.split(sep).join('/')}`;
      if (!/\.(ts|tsx|mts|js)$/.test(path) || removed.includes(path) || path === 'src/app.ts') continue;
      // schema.ts is checked with the table taken out (withoutTable).
      if (path === 'src/schema.ts') continue;
      if (module.test(readFileSync(join(app, path), 'utf8'))) found.push(path);
    }
  }
  // In app.ts, anything but the import and the api entry destroy takes out.
  const appModule = withoutProcedures(read(app, 'src/app.ts'), collection);
  if (module.test(appModule) || new RegExp(`\\b${collection}Procedures\\b`).test(appModule))
    found.push('src/app.ts');
  return found.sort();
}

/**
 * Whether git holds the file in a commit: a committed migration may have been applied by a
 * database elsewhere (staging, production), so it is never taken back, only followed by a drop.
 */
function committed(app: string, path: string): boolean {
  const listed = spawnSync('git', ['log', '-1', '--format=%H', '--', path], { cwd: app, encoding: 'utf8' });
  return listed.status === 0 && listed.stdout.trim() !== '';
}

/** Where the app keeps its data, as src/db.ts reads it: DATABASE_URL, else PGlite in .data/db. */
function databaseOf(
  app: string,
): { kind: 'postgres'; url: string } | { kind: 'pglite'; path: string } | undefined {
  const url = process.env.DATABASE_URL || './.data/db';
  if (/^postgres(ql)?:\/\//.test(url)) return { kind: 'postgres', url };
  if (url === 'memory://') return undefined;
  const path = isAbsolute(url) ? url : resolve(app, url);
  return existsSync(path) ? { kind: 'pglite', path } : undefined;
}

/**
 * PGlite is one process's: opened beside a running app (its `app.lock` names a live process),
 * one of the two would lose what the other wrote.
 */
function refuseOpenDatabase(path: string): void {
  const lock = join(path, 'app.lock');
  if (!existsSync(lock)) return;
  const holder = Number.parseInt(readFileSync(lock, 'utf8'), 10);
  if (!Number.isInteger(holder) || holder <= 0 || holder === process.pid) return;
  try {
    process.kill(holder, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return;
  }
  throw new CliError(
    `The database in ${path} is open in another process (pid ${holder}): stop the app first, then run proceed destroy again`,
  );
}

const appliedQuery = 'SELECT created_at::text AS "when" FROM drizzle.__drizzle_migrations';

/**
 * Whether the app's database applied the migration made at `when` (drizzle's migrations table
 * keeps each one's `when`). No database yet: not applied.
 */
export async function wasApplied(app: string, when: number): Promise<boolean> {
  const database = databaseOf(app);
  if (database === undefined) return false;
  if (database.kind === 'pglite') refuseOpenDatabase(database.path);
  const load = createRequire(join(app, 'package.json'));
  let rows: { when: string }[];
  try {
    if (database.kind === 'postgres') {
      const pg = load('pg') as typeof import('pg');
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        rows = (await client.query<{ when: string }>(appliedQuery)).rows;
      } finally {
        await client.end();
      }
    } else {
      const { PGlite } = load('@electric-sql/pglite') as typeof import('@electric-sql/pglite');
      const client = new PGlite(database.path);
      try {
        rows = (await client.query<{ when: string }>(appliedQuery)).rows;
      } finally {
        await client.close();
      }
    }
  } catch (error) {
    // A database the app never migrated has no migrations table: nothing was applied.
    if ((error as { code?: string }).code === '42P01' || (error as { code?: string }).code === '3F000')
      return false;
    const where = database.kind === 'postgres' ? 'DATABASE_URL' : database.path;
    throw new CliError(
      `Could not tell whether the database (${where}) applied the resource's migration: ${(error as Error).message}. Stop the app if it holds the database, or set DATABASE_URL.`,
    );
  }
  return rows.some((row) => Number(row.when) === when);
}

/** The migration's files: its SQL and drizzle-kit's snapshot of the schema after it. */
function migrationFilesOf(tag: string): string[] {
  const number = /^\d+/.exec(tag)?.[0] ?? '';
  return [`drizzle/${tag}.sql`, `drizzle/meta/${number}_snapshot.json`];
}

/** Why the migration cannot be taken back, or undefined when it can. */
export function keptBecause(app: string, plan: DestroyPlan, applied: boolean): string | undefined {
  if (applied) return 'was applied';
  if (!plan.migration.last) return 'has migrations after it';
  if (committed(app, `drizzle/${plan.migration.tag}.sql`)) return 'is committed';
  return undefined;
}

/** The files under drizzle/ and drizzle/meta/ with their text, to put back or to tell what is new. */
function migrationFolder(app: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const folder of ['drizzle', 'drizzle/meta']) {
    if (!existsSync(join(app, folder))) continue;
    for (const name of readdirSync(join(app, folder), { withFileTypes: true }))
      if (name.isFile())
        files.set(`${folder}/${name.name}`, readFileSync(join(app, folder, name.name), 'utf8'));
  }
  return files;
}

/**
 * Takes the resource back: its migration removed (`kept` undefined), or a new one written by the
 * app's drizzle-kit that drops the table. Any failure puts every file back as it was.
 */
export async function writeDestroy(
  app: string,
  plan: DestroyPlan,
  kept: string | undefined,
  migrate: (app: string, name: string) => Promise<void>,
): Promise<void> {
  const saved = new Map<string, string>();
  for (const path of plan.removed) saved.set(path, readFileSync(join(app, path), 'utf8'));
  const migrations = migrationFolder(app);
  const undo = () => {
    for (const path of migrationFolder(app).keys())
      if (!migrations.has(path)) rmSync(join(app, path), { force: true });
    for (const [path, text] of migrations) writeFileSync(join(app, path), text);
    for (const { path, before } of plan.changed) writeFileSync(join(app, path), before);
    for (const [path, text] of saved) writeFileSync(join(app, path), text);
  };
  try {
    for (const { path, after } of plan.changed) writeFileSync(join(app, path), after);
    if (kept !== undefined) {
      await migrate(app, `drop_${plan.collection}`);
      const written = [...migrationFolder(app).keys()].filter((path) => !migrations.has(path));
      if (!written.some((path) => path.endsWith('.sql')))
        throw new CliError('npm run db:generate wrote no migration to drop the table; nothing was changed');
    } else {
      const journal = JSON.parse(plan.migration.journal) as Journal;
      const tag = plan.migration.tag;
      journal.entries = journal.entries.filter((entry) => entry.tag !== tag);
      const text = JSON.stringify(journal, null, 2);
      writeFileSync(
        join(app, 'drizzle/meta/_journal.json'),
        plan.migration.journal.endsWith('\n') ? `${text}\n` : text,
      );
      for (const path of migrationFilesOf(tag)) rmSync(join(app, path), { force: true });
    }
    for (const path of plan.removed) rmSync(join(app, path), { force: true });
  } catch (error) {
    undo();
    throw error;
  }
}

/** What was (or would be) done, one line a file. */
export function destroySummary(plan: DestroyPlan, kept: string | undefined, dryRun: boolean): string {
  const rows: [string, string][] = [
    ...plan.removed.map((path): [string, string] => [path, 'removed']),
    ['src/schema.ts', `without the ${plan.collection} table`],
    ['src/app.ts', `without ${plan.collection}Procedures`],
    kept === undefined
      ? [
          migrationFilesOf(plan.migration.tag).join(', '),
          'removed, and its journal entry: no database applied it',
        ]
      : [
          `drizzle/NNNN_drop_${plan.collection}.sql`,
          `a migration that drops the table (${plan.migration.tag} ${kept})`,
        ],
  ];
  const width = Math.max(...rows.map(([path]) => path.length)) + 2;
  return `${dryRun ? 'Would take back' : 'Took back'} ${plan.collection}:
${rows.map(([path, what]) => `  ${path.padEnd(width)}${what}`).join('\n')}
${dryRun ? '\nNothing was written (--dry-run).\n' : ''}`;
}
