/**
 * `proceed generate resource <collection> <field:type>...`: adds a resource to an app made by
 * `npm create proceed`. Everything is checked and rendered before the first write; the
 * migration comes from the app's own drizzle-kit; any failure after the first write puts every
 * file back as it was.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { CliError, UsageError } from '../errors.js';
import { commands } from '../usage.js';
import { destroySummary, keptBecause, planDestroy, wasApplied, writeDestroy } from './destroy.js';
import { type Field, GenerateError, parseFields, type ResourceNames, resourceNames } from './fields.js';
import { addTable, addToApi, listsMcpTools, resourceModule } from './render.js';
import { sampleObject, testModule } from './test-module.js';

const usage = commands.generate.usage;

/** What the command will write, each path relative to the app. */
export interface Plan {
  names: ResourceNames;
  fields: Field[];
  /** Files whose new text replaces the old: src/schema.ts and src/app.ts. */
  changed: { path: string; before: string; after: string }[];
  /** Files that must not exist yet: src/<collection>.ts and test/<collection>.test.ts. */
  created: { path: string; text: string }[];
  /** Whether src/app.ts lists mcpPlugin's collections, which the new one joins. */
  mcpTools: boolean;
}

function read(app: string, path: string, why: string): string {
  try {
    return readFileSync(join(app, path), 'utf8');
  } catch {
    throw new GenerateError(`No ${path} here: ${why}`);
  }
}

const notAnApp = 'run proceed generate in an app made by npm create proceed';

/**
 * Checks the app and renders every file, writing nothing. Throws {@link GenerateError}.
 *
 * @example
 * const plan = planResource(process.cwd(), 'bookmarks', ['url:string', 'notes:text?']);
 */
export function planResource(
  app: string,
  collection: string,
  fieldWords: readonly string[],
  singular?: string,
): Plan {
  const names = resourceNames(collection, singular);
  const fields = parseFields(fieldWords);
  const manifest = JSON.parse(read(app, 'package.json', notAnApp)) as {
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
    scripts?: Record<string, string>;
  };
  if (manifest.dependencies?.proceedjs === undefined && manifest.devDependencies?.proceedjs === undefined)
    throw new GenerateError(`package.json does not depend on proceedjs: ${notAnApp}`);
  if (manifest.scripts?.['db:generate'] === undefined)
    throw new GenerateError(
      `package.json has no db:generate script (drizzle-kit generate) to write the migration: ${notAnApp}`,
    );
  const schema = read(app, 'src/schema.ts', notAnApp);
  const appModule = read(app, 'src/app.ts', notAnApp);
  const context = read(app, 'src/context.ts', notAnApp);
  if (!/export const p = /.test(context) || !/export interface AppContext\b/.test(context))
    throw new GenerateError("src/context.ts is not the template's: it needs AppContext and p");
  for (const helper of ['test/client.ts', 'test/databases.ts'])
    if (!existsSync(join(app, helper))) throw new GenerateError(`No ${helper} here: ${notAnApp}`);
  const created = [
    { path: `src/${collection}.ts`, text: resourceModule(names, fields) },
    { path: `test/${collection}.test.ts`, text: testModule(names, fields) },
  ];
  for (const { path } of created)
    if (existsSync(join(app, path))) throw new GenerateError(`${path} exists already: nothing was written`);
  return {
    names,
    fields,
    changed: [
      { path: 'src/schema.ts', before: schema, after: addTable(schema, names, fields) },
      { path: 'src/app.ts', before: appModule, after: addToApi(appModule, names) },
    ],
    created,
    mcpTools: listsMcpTools(appModule),
  };
}

/** The files under drizzle/ and drizzle/meta/, to tell which ones drizzle-kit adds. */
function migrationFiles(app: string): Map<string, string | undefined> {
  const files = new Map<string, string | undefined>();
  for (const folder of ['drizzle', 'drizzle/meta']) {
    if (!existsSync(join(app, folder))) continue;
    for (const name of readdirSync(join(app, folder))) {
      const path = `${folder}/${name}`;
      // The journal is rewritten in place: keep its text to put back.
      files.set(path, name === '_journal.json' ? readFileSync(join(app, path), 'utf8') : undefined);
    }
  }
  return files;
}

