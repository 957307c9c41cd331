import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { root } from '../../../test/processes.js';
import { CliError } from '../errors.js';
import { destroyCommand, generateCommand, planResource, summary, writeResource } from './command.js';
import { GenerateError, parseFields, resourceNames, singularOf } from './fields.js';
import { a, addTable, addToApi, listsMcpTools, resourceModule, withMcpTools } from './render.js';
import { testModule } from './test-module.js';

const template = join(root, 'packages/create-proceed/template/app');
const scratch = mkdtempSync(join(tmpdir(), 'proceed-generate-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let apps = 0;
/** A copy of the app template with the package.json npm create proceed writes (the parts read). */
function app(): string {
  const directory = join(scratch, `app-${++apps}`);
  cpSync(template, directory, { recursive: true });
  writeFileSync(
    join(directory, 'package.json'),
    JSON.stringify({
      dependencies: { proceedjs: '^1.0.0' },
      scripts: { 'db:generate': 'drizzle-kit generate' },
    }),
  );
  return directory;
}

/** Every file under `directory` with its text: what a refused command must leave as it was. */
function snapshot(directory: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(directory, { recursive: true, withFileTypes: true }))
    if (entry.isFile()) {
      const path = join(entry.parentPath, entry.name);
      files[path.slice(directory.length + 1)] = readFileSync(path, 'utf8');
    }
  return files;
}

/** What drizzle-kit does, without drizzle-kit: a new SQL file, a snapshot, the journal rewritten. */
const fakeMigrate = async (directory: string, name: string) => {
  writeFileSync(join(directory, `drizzle/0001_${name}.sql`), 'CREATE TABLE x ();');
  writeFileSync(join(directory, 'drizzle/meta/0001_snapshot.json'), '{}');
  writeFileSync(join(directory, 'drizzle/meta/_journal.json'), '{"changed":true}');
};

describe('names', () => {
  it('makes the resource, the table and the procedure names from the plural', () => {
    expect(resourceNames('bookmarks')).toEqual({
      collection: 'bookmarks',
      table: 'bookmarks',
      resource: 'Bookmark',
      plural: 'Bookmarks',
    });
    expect(resourceNames('readingLists')).toMatchObject({ table: 'reading_lists', resource: 'ReadingList' });
    expect(resourceNames('people', 'person')).toMatchObject({ resource: 'Person', plural: 'People' });
    expect([
      singularOf('categories'),
      singularOf('addresses'),
      singularOf('boxes'),
      singularOf('keys'),
    ]).toEqual(['category', 'address', 'box', 'key']);
  });

  it.each([
    ['Bookmarks', 'is not a collection name'],
    ['book-marks', 'is not a collection name'],
    ['2things', 'is not a collection name'],
    ['users', 'is taken by the app itself'],
    ['people', 'does not end in s'],
    ['glass', 'does not end in s'],
    ['classes', 'is a JavaScript word'],
    ['fields', 'is taken by the app itself'],
  ])('refuses %s', (name, why) => {
    expect(() => resourceNames(name)).toThrow(GenerateError);
    expect(() => resourceNames(name)).toThrow(why);
  });
});

describe('fields', () => {
  it('parses name:type, and name:type? as optional, with the column in snake_case', () => {
    const plain = { optional: false, list: false, level: 'public' };
    expect(parseFields(['url:string', 'dueAt:datetime?', 'count:integer'])).toEqual([
      { ...plain, name: 'url', column: 'url', type: 'string' },
      { ...plain, name: 'dueAt', column: 'due_at', type: 'datetime', optional: true },
      { ...plain, name: 'count', column: 'count', type: 'integer' },
    ]);
  });

  it('parses lists, enums, references to users, and who sees a field', () => {
    expect(
      parseFields([
        'tags:string[]',
        'status:enum:draft,published',
        'author:ref:users?',
        'notes:text?@owner',
        'cost:number@admin',
      ]),
    ).toEqual([
      { name: 'tags', column: 'tags', type: 'string', optional: false, list: true, level: 'public' },
      {
        name: 'status',
        column: 'status',
        type: 'string',
        optional: false,
        list: false,
        level: 'public',
        values: ['draft', 'published'],
      },
      {
        name: 'authorId',
        column: 'author_id',
        type: 'uuid',
        optional: true,
        list: false,
        level: 'public',
        references: 'users',
      },
      { name: 'notes', column: 'notes', type: 'text', optional: true, list: false, level: 'owner' },
      { name: 'cost', column: 'cost', type: 'number', optional: false, list: false, level: 'admin' },
    ]);
  });

  it.each([
    [[], 'No fields given'],
    [['url'], 'is not a field'],
    [['url:strings'], '"strings" is not a field type'],
    [['url:'], '"" is not a field type'],
    [['Url:string'], 'is not a field name'],
    [['ownerId:uuid'], 'is a column every resource has'],
    [['createdAt:datetime'], 'is a column every resource has'],
    [['id:uuid'], 'is a column every resource has'],
    [['url:string', 'url:text'], 'The field "url" is given twice'],
    [['tags:datetime[]'], 'a list holds string, text, integer, number, boolean, uuid, not datetime'],
    [['status:enum:draft'], 'an enum lists two or more values'],
    [['status:enum:Draft,published'], 'an enum lists two or more values'],
    [['status:enum:a,a'], 'lists a value twice'],
    [['owner:ref:users'], '"ownerId" is a column every resource has'],
    [
      ['author:ref:people'],
      'refers to "people": a reference names users; one to another collection is not generated',
    ],
    [['authors:ref:users[]'], 'a reference is one id, not a list'],
    [['notes:text@everyone'], 'is not a field'],
  ])('refuses %j', (words, why) => {
    expect(() => parseFields(words)).toThrow(why);
  });
});

describe('the generated text', () => {
  const directory = app();
  const plan = planResource(directory, 'bookmarks', ['url:string', 'notes:text?', 'visits:integer']);
  const [schema, appModule] = plan.changed;
  const [resourceFile, testFile] = plan.created;

  it('sums up what it wrote in aligned columns, with a client hint that names the client apart from api', () => {
    const text = summary(plan, ['drizzle/0001_bookmarks.sql', 'drizzle/meta/0001_snapshot.json']);
    const rows = text.split('\n').slice(1, 6);
    // Where each row's description starts: after its path and at least two spaces.
    const columns = rows.map((row) => row.search(/(?<=\S {2,})\S/));
    expect(new Set(columns).size).toBe(1);
    expect(rows[1]).toMatch(/^ {2}drizzle\/0001_bookmarks\.sql {2,}its migration/);
    expect(text).toContain('const client = createClient<typeof api>(');
    expect(text).toContain('await client.bookmarks.createBookmark(');
    expect(text).not.toMatch(/const api = /);
  });

  it('adds the table to src/schema.ts with its columns, and imports what it uses', () => {
    expect(schema?.path).toBe('src/schema.ts');
    const text = schema?.after ?? '';
    const imported = /import \{([^}]*)\} from 'drizzle-orm\/pg-core';/.exec(text)?.[1] ?? '';
    expect(
      imported
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    ).toEqual(['boolean', 'index', 'integer', 'pgTable', 'text', 'timestamp', 'uuid', 'varchar']);
    expect(text).toContain("export const bookmarks = pgTable(\n  'bookmarks',");
    expect(text).toContain(".references(() => users.id, { onDelete: 'cascade' })");
    expect(text).toContain("url: varchar('url', { length: 255 }).notNull(),");
    expect(text).toContain("notes: text('notes'),\n");
    expect(text).toContain("visits: integer('visits').notNull(),");
    expect(text).toContain('export type Bookmark = typeof bookmarks.$inferSelect;');
    // Everything that was there stays.
    expect(text).toContain((schema?.before ?? '').split('\n').slice(6).join('\n').trimEnd());
  });

  it('adds the collection to api in src/app.ts, and its import, and its procedures to the MCP tools', () => {
    const text = appModule?.after ?? '';
    expect(text).toMatch(/export const api = \[auth, notesProcedures, bookmarksProcedures\] as const;/);
    expect(text).toContain("import { bookmarksProcedures } from './bookmarks.js';");
    expect(text).toContain("mcpPlugin, { collections: ['notes', 'bookmarks'],");
    expect(text.split('\n').length).toBe((appModule?.before ?? '').split('\n').length + 1);
    expect(plan.mcpTools).toBe(true);
    expect(summary(plan, [])).toContain('bookmarksProcedures added to api, its procedures to the MCP tools');
  });

  it('writes a or an as the word sounds', () => {
    const written = [
      'bookmark',
      'item',
      'unit',
      'user',
      'umbrella',
      'hour',
      'euro',
      'order',
      'one-off',
      'uuid',
    ];
    expect(written.map(a)).toEqual([
      'a bookmark',
      'an item',
      'a unit',
      'a user',
      'an umbrella',
      'an hour',
      'a euro',
      'an order',
      'a one-off',
      'a uuid',
    ]);
  });

  it("adds to mcpPlugin's collections only a list it can give back as it was", () => {
    const app = (list: string) => `await app.register(mcpPlugin, { collections: [${list}], name: 'x' });`;
    const roundTrip = (list: string) => {
      const added = withMcpTools(app(list), 'bookmarks', true);
      return { added, back: withMcpTools(added, 'bookmarks', false) === app(list) };
    };
    expect(roundTrip("'notes'")).toEqual({ added: app("'notes', 'bookmarks'"), back: true });
    expect(roundTrip('"notes", "posts" ')).toEqual({
      added: app('"notes", "posts", "bookmarks" '),
      back: true,
    });
    expect(roundTrip('')).toEqual({ added: app("'bookmarks'"), back: true });
    expect(roundTrip("'notes',")).toEqual({ added: app("'notes', 'bookmarks',"), back: true });
    // A list written otherwise is the author's: left as it is, and not claimed in the summary.
    for (const list of ["'notes' /* and more */", '...base', "'notes', other", "\n  'notes',\n"]) {
      expect(listsMcpTools(app(list))).toBe(false);
      expect(withMcpTools(app(list), 'bookmarks', true)).toBe(app(list));
    }
    expect(withMcpTools("server.register(otherPlugin, { collections: ['notes'] });", 'bookmarks', true)).toBe(
      "server.register(otherPlugin, { collections: ['notes'] });",
    );
    // Taken out wherever it stands, and only it.
    expect(withMcpTools(app("'bookmarks', 'notes'"), 'bookmarks', false)).toBe(app("'notes'"));
    expect(withMcpTools(app("'a', 'bookmarks', 'b'"), 'bookmarks', false)).toBe(app("'a', 'b'"));
    expect(withMcpTools(app("'bookmarksArchive'"), 'bookmarks', false)).toBe(app("'bookmarksArchive'"));
  });

  it('writes the resource with per-record views and the five procedures', () => {
    expect(resourceFile?.path).toBe('src/bookmarks.ts');
    const text = resourceFile?.text ?? '';
    expect(text).toContain("export const Bookmark = resource(\n  'Bookmark',");
    expect(text).toContain(
      'public: { id: z.uuid(), url: z.string(), notes: z.string().nullable(), visits: z.number() },',
    );
    expect(text).toContain('notes: z.string().max(10_000).nullable().optional(),');
    for (const name of ['listBookmarks', 'getBookmark', 'createBookmark', 'updateBookmark', 'deleteBookmark'])
      expect(text).toContain(`  ${name}: p()`);
    // A summary each, which the docs UI shows and an agent reads as the tool's title.
    expect(text).toContain("getBookmark: p()\n    .meta({ summary: 'A bookmark by its id' })");
    expect(text.match(/\.meta\(\{ summary: '/g)).toHaveLength(5);
    expect(text).toContain('.output(cursorPage(Bookmark.perRecord, listing))');
    expect(text).toContain("owner: 'ownerId',");
    expect(text).toContain('const ownBookmark = owned(\n  Bookmark,');
    expect(text.match(/\.use\(ownBookmark\)/g)).toHaveLength(2);
  });

  it('reads dates and times in the years PostgreSQL stores: a 400 for the rest, never its 500', () => {
    const text = resourceModule(
      resourceNames('events'),
      parseFields(['on:date', 'at:datetime?', 'until:date?']),
    );
    // Declared once each, before the fields that name them.
    expect(text.match(/^const day = /gm)).toHaveLength(1);
    expect(text.match(/^const instant = z\.iso/gm)).toHaveLength(1);
    expect(text).toContain(
      '  on: day,\n  at: instant.nullable().optional(),\n  until: day.nullable().optional(),',
    );
    const declared = /(\/\*\* A day[\s\S]*?)\/\*\* What a client writes/.exec(text)?.[1] ?? '';
    const { day, instant } = new Function('z', `${declared}; return { day, instant };`)(z) as Record<
      'day' | 'instant',
      z.ZodType
    >;
    expect(day.safeParse('0001-01-01').success).toBe(true);
    expect(day.safeParse('9999-12-31').success).toBe(true);
    expect(day.safeParse('0000-12-31').error?.issues[0]?.message).toBe('Expected a date from 0001-01-01 on');
    expect(instant.parse('2025-01-31T09:30:00+01:00')).toEqual(new Date('2025-01-31T08:30:00Z'));
    expect(instant.safeParse('0100-01-01T00:00:00Z').success).toBe(true);
    // Years PostgreSQL refuses, or that drizzle would read back as others, with the offset that
    // takes a time there.
    for (const outside of [
      '0000-06-01T00:00:00Z',
      '0049-06-01T12:00:00Z',
      '0100-01-01T00:00:00+01:00',
      '9999-12-31T23:00:00-02:00',
    ])
      expect(instant.safeParse(outside).error?.issues[0]?.message).toBe(
        'Expected a time from 0100 to 9999 in UTC',
      );
  });

  it('writes the test through the typed client', () => {
    expect(testFile?.path).toBe('test/bookmarks.test.ts');
    const text = testFile?.text ?? '';
    expect(text).toContain("describe.each(engines)('bookmarks on $name'");
    expect(text).toContain(
      "const first = () => ({ url: 'https://example.com/first', notes: 'First notes', visits: 42 });",
    );
    expect(text).toContain('ada.api.bookmarks.createBookmark(first())');
    // Readable: no line longer than 120 columns.
    expect(text.split('\n').filter((line) => line.length > 120)).toEqual([]);
    expect(text).toContain('// @ts-expect-error: url is required');
    expect(text).toContain('deletes a bookmark, its owner');
    expect(testModule(resourceNames('events'), parseFields(['name:string']))).toContain(
      'deletes an event, its owner',
    );
  });

  it('wraps a long list one item a line', () => {
    const many = parseFields([
      'a:uuid',
      'b:date',
      'c:number',
      'd:boolean',
      'e:text',
      'f:datetime',
      'g:string',
    ]);
    const text = addTable(schema?.before ?? '', resourceNames('things'), many);
    expect(text).toContain('import {\n  boolean,\n  date,\n  doublePrecision,\n');
    expect(text).toContain("  varchar,\n} from 'drizzle-orm/pg-core';");
  });

  it('refuses a schema or an app module not in the template shape', () => {
    const names = resourceNames('bookmarks');
    const fields = parseFields(['url:string']);
    expect(() => addTable('export const users = 1;', names, fields)).toThrow(
      "src/schema.ts is not the template's",
    );
    expect(() => addTable(schema?.before ?? '', resourceNames('notes'), fields)).toThrow(
      'src/schema.ts already declares notes',
    );
    expect(() => addToApi('export const api = [auth];', names)).toThrow("src/app.ts is not the template's");
  });
});

describe('proceed generate resource', () => {
  const refused = async (directory: string, args: string[], why: string) => {
    const before = snapshot(directory);
    const failure = await generateCommand(args, directory).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CliError);
    expect((failure as CliError).exitCode).toBe(2);
    expect((failure as CliError).message).toContain(why);
    expect((failure as CliError).message).not.toContain('\n');
    expect(snapshot(directory)).toEqual(before);
  };

  it('refuses, writing nothing, outside an app, on a bad name or field, and over a file that exists', async () => {
    const empty = mkdtempSync(join(scratch, 'empty-'));
    await refused(empty, ['resource', 'bookmarks', 'url:string'], 'No package.json here');
    writeFileSync(join(empty, 'package.json'), '{"dependencies":{"zod":"^4"}}');
    await refused(
      empty,
      ['resource', 'bookmarks', 'url:string'],
      'package.json does not depend on proceedjs',
    );

    const directory = app();
    await refused(directory, ['resource', 'Bookmarks', 'url:string'], 'is not a collection name');
    await refused(directory, ['resource', 'bookmarks', 'url:link'], '"link" is not a field type');
    await refused(
      directory,
      ['resource', 'bookmarks', 'updatedAt:datetime'],
      'is a column every resource has',
    );
    await refused(directory, ['resource', 'bookmarks', 'url:string', 'url:text'], 'given twice');
    await refused(directory, ['resource', 'notes', 'url:string'], 'src/notes.ts exists already');
    await refused(directory, ['resource', 'roles', 'url:string'], 'src/schema.ts already declares roles');
    writeFileSync(join(directory, 'test/bookmarks.test.ts'), '// mine');
    await refused(
      directory,
      ['resource', 'bookmarks', 'url:string'],
      'test/bookmarks.test.ts exists already',
    );
    rmSync(join(directory, 'src/schema.ts'));
    await refused(directory, ['resource', 'links', 'url:string'], 'No src/schema.ts here');
  });

  it('refuses what is not a resource with its usage', async () => {
    await expect(generateCommand(['model', 'x'], app())).rejects.toMatchObject({
      exitCode: 2,
      message: 'Unknown generator "model": proceed generate resource',
    });
    await expect(generateCommand(['resource', 'x', '--force'], app())).rejects.toMatchObject({ exitCode: 2 });
  });

  it('writes every file after the migration, and returns the migration', async () => {
    const directory = app();
    const plan = planResource(directory, 'bookmarks', ['url:string']);
    expect(await writeResource(directory, plan, fakeMigrate)).toEqual([
      'drizzle/0001_bookmarks.sql',
      'drizzle/meta/0001_snapshot.json',
    ]);
    for (const { path, after } of plan.changed)
      expect(readFileSync(join(directory, path), 'utf8')).toBe(after);
    for (const { path, text } of plan.created) expect(readFileSync(join(directory, path), 'utf8')).toBe(text);
  });

  it('puts every file back when drizzle-kit fails', async () => {
    const directory = app();
    const before = snapshot(directory);
    const plan = planResource(directory, 'bookmarks', ['url:string']);
    const failing = async (at: string, name: string) => {
      await fakeMigrate(at, name);
      throw new CliError('npm run db:generate failed');
    };
    await expect(writeResource(directory, plan, failing)).rejects.toThrow('npm run db:generate failed');
    expect(snapshot(directory)).toEqual(before);
  });

  it('puts every file back when a file appears meanwhile, and leaves that file alone', async () => {
    const directory = app();
    const before = snapshot(directory);
    const plan = planResource(directory, 'bookmarks', ['url:string']);
    const racing = async (at: string, name: string) => {
      await fakeMigrate(at, name);
      writeFileSync(join(at, 'test/bookmarks.test.ts'), '// written by someone else meanwhile');
    };
    await expect(writeResource(directory, plan, racing)).rejects.toThrow('EEXIST');
    expect(snapshot(directory)).toEqual({
      ...before,
      'test/bookmarks.test.ts': '// written by someone else meanwhile',
    });
    expect(existsSync(join(directory, 'src/bookmarks.ts'))).toBe(false);
  });

  it('refuses a migration step that writes no SQL', async () => {
    const directory = app();
    const before = snapshot(directory);
    const plan = planResource(directory, 'bookmarks', ['url:string']);
    await expect(writeResource(directory, plan, async () => {})).rejects.toThrow('wrote no migration');
    expect(snapshot(directory)).toEqual(before);
  });
});

/** What drizzle-kit does to the journal: one entry more, written as it writes it. */
const journalledMigrate = async (directory: string, name: string) => {
  const path = join(directory, 'drizzle/meta/_journal.json');
  const journal = JSON.parse(readFileSync(path, 'utf8')) as { entries: { idx: number }[] };
  const idx = journal.entries.length;
  const tag = `${String(idx).padStart(4, '0')}_${name}`;
  journal.entries.push({ idx, version: '7', when: 1_800_000_000_000 + idx, tag, breakpoints: true } as never);
  writeFileSync(path, `${JSON.stringify(journal, null, 2)}\n`);
  writeFileSync(join(directory, `drizzle/${tag}.sql`), `-- ${name}`);
  writeFileSync(join(directory, `drizzle/meta/${String(idx).padStart(4, '0')}_snapshot.json`), '{}');
};

describe('proceed destroy resource', () => {
  const fields = [
    'url:string',
    'tags:string[]',
    'status:enum:unread,read',
    'author:ref:users?',
    'notes:text?@owner',
  ];
  const previous = process.env.DATABASE_URL;
  afterAll(() => {
    if (previous === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = previous;
  });

  it('takes back everything generate wrote, the migration too when no database applied it', async () => {
    delete process.env.DATABASE_URL;
    const directory = app();
    const before = snapshot(directory);
    await writeResource(directory, planResource(directory, 'bookmarks', fields), journalledMigrate);
    expect(snapshot(directory)).not.toEqual(before);
    const dry = await captured(() => destroyCommand(['resource', 'bookmarks', '--dry-run'], directory));
    expect(dry).toContain('Would take back bookmarks');
    expect(dry).toContain('drizzle/0001_bookmarks.sql, drizzle/meta/0001_snapshot.json  removed');
    expect(snapshot(directory)).not.toEqual(before);
    const migrate = vi.fn(async () => {});
    await captured(() => destroyCommand(['resource', 'bookmarks'], directory, migrate));
    expect(migrate).not.toHaveBeenCalled();
    expect(snapshot(directory)).toEqual(before);
  });

  it('writes a migration that drops the table when the database applied the first', async () => {
    const directory = app();
    await writeResource(directory, planResource(directory, 'bookmarks', ['url:string']), journalledMigrate);
    const afterGenerate = snapshot(directory);
    // The app's PGlite database, migrated up to the resource's migration.
    const { PGlite } = await import('@electric-sql/pglite');
    mkdirSync(join(directory, '.data'));
    // The app's own drivers: destroy loads them from the app, as from an installed one.
    symlinkSync(join(root, 'node_modules'), join(directory, 'node_modules'), 'dir');
    const database = new PGlite(join(directory, '.data/db'));
    await database.exec(
      "CREATE SCHEMA drizzle; CREATE TABLE drizzle.__drizzle_migrations (id serial, hash text, created_at bigint); INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('x', 1800000000001)",
    );
    await database.close();
    delete process.env.DATABASE_URL;
    const migrate = vi.fn(journalledMigrate);
    const said = await captured(() => destroyCommand(['resource', 'bookmarks'], directory, migrate));
    expect(migrate).toHaveBeenCalledWith(directory, 'drop_bookmarks');
    expect(said).toContain('a migration that drops the table (0001_bookmarks was applied)');
    expect(readFileSync(join(directory, 'drizzle/0001_bookmarks.sql'), 'utf8')).toBe(
      afterGenerate['drizzle/0001_bookmarks.sql'],
    );
    expect(readFileSync(join(directory, 'drizzle/meta/_journal.json'), 'utf8')).toContain(
      '0002_drop_bookmarks',
    );
    expect(existsSync(join(directory, 'src/bookmarks.ts'))).toBe(false);
  });

  it('keeps a committed migration, which a database elsewhere may have applied, and puts all back when drizzle-kit writes none', async () => {
    delete process.env.DATABASE_URL;
    const directory = app();
    await writeResource(directory, planResource(directory, 'bookmarks', ['url:string']), journalledMigrate);
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], {
        cwd: directory,
      });
    git('init', '--quiet');
    git('add', '-A');
    git('commit', '--quiet', '-m', 'With bookmarks');
    const committed = snapshot(directory);
    await expect(destroyCommand(['resource', 'bookmarks'], directory, async () => {})).rejects.toThrow(
      'wrote no migration to drop the table',
    );
    expect(snapshot(directory)).toEqual(committed);
    const said = await captured(() =>
      destroyCommand(['resource', 'bookmarks'], directory, journalledMigrate),
    );
    expect(said).toContain('a migration that drops the table (0001_bookmarks is committed)');
    expect(existsSync(join(directory, 'drizzle/0001_bookmarks.sql'))).toBe(true);
  });

  it('refuses while another module uses the resource, and a table generate did not make', async () => {
    delete process.env.DATABASE_URL;
    const directory = app();
    await writeResource(directory, planResource(directory, 'bookmarks', ['url:string']), journalledMigrate);
    writeFileSync(join(directory, 'src/extra.ts'), "export { Bookmark } from './bookmarks.js';\n");
    const before = snapshot(directory);
    await expect(destroyCommand(['resource', 'bookmarks'], directory)).rejects.toThrow(
      'src/extra.ts uses bookmarks: change it first, nothing was changed',
    );
    // The template's own table: no migration named after it, and not the shape generate writes.
    await expect(destroyCommand(['resource', 'notes'], directory)).rejects.toThrow(
      'src/schema.ts has no table notes as proceed generate writes it',
    );
    expect(snapshot(directory)).toEqual(before);
  });

  it('refuses to open a PGlite database a running app holds', async () => {
    delete process.env.DATABASE_URL;
    const directory = app();
    await writeResource(directory, planResource(directory, 'bookmarks', ['url:string']), journalledMigrate);
    const before = snapshot(directory);
    mkdirSync(join(directory, '.data/db'), { recursive: true });
    // The test runner's parent: a process that is running, as a dev server would be.
    writeFileSync(join(directory, '.data/db/app.lock'), String(process.ppid));
    await expect(destroyCommand(['resource', 'bookmarks'], directory)).rejects.toThrow(
      `is open in another process (pid ${process.ppid}): stop the app first`,
    );
    rmSync(join(directory, '.data'), { recursive: true });
    expect(snapshot(directory)).toEqual(before);
  });

  it('refuses a collection generate did not make, changing nothing', async () => {
    const directory = app();
    const before = snapshot(directory);
    await expect(destroyCommand(['resource', 'bookmarks'], directory)).rejects.toThrow(
      'src/schema.ts has no table bookmarks',
    );
    await expect(destroyCommand(['resource', 'users'], directory)).rejects.toThrow(
      'is taken by the app itself',
    );
    expect(snapshot(directory)).toEqual(before);
  });

  it('prints what generate would write with --dry-run, writing nothing', async () => {
    const directory = app();
    const before = snapshot(directory);
    const said = await captured(() =>
      generateCommand(['resource', 'bookmarks', ...fields, '--dry-run'], directory),
    );
    expect(said).toContain('Would add bookmarks');
    expect(said).toContain('export const Bookmark = resource(');
    expect(said).toContain('Nothing was written (--dry-run).');
    expect(snapshot(directory)).toEqual(before);
  });
});

/** What a command writes to standard output while `run` runs. */
async function captured(run: () => Promise<unknown>): Promise<string> {
  const chunks: string[] = [];
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    chunks.push(String(chunk));
    return true;
  });
  try {
    await run();
  } finally {
    write.mockRestore();
  }
  return chunks.join('');
}
