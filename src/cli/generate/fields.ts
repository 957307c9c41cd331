/**
 * `proceed generate resource`'s words: the collection's names and the fields with their types.
 * Pure functions over the command line; each refusal is a {@link GenerateError} saying why.
 */

/** A line the user can act on; the command prints it and exits 2, having written nothing. */
export class GenerateError extends Error {
  override readonly name = 'GenerateError';
}

/** What one field type becomes: a column, what is read and what is written. */
export interface FieldType {
  /** The drizzle-orm/pg-core builder. */
  builder: 'varchar' | 'text' | 'integer' | 'doublePrecision' | 'boolean' | 'date' | 'timestamp' | 'uuid';
  /** The builder's options after the column name, if any. */
  columnOptions?: string;
  /** The Zod schema of the field in the views (what is sent back). */
  output: string;
  /** The Zod schema of the field in create and update bodies. */
  input: string;
  /** Where `input` names a schema of the module's own: its declaration, written once before the fields. */
  declaration?: string;
  /**
   * Two values the generated test writes, as TypeScript; the typed client reads each back as
   * written (a datetime is sent and read as an ISO string).
   */
  samples: readonly [string, string];
}

export const fieldTypes = {
  string: {
    builder: 'varchar',
    columnOptions: '{ length: 255 }',
    output: 'z.string()',
    input: 'z.string().trim().min(1).max(255)',
    samples: ["'First'", "'Second'"],
  },
  text: {
    builder: 'text',
    output: 'z.string()',
    input: 'z.string().max(10_000)',
    samples: ["'Some text'", "'Other text'"],
  },
  integer: {
    builder: 'integer',
    output: 'z.number()',
    input: 'z.int32()',
    samples: ['42', '-7'],
  },
  number: {
    builder: 'doublePrecision',
    output: 'z.number()',
    input: 'z.number()',
    samples: ['1.5', '-0.25'],
  },
  boolean: {
    builder: 'boolean',
    output: 'z.boolean()',
    input: 'z.boolean()',
    samples: ['true', 'false'],
  },
  date: {
    builder: 'date',
    columnOptions: "{ mode: 'string' }",
    output: 'z.iso.date()',
    input: 'day',
    // PostgreSQL has no year 0000: refused with a 400, before the database would fail with a 500.
    declaration: `/** A day as PostgreSQL stores it: it has no year 0000. */
const day = z.iso.date().refine((text) => text >= '0001', 'Expected a date from 0001-01-01 on');`,
    samples: ["'2025-01-31'", "'2025-02-28'"],
  },
  datetime: {
    builder: 'timestamp',
    columnOptions: '{ withTimezone: true }',
    output: 'z.date()',
    input: 'instant',
    // The body is JSON: an ISO 8601 string with its offset, a Date once validated. Refused with a
    // 400: a year PostgreSQL does not read (0000, or past 9999 once in UTC), which would be its 500,
    // and one before 100, which drizzle reads back from the database's text as 19xx or 20xx.
    declaration: `/** An ISO 8601 time with its offset, a Date once read: the years 0100 to 9999 in UTC, read back as written. */
const instant = z.iso
  .datetime({ offset: true })
  .transform((text) => new Date(text))
  .refine((at) => at.getUTCFullYear() >= 100 && at.getUTCFullYear() <= 9999, 'Expected a time from 0100 to 9999 in UTC');`,
    samples: ["'2025-01-31T09:30:00.000Z'", "'2025-02-28T18:00:00.000Z'"],
  },
  uuid: {
    builder: 'uuid',
    output: 'z.uuid()',
    input: 'z.uuid()',
    samples: ["'0b0f6a4e-3c2d-4f1a-9b8c-7d6e5f4a3b2c'", "'5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d'"],
  },
} as const satisfies Record<string, FieldType>;

export type FieldTypeName = keyof typeof fieldTypes;