/**
 * The journal ends as it ended before drizzle-kit rewrote it, with or without a final newline
 * (a formatter adds one; drizzle-kit may not): `proceed destroy` can then give the app back its
 * journal byte for byte.
 */
function keepFinalNewline(app: string, before: string | undefined): void {
  const path = join(app, 'drizzle/meta/_journal.json');
  if (before === undefined || !existsSync(path)) return;
  const after = readFileSync(path, 'utf8');
  const wanted = before.endsWith('\n') ? `${after.replace(/\n+$/, '')}\n` : after.replace(/\n+$/, '');
  if (wanted !== after) writeFileSync(path, wanted);
}

/** `npm run db:generate -- --name <collection>`, its output kept for a failure's message. */
function generateMigration(app: string, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', 'db:generate', '--', '--name', name], {
      cwd: app,
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: process.platform === 'win32',
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk));
    // drizzle-kit asks questions only about renames, which a new table never is; never wait forever.
    const timer = setTimeout(() => child.kill(), 120_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new CliError(`npm run db:generate could not start: ${error.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else
        reject(
          new CliError(
            `npm run db:generate failed (exit ${code}); nothing was changed. Its output:\n${output.trim()}`,
          ),
        );
    });
  });
}

/**
 * Writes the plan: the schema, the migration drizzle-kit makes of it, then the rest. Returns the
 * migration's files. Any failure puts back every file written and removes every file made.
 */
export async function writeResource(
  app: string,
  plan: Plan,
  migrate: (app: string, name: string) => Promise<void> = generateMigration,
): Promise<string[]> {
  const before = migrationFiles(app);
  const written: string[] = [];
  const undo = () => {
    for (const path of migrationFiles(app).keys())
      if (!before.has(path)) rmSync(join(app, path), { force: true });
    for (const [path, text] of before) if (text !== undefined) writeFileSync(join(app, path), text);
    for (const { path, before: text } of plan.changed)
      if (written.includes(path)) writeFileSync(join(app, path), text);
    for (const { path } of plan.created) if (written.includes(path)) rmSync(join(app, path), { force: true });
  };
  try {
    const [schema, ...others] = plan.changed;
    if (schema === undefined) throw new Error('A plan changes src/schema.ts first');
    writeFileSync(join(app, schema.path), schema.after);
    written.push(schema.path);
    await migrate(app, plan.names.collection);
    keepFinalNewline(app, before.get('drizzle/meta/_journal.json'));
    const migration = [...migrationFiles(app).keys()].filter((path) => !before.has(path));
    if (!migration.some((path) => path.endsWith('.sql')))
      throw new CliError('npm run db:generate wrote no migration; nothing was changed');
    for (const { path, text } of plan.created) {
      writeFileSync(join(app, path), text, { flag: 'wx' });
      written.push(path);
    }
    for (const { path, after } of others) {
      writeFileSync(join(app, path), after);
      written.push(path);
    }
    return migration.sort();
  } catch (error) {
    undo();
    throw error;
  }
}

/** What was written, and how the typed client calls the new procedures. */
export function summary(plan: Plan, migration: readonly string[]): string {
  const { collection, resource, plural } = plan.names;
  const sql = migration.filter((path) => path.endsWith('.sql'));
  const procedures = ['list', 'get', 'create', 'update', 'delete']
    .map((verb) => `${verb}${verb === 'list' ? plural : resource}`)
    .join(', ');
  const rows: [string, string][] = [
    ['src/schema.ts', `the ${plan.names.table} table`],
    [sql.join(', '), 'its migration, applied when the app next starts'],
    [`src/${collection}.ts`, `${resource} and ${procedures}`],
    [
      'src/app.ts',
      `${collection}Procedures added to api${plan.mcpTools ? `, its procedures to the MCP tools` : ''}`,
    ],
    [`test/${collection}.test.ts`, 'the CRUD through the typed client'],
  ];
  const width = Math.max(...rows.map(([path]) => path.length)) + 2;
  return `Added ${collection}:
${rows.map(([path, what]) => `  ${path.padEnd(width)}${what}`).join('\n')}

With the typed client (proceedjs/client), as in test/client.ts:
  const client = createClient<typeof api>({ baseUrl, routes: routeManifest(api), token });
  const created = await client.${collection}.create${resource}(${sampleObject(plan.fields, 0)});
  const page = await client.${collection}.list${plural}({ limit: 20 }); // then { cursor: page.nextCursor }

Next: npm test
`;
}

/** What `proceed generate resource` would write, for `--dry-run`. */
export function dryRunSummary(plan: Plan): string {
  const rows: [string, string][] = [
    ...plan.changed.map(({ path }): [string, string] => [path, 'changed']),
    [`drizzle/NNNN_${plan.names.collection}.sql`, "the migration, by the app's drizzle-kit"],
    ...plan.created.map(({ path }): [string, string] => [path, 'created']),
  ];
  const width = Math.max(...rows.map(([path]) => path.length)) + 2;
  const shown = plan.created.find(({ path }) => path.startsWith('src/'));
  return `Would add ${plan.names.collection}:
${rows.map(([path, what]) => `  ${path.padEnd(width)}${what}`).join('\n')}

${shown?.path}:
${shown?.text}
Nothing was written (--dry-run).
`;
}

function parse<O extends NonNullable<ParseArgsConfig['options']>>(
  args: readonly string[],
  options: O,
  usage: string,
) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true, strict: true as const });
  } catch (error) {
    throw new UsageError((error as Error).message.split('. ')[0] ?? 'Bad arguments', usage);
  }
}

/** `proceed generate …`: exit 0, or 2 for what the user must change (nothing written). */
export async function generateCommand(args: readonly string[], app = process.cwd()): Promise<number> {
  const parsed = parse(args, commands.generate.options, usage);
  const [kind, collection, ...fieldWords] = parsed.positionals;
  if (kind !== 'resource')
    throw new UsageError(
      kind === undefined
        ? 'Say what to generate: proceed generate resource <name> <field:type>...'
        : `Unknown generator "${kind}": proceed generate resource`,
      usage,
    );
  if (collection === undefined) throw new UsageError('No collection name given (bookmarks)', usage);
  let plan: Plan;
  try {
    plan = planResource(app, collection, fieldWords, parsed.values.singular as string | undefined);
  } catch (error) {
    if (error instanceof GenerateError) throw new CliError(error.message, 2);
    throw error;
  }
  if (parsed.values['dry-run'] === true) {
    process.stdout.write(dryRunSummary(plan));
    return 0;
  }
  const migration = await writeResource(app, plan);
  process.stdout.write(summary(plan, migration));
  return 0;
}

/** `proceed destroy resource <name>`: exit 0, or 2 for what the user must change (nothing changed). */
export async function destroyCommand(
  args: readonly string[],
  app = process.cwd(),
  migrate: (app: string, name: string) => Promise<void> = generateMigration,
): Promise<number> {
  const destroyUsage = commands.destroy.usage;
  const parsed = parse(args, commands.destroy.options, destroyUsage);
  const [kind, collection, ...rest] = parsed.positionals;
  if (kind !== 'resource')
    throw new UsageError('Say what to take back: proceed destroy resource <name>', destroyUsage);
  if (collection === undefined) throw new UsageError('No collection name given (bookmarks)', destroyUsage);
  if (rest.length > 0) throw new UsageError(`Unexpected argument "${rest[0]}"`, destroyUsage);
  let plan: ReturnType<typeof planDestroy>;
  try {
    plan = planDestroy(app, collection);
  } catch (error) {
    if (error instanceof GenerateError) throw new CliError(error.message, 2);
    throw error;
  }
  const kept = keptBecause(app, plan, await wasApplied(app, plan.migration.when));
  const dryRun = parsed.values['dry-run'] === true;
  if (!dryRun) await writeDestroy(app, plan, kept, migrate);
  process.stdout.write(destroySummary(plan, kept, dryRun));
  return 0;
}
