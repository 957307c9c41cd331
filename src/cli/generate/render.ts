/**
 * The text `proceed generate resource` writes: the table added to src/schema.ts, the resource
 * module and the collection added to src/app.ts (its test: test-module.ts). Pure functions of the names, the
 * fields and the app's current files; nothing here touches the disk.
 */
import { type Field, type FieldType, fieldTypes, GenerateError, type ResourceNames } from './fields.js';

const pgCore = /import \{([^}]*)\} from 'drizzle-orm\/pg-core';/;
const apiList = /export const api = \[([^\]]*)\] as const;/;

/**
 * `open a, b, c close` on one line when it fits in 100 characters, else one item a line,
 * indented by `indent` spaces under the line that opens it.
 */
export function listed(open: string, items: readonly string[], close: string, indent = 0): string {
  const line = `${open}${items.join(', ')}${close}`;
  if (indent + line.length <= 100) return line;
  const pad = ' '.repeat(indent + 2);
  return `${open.trimEnd()}\n${items.map((item) => `${pad}${item},`).join('\n')}\n${' '.repeat(indent)}${close.trimStart()}`;
}

/** `a bookmark`, `an event`. */
/** Words that begin with a vowel's sound: "an hour", but "a unit", "a user", "a euro". */
const vowelSound = /^(?:a|e(?!u)|i|o(?!ne|nce)|u(?!ni|s[aeiu]|ti|r[aeiou]|bi|u)|hou?r|hon(?:est|ou?r)|heir)/i;
export const a = (label: string) => `${vowelSound.test(label) ? 'an' : 'a'} ${label}`;

const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
export const words = (name: string) => name.replace(/[A-Z]/g, (letter) => ` ${letter.toLowerCase()}`);

const ordinal = ['first', 'second'] as const;

/** One value of a field's type, as TypeScript: something a reader takes for real data. */
function scalarSample(field: Field, which: 0 | 1): string {
  // `as const`: in an object made before the call, the value keeps its literal type.
  if (field.values !== undefined) return `'${field.values[which]}' as const`;
  // The test's users: the first write refers to its author, the second to another user.
  if (field.references !== undefined) return which === 0 ? 'ada.id' : 'bob.id';
  if (field.type !== 'string' && field.type !== 'text') return fieldTypes[field.type].samples[which];
  const name = words(field.name).trim();
  if (/\b(url|link|website|homepage)\b/.test(name)) return `'https://example.com/${ordinal[which]}'`;
  if (/\bemail\b/.test(name)) return `'${ordinal[which]}@example.com'`;
  const text = `${ordinal[which]} ${name}`;
  return `'${text.charAt(0).toUpperCase()}${text.slice(1)}'`;
}

/** A field's first or second test value, as TypeScript. */
export function sample(field: Field, which: 0 | 1): string {
  if (!field.list) return scalarSample(field, which);
  return which === 0
    ? `[${scalarSample(field, 0)}]`
    : `[${scalarSample(field, 1)}, ${scalarSample(field, 0)}]`;
}

const column = (field: Field) => {
  const type = fieldTypes[field.type];
  const builder = field.values === undefined ? type.builder : 'text';
  const options =
    field.values !== undefined
      ? `, { enum: [${field.values.map((value) => `'${value}'`).join(', ')}] }`
      : 'columnOptions' in type
        ? `, ${type.columnOptions}`
        : '';
  const reference =
    field.references === undefined
      ? ''
      : `.references(() => ${field.references}.id, { onDelete: '${field.optional ? 'set null' : 'cascade'}' })`;
  return `${builder}('${field.column}'${options})${field.list ? '.array()' : ''}${field.optional ? '' : '.notNull()'}${reference}`;
};

/** The Zod schema of a field in the views. */
function outputSchema(field: Field): string {
  const one =
    field.values === undefined
      ? fieldTypes[field.type].output
      : `z.enum([${field.values.map((value) => `'${value}'`).join(', ')}])`;
  // As long as a create or an update may make it: the document bounds every array.
  return `${field.list ? `z.array(${one}).max(100)` : one}${field.optional ? '.nullable()' : ''}`;
}

/** The schemas of the module's own that the fields' inputs name, each once, with a blank line after. */
function declarations(fields: readonly Field[]): string {
  const used = new Set(fields.map((field): FieldType => fieldTypes[field.type]));
  return [...used]
    .flatMap((type) => (type.declaration === undefined ? [] : [`${type.declaration}\n\n`]))
    .join('');
}