/** The types a list may hold (`tags:string[]`): those whose column arrays read back as written. */
export const listableTypes: readonly FieldTypeName[] = [
  'string',
  'text',
  'integer',
  'number',
  'boolean',
  'uuid',
];

/** Which view first shows a field: everyone's (default), its owner's (`@owner`), or admins' (`@admin`). */
export type FieldLevel = 'public' | 'owner' | 'admin';

export interface Field {
  /** The property, camelCase: `dueAt` (`authorId` for `author:ref:users`). */
  name: string;
  /** The column, snake_case: `due_at`. */
  column: string;
  type: FieldTypeName;
  /** `name:type?`: the column is nullable, and create may leave it out. */
  optional: boolean;
  /** `name:type[]`: a list of values, a PostgreSQL array column. */
  list: boolean;
  /** `name:enum:a,b,c`: the values it may take (type `string`). */
  values?: readonly string[];
  /** `author:ref:users`: the collection whose id it holds (type `uuid`), with a foreign key. */
  references?: string;
  level: FieldLevel;
}

export interface ResourceNames {
  /** The collection, as given: `bookmarks`; also the table's export in src/schema.ts. */
  collection: string;
  /** The table: `bookmarks` (`reading_lists` for `readingLists`). */
  table: string;
  /** The resource, singular and capitalised: `Bookmark`. */
  resource: string;
  /** The collection capitalised, as in `listBookmarks`. */
  plural: string;
}

/** Columns every generated table has; a field cannot take their names. */
export const builtInColumns = ['id', 'ownerId', 'createdAt', 'updatedAt'] as const;

const identifier = /^[a-z][a-zA-Z0-9]*$/;

/** Names the app or the template already gives a meaning to, in src/ or the API. */
const takenNames = new Set([
  'auth',
  'users',
  'schema',
  'app',
  'context',
  'db',
  'seed',
  'api',
  'fields',
  'procedures',
]);

/** Words a generated variable cannot be named: the singular names one (`const bookmark = …`). */
const reservedWords = new Set(
  'arguments await break case catch class const continue debugger default delete do else enum eval export extends false finally for function if implements import in instanceof interface let new null package private protected public return static super switch this throw true try typeof var void while with yield'.split(
    ' ',
  ),
);

export const snakeCase = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
const capitalize = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

/**
 * The singular of an English plural, for the common endings: `categories` → `category`,
 * `boxes` → `box`, `bookmarks` → `bookmark`. Undefined when the name does not end in `s`.
 *
 * @example
 * singularOf('addresses') // 'address'
 */
export function singularOf(plural: string): string | undefined {
  if (/[^aeiou]ies$/.test(plural)) return `${plural.slice(0, -3)}y`;
  if (/(ss|x|z|ch|sh)es$/.test(plural)) return plural.slice(0, -2);
  if (/[^s]s$/.test(plural)) return plural.slice(0, -1);
  return undefined;
}

/** Refuses a name no collection of the app's can have. */
export function checkCollectionName(collection: string): void {
  if (!identifier.test(collection))
    throw new GenerateError(
      `"${collection}" is not a collection name: use a plural in camelCase, letters and digits from a lower-case letter (bookmarks, readingLists)`,
    );
  if (takenNames.has(collection))
    throw new GenerateError(`"${collection}" is taken by the app itself: choose another collection name`);
}

/**
 * The names a collection gives the table, the resource and the procedures.
 *
 * @example
 * resourceNames('bookmarks') // { collection: 'bookmarks', table: 'bookmarks', resource: 'Bookmark', plural: 'Bookmarks' }
 */
export function resourceNames(collection: string, singular?: string): ResourceNames {
  checkCollectionName(collection);
  const one = singular ?? singularOf(collection);
  if (one === undefined)
    throw new GenerateError(
      `"${collection}" does not end in s: give the plural (bookmarks), or the singular with --singular`,
    );
  if (!identifier.test(one) && !/^[A-Z][a-zA-Z0-9]*$/.test(one))
    throw new GenerateError(`"${one}" is not a singular name: use letters and digits from a letter`);
  if (reservedWords.has(one.toLowerCase()) || reservedWords.has(collection))
    throw new GenerateError(
      `"${one}" is a JavaScript word the generated code cannot name a variable: choose another name`,
    );
  const resource = capitalize(one);
  if (resource === capitalize(collection))
    throw new GenerateError(
      `The singular of "${collection}" must differ from it (getX and listX would be one name)`,
    );
  return { collection, table: snakeCase(collection), resource, plural: capitalize(collection) };
}

