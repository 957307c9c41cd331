/**
 * `proceed destroy resource <collection>`: takes back what `proceed generate resource` added.
 * The files it made are removed and the ones it changed put back as they were; its migration is
 * removed when no database applied it and nothing came after it, else a new migration drops the
 * table (docs/cli.md, "proceed destroy resource").
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { CliError } from '../errors.js';
import { checkCollectionName, GenerateError } from './fields.js';
import { listed } from './render.js';

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
  /** The migration that made the table; undefined when there is none to act on. */
  migration:
    | {
        tag: string;
        when: number;
        /** Whether it is the journal's last entry: only then can it be taken back. */
        last: boolean;
        journal: string;
      }
    | undefined;
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
  const typeLine = new RegExp(`export type \\w+ = typeof ${collection}\\.\\$inferSelect;\\n?`).exec(
    schema.slice(Math.max(start, 0)),
  );
  if (start < 0 || typeLine === null)
    throw new GenerateError(
      `src/schema.ts has no table ${collection} as proceed generate writes it (export const ${collection} = pgTable(…) … export type … = typeof ${collection}.$inferSelect)`,
    );
  const end = start + typeLine.index + typeLine[0].length;
  const block = schema.slice(start, end);
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
      (name) => !new RegExp(`\\b${name}\\(`).test(block) || new RegExp(`\\b${name}\\(`).test(body),
    );
    rest = rest.replace(pgCore, () => listed('import { ', kept, " } from 'drizzle-orm/pg-core';"));
  }
  return rest;
}

/** src/app.ts without the collection's import and its place in `api`. */
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
  return app
    .replace(importLine, '')
    .replace(apiList, () => listed('export const api = [', members, '] as const;'));
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
  let migration: DestroyPlan['migration'];
  if (existsSync(join(app, 'drizzle/meta/_journal.json'))) {
    const journal = read(app, 'drizzle/meta/_journal.json');
    const { entries } = JSON.parse(journal) as Journal;
    const made = new RegExp(`^\\d+_${collection}$`);
    const index = entries.findIndex((entry) => made.test(entry.tag));
    const entry = entries[index];
    if (entry !== undefined)
      migration = { tag: entry.tag, when: entry.when, last: index === entries.length - 1, journal };
  }
  return { collection, changed, removed, migration };
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

/** What the command does with the migration, said before it does it. */
export function migrationAction(plan: DestroyPlan, applied: boolean): 'remove' | 'drop' | 'none' {
  if (plan.migration === undefined) return 'none';
  return !applied && plan.migration.last ? 'remove' : 'drop';
}

/**
 * Takes the resource back. With `drop`, the schema is written first and the app's drizzle-kit
 * writes the migration that drops the table; any failure puts every file back.
 */
export async function writeDestroy(
  app: string,
  plan: DestroyPlan,
  action: 'remove' | 'drop' | 'none',
  migrate: (app: string, name: string) => Promise<void>,
): Promise<void> {
  const saved = new Map<string, string>();
  for (const path of plan.removed) saved.set(path, readFileSync(join(app, path), 'utf8'));
  const undo = () => {
    for (const { path, before } of plan.changed) writeFileSync(join(app, path), before);
    for (const [path, text] of saved) writeFileSync(join(app, path), text);
  };
  try {
    for (const { path, after } of plan.changed) writeFileSync(join(app, path), after);
    if (action === 'drop') await migrate(app, `drop_${plan.collection}`);
    if (action === 'remove' && plan.migration !== undefined) {
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
export function destroySummary(
  plan: DestroyPlan,
  action: 'remove' | 'drop' | 'none',
  dryRun: boolean,
  applied: boolean,
): string {
  const rows: [string, string][] = [
    ...plan.removed.map((path): [string, string] => [path, 'removed']),
    ['src/schema.ts', `without the ${plan.collection} table`],
    ['src/app.ts', `without ${plan.collection}Procedures`],
  ];
  if (plan.migration !== undefined) {
    const files = migrationFilesOf(plan.migration.tag).join(', ');
    rows.push(
      action === 'remove'
        ? [files, 'removed, and its journal entry: no database applied it']
        : [
            `drizzle/NNNN_drop_${plan.collection}.sql`,
            `a migration that drops the table (${plan.migration.tag} ${applied ? 'was applied' : 'has migrations after it'})`,
          ],
    );
  }
  const width = Math.max(...rows.map(([path]) => path.length)) + 2;
  return `${dryRun ? 'Would take back' : 'Took back'} ${plan.collection}:
${rows.map(([path, what]) => `  ${path.padEnd(width)}${what}`).join('\n')}
${dryRun ? '\nNothing was written (--dry-run).\n' : ''}`;
}