/** The Zod schema of a field in create and update bodies. */
function inputSchema(field: Field): string {
  const one =
    field.values === undefined
      ? fieldTypes[field.type].input
      : `z.enum([${field.values.map((value) => `'${value}'`).join(', ')}])`;
  return `${field.list ? `z.array(${one}).max(100)` : one}${field.optional ? '.nullable().optional()' : ''}`;
}

/**
 * src/schema.ts with the collection's table appended, and the builders it uses imported.
 * Refuses a schema that is not the template's shape, or that declares the names already.
 */
export function addTable(schema: string, names: ResourceNames, fields: readonly Field[]): string {
  const imported = pgCore.exec(schema);
  if (imported === null || !/^export const users = pgTable\(/m.test(schema))
    throw new GenerateError(
      "src/schema.ts is not the template's: it needs import { … } from 'drizzle-orm/pg-core' and export const users = pgTable(…)",
    );
  const taken = new RegExp(
    `\\b(?:const|let|var|function|class|type|interface)\\s+(${names.collection}|${names.resource})\\b|pgTable\\(\\s*'${names.table}'`,
  ).exec(schema);
  if (taken !== null)
    throw new GenerateError(`src/schema.ts already declares ${taken[1] ?? `the table ${names.table}`}`);
  const builders = new Set(
    (imported[1] ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== ''),
  );
  for (const builder of [
    'index',
    'pgTable',
    'timestamp',
    'uuid',
    ...fields.map((f) => (f.values === undefined ? fieldTypes[f.type].builder : 'text')),
  ])
    builders.add(builder);
  const indexes = [
    `index('${names.table}_owner_id_idx').on(table.ownerId)`,
    ...fields
      .filter((field) => field.references !== undefined)
      .map((field) => `index('${names.table}_${field.column}_idx').on(table.${field.name})`),
  ];
  const importLine = listed('import { ', [...builders].sort(), " } from 'drizzle-orm/pg-core';");
  const table = `
export const ${names.collection} = pgTable(
  '${names.table}',
  {
    // UUIDv7 (uuidv7() from proceedjs/auth): the list's cursor is the id, newest first.
    id: uuid('id').primaryKey(),
    ownerId: uuid('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
${fields.map((field) => `    ${field.name}: ${column(field)},`).join('\n')}
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [${indexes.length === 1 ? indexes[0] : `\n    ${indexes.join(',\n    ')},\n  `}],
);

export type ${names.resource} = typeof ${names.collection}.$inferSelect;
`;
  return `${schema.replace(pgCore, () => importLine).trimEnd()}\n${table}`;
}

/** `register(mcpPlugin, { collections: [ … ] … })` as the template writes it: a list on one line. */
const mcpCollections = /\bregister\(\s*mcpPlugin\s*,\s*\{[^}]*?\bcollections:\s*\[([^\]\n]*)\]/;
const quotedName = /^(['"])[\w-]+\1$/;

/**
 * The collections list of src/app.ts's `mcpPlugin`, where it is one the generator can change and
 * give back as it was: names in quotes on one line, nothing else (no comment, no spread).
 */
function mcpList(app: string): { text: string; at: number } | undefined {
  const found = mcpCollections.exec(app);
  const text = found?.[1];
  if (found === null || text === undefined) return undefined;
  const items = text.split(',').map((item) => item.trim());
  if (!items.every((item, index) => quotedName.test(item) || (item === '' && index === items.length - 1)))
    return undefined;
  return { text, at: found.index + found[0].length - 1 - text.length };
}

/** Whether src/app.ts lists the collections of its MCP tools as the template does. */
export const listsMcpTools = (app: string): boolean => mcpList(app) !== undefined;

/**
 * src/app.ts with the collection among mcpPlugin's tools (or without it), where it lists them as
 * the template does: a generated resource is served to agents as its REST routes are, with the
 * same guards and views. Only the entry is written or taken out, so that destroy gives back the
 * text generate found.
 */
export function withMcpTools(app: string, collection: string, listed: boolean): string {
  const list = mcpList(app);
  if (list === undefined) return app;
  const { text, at } = list;
  const quote = text.trim().startsWith('"') ? '"' : "'";
  const entry = `${quote}${collection}${quote}`;
  const name = `(?:'${collection}'|"${collection}")`;
  const present = new RegExp(name).exec(text);
  let changed = text;
  if (listed && present === null) {
    const last = [...text.matchAll(/(['"])[\w-]+\1/g)].at(-1);
    changed =
      last === undefined
        ? entry
        : `${text.slice(0, last.index + last[0].length)}, ${entry}${text.slice(last.index + last[0].length)}`;
  } else if (!listed && present !== null) {
    changed = text
      .replace(new RegExp(`,\\s*${name}`), '')
      .replace(new RegExp(`^(\\s*)${name}\\s*,?\\s*`), '$1');
  }
  return `${app.slice(0, at)}${changed}${app.slice(at + text.length)}`;
}

/** src/app.ts with the collection's procedures imported and added to `api` (and to the MCP tools). */
export function addToApi(app: string, names: ResourceNames): string {
  const list = apiList.exec(app);
  if (list === null)
    throw new GenerateError("src/app.ts is not the template's: it needs export const api = [ … ] as const;");
  const exported = `${names.collection}Procedures`;
  if (new RegExp(`\\b${exported}\\b|'\\./${names.collection}\\.js'`).test(app))
    throw new GenerateError(`src/app.ts already imports ${exported} or ./${names.collection}.js`);
  const members = (list[1] ?? '')
    .split(',')
    .map((member) => member.trim())
    .filter((member) => member !== '');
  const withApi = app.replace(apiList, () =>
    listed('export const api = [', [...members, exported], '] as const;'),
  );
  // After the last import: the end of a line that closes an import statement.
  const imports = [...withApi.matchAll(/^(?:import [^\n]*|\}) from '[^']+';$/gm)];
  const last = imports.at(-1);
  if (last === undefined) throw new GenerateError('src/app.ts has no imports to add one after');
  const at = last.index + last[0].length;
  return withMcpTools(
    `${withApi.slice(0, at)}\nimport { ${exported} } from './${names.collection}.js';${withApi.slice(at)}`,
    names.collection,
    true,
  );
}

export const lower = (name: string) => name.charAt(0).toLowerCase() + name.slice(1);

/** src/<collection>.ts: the resource, its views and the five procedures. */
export function resourceModule(names: ResourceNames, fields: readonly Field[]): string {
  const { collection, resource, plural } = names;
  const one = lower(resource);
  const label = words(one).trim();
  const many = words(lower(plural)).trim();
  const at = (level: Field['level']) =>
    fields.filter((field) => field.level === level).map((field) => `${field.name}: ${outputSchema(field)}`);
  const input = (field: Field) => `  ${field.name}: ${inputSchema(field)},`;
  const references = fields.filter((field) => field.references !== undefined);
  const checked = (from: string) =>
    references.length === 0
      ? ''
      : `\n      await checkUsers(ctx, { ${references.map((field) => `${field.name}: ${from}.${field.name}`).join(', ')} });`;
  const checkUsers =
    references.length === 0
      ? ''
      : `
/** Each user the input names exists: a 400 naming the field otherwise, never a failed write. */
async function checkUsers(ctx: AppContext, named: Record<string, string | null | undefined>) {
  for (const [path, userId] of Object.entries(named)) {
    if (userId === undefined || userId === null) continue;
    const [found] = await ctx.db.select({ id: users.id }).from(users).where(eq(users.id, userId));
    if (found === undefined) throw new ValidationError([{ path, message: 'No user with this id' }]);
  }
}
`;
  return `/**
 * /api/${collection}: anyone reads them, a signed-in user creates them, and only ${a(label)}'s owner
 * or an admin changes or deletes it. Written by \`proceed generate resource\`: yours to change.
 */
import { asc, desc, eq, gt, lt } from 'drizzle-orm';
import { ${references.length === 0 ? 'NotFoundError, procedures' : 'NotFoundError, procedures, ValidationError'} } from 'proceedjs';
import { authenticated, uuidv7 } from 'proceedjs/auth';
import { cursorInput, cursorPage, keysetClauses, paginateKeyset } from 'proceedjs/pagination';
import { owned, resource } from 'proceedjs/resource';
import { z } from 'zod';
import { type AppContext, p } from './context.js';
import { ${references.length === 0 ? collection : `${collection}, users`} } from './schema.js';

/**
 * Each ${label} is shown per record (\`${resource}.perRecord\`): everyone sees the public fields,
 * its owner also the owner's and when it was made and changed, an admin every field and whose it is.
 */
export const ${resource} = resource(
  '${resource}',
  {
    ${listed('public: { ', ['id: z.uuid()', ...at('public')], ' },', 4)}
    ${listed('owner: { ', [...at('owner'), 'createdAt: z.date()', 'updatedAt: z.date()'], ' },', 4)}
    ${listed('admin: { ', ['ownerId: z.uuid()', ...at('admin')], ' },', 4)}
  },
  {
    // Who owns ${a(label)}: the rule of the owner view and of who may change it.
    owner: 'ownerId',
    admin: (ctx: AppContext) => ctx.user?.role === 'admin',
  },
);

${declarations(fields)}/** What a client writes; optional fields may be left out, or null. */
const fields = {
${fields.map(input).join('\n')}
};
const id = z.object({ id: z.uuid() });

/** The one row a query found; a 404 when there is none (one deleted meanwhile, too). */
function found<Row>([row]: Row[]): Row {
  if (row === undefined) throw new NotFoundError('No ${label} with this id');
  return row;
}
${checkUsers}
const find${plural} = (ctx: AppContext, ${one}Id: string) =>
  ctx.db.select().from(${collection}).where(eq(${collection}.id, ${one}Id));

/**
 * Loads the ${label} the path names, once, and lets only its owner or an admin on (the resource's
 * owner and admin rules); the handler finds it on \`ctx.${one}\`.
 */
const own${resource} = owned(
  ${resource},
  async (ctx: AppContext, ${one}Id) => (await find${plural}(ctx, ${one}Id))[0],
);

/** The listing's bounds, the same for its input and its answer: the document says both. */
const listing = { cursor: z.uuid(), maxLimit: 100 };

export const ${collection}Procedures = procedures('${collection}', {
  // GET /api/${collection}?limit=20&cursor=…: newest first; follow nextCursor for older ones.
  list${plural}: p()
    .meta({ summary: '${capital(many)}, newest first, a page at a time' })
    .input(cursorInput(listing))
    .output(cursorPage(${resource}.perRecord, listing))
    .query(({ input, ctx }) =>
      paginateKeyset(
        input,
        (query) => {
          const keyset = keysetClauses({ lt, gt, asc, desc }, ${collection}.id, query);
          return ctx.db
            .select()
            .from(${collection})
            .where(keyset.where)
            .orderBy(keyset.orderBy)
            .limit(keyset.limit);
        },
        { key: 'id' },
      ),
    ),

  // GET /api/${collection}/:id
  get${resource}: p()
    .meta({ summary: '${capital(a(label))} by its id' })
    .input(id)
    .output(${resource}.perRecord)
    .query(async ({ input, ctx }) => found(await find${plural}(ctx, input.id))),

  // POST /api/${collection}: 201, with Location: /api/${collection}/{id}
  create${resource}: p()
    .meta({ summary: 'Create ${a(label)} (signed in)' })
    .guard(authenticated)
    .input(z.object(fields))
    .output(${resource}.perRecord)
    .mutation(async ({ input, ctx }) => {${checked('input')}
      return found(
        await ctx.db
          .insert(${collection})
          .values({ id: uuidv7(), ownerId: ctx.user.id, ...input })
          .returning(),
      );
    }),

  // PUT /api/${collection}/:id with the fields to change as the body
  update${resource}: p()
    .meta({ summary: 'Change fields of ${a(label)} (its owner or an admin)' })
    .guard(authenticated)
    .input(
      z.object({
        id: z.uuid(),
        // Nothing to change would only move updatedAt: an empty body is a 400.
        data: z
          .object(fields)
          .partial()
          .refine((data) => Object.keys(data).length > 0, 'Send at least one field')
          .meta({ minProperties: 1 }),
      }),
    )
    .use(own${resource})
    .output(${resource}.perRecord)
    .mutation(async ({ input, ctx }) => {${checked('input.data')}
      return found(
        await ctx.db
          .update(${collection})
          .set({ ...input.data, updatedAt: new Date() })
          .where(eq(${collection}.id, ctx.${one}.id))
          .returning(),
      );
    }),

  // DELETE /api/${collection}/:id: { success: true }
  delete${resource}: p()
    .meta({ summary: 'Delete ${a(label)} (its owner or an admin)' })
    .guard(authenticated)
    .input(id)
    .use(own${resource})
    .mutation(async ({ ctx }) => {
      await ctx.db.delete(${collection}).where(eq(${collection}.id, ctx.${one}.id));
    }),
});
`;
}