const enumValue = /^[a-z][a-z0-9_-]*$/;

/**
 * Parses the field words: `name:type`, then `?` for an optional field, `[]` for a list of them,
 * `@owner` or `@admin` for a field only its owner (and admins) or only admins see; an enum is
 * `status:enum:draft,published`, a reference to another collection `author:ref:users` (the field
 * is `authorId`).
 *
 * @example
 * parseFields(['url:string', 'notes:text?@owner', 'tags:string[]', 'status:enum:draft,published'])
 */
export function parseFields(words: readonly string[], collections: readonly string[] = ['users']): Field[] {
  if (words.length === 0)
    throw new GenerateError('No fields given: list them as name:type (url:string title:string)');
  const fields: Field[] = [];
  for (const word of words) {
    const match = /^([^:@]*):(enum:[^?@[\]]*|ref:[^?@[\]]*|[a-z]*)(\[\])?(\?)?(?:@(owner|admin))?$/.exec(
      word,
    );
    if (match === null)
      throw new GenerateError(
        `"${word}" is not a field: write name:type, then ? for an optional one, [] for a list, @owner or @admin for who sees it`,
      );
    const [, given = '', kind = '', list, mark, level] = match;
    if (!identifier.test(given))
      throw new GenerateError(
        `"${given}" is not a field name: use camelCase, letters and digits from a lower-case letter`,
      );
    let type: FieldTypeName;
    let name = given;
    const extra: Pick<Field, 'values' | 'references'> = {};
    if (kind.startsWith('enum:')) {
      const values = kind.slice('enum:'.length).split(',');
      if (values.length < 2 || values.some((value) => !enumValue.test(value)))
        throw new GenerateError(
          `"${word}": an enum lists two or more values after enum:, each lower-case letters, digits, - or _ (status:enum:draft,published)`,
        );
      if (new Set(values).size !== values.length) throw new GenerateError(`"${word}" lists a value twice`);
      type = 'string';
      extra.values = values;
    } else if (kind.startsWith('ref:')) {
      const target = kind.slice('ref:'.length);
      if (!collections.includes(target))
        throw new GenerateError(
          `"${word}" refers to "${target}": a reference names ${collections.join(', ')}; one to another collection is not generated (its test would need a record of it to refer to), so add its column by hand (docs/cli.md)`,
        );
      if (list !== undefined) throw new GenerateError(`"${word}": a reference is one id, not a list`);
      type = 'uuid';
      name = `${given}Id`;
      extra.references = target;
    } else {
      if (!Object.hasOwn(fieldTypes, kind))
        throw new GenerateError(
          `"${kind}" is not a field type (in ${word}): use ${Object.keys(fieldTypes).join(', ')}, enum:a,b or ref:<collection>`,
        );
      type = kind as FieldTypeName;
      if (list !== undefined && !listableTypes.includes(type))
        throw new GenerateError(`"${word}": a list holds ${listableTypes.join(', ')}, not ${type}`);
    }
    if ((builtInColumns as readonly string[]).includes(name))
      throw new GenerateError(
        `"${name}" is a column every resource has (${builtInColumns.join(', ')}): choose another name`,
      );
    if (fields.some((field) => field.name === name))
      throw new GenerateError(`The field "${name}" is given twice`);
    fields.push({
      name,
      column: snakeCase(name),
      type,
      optional: mark === '?',
      list: list !== undefined,
      level: (level as FieldLevel | undefined) ?? 'public',
      ...extra,
    });
  }
  return fields;
}
