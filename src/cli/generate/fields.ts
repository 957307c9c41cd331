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
    input: 'z.iso.date()',
    samples: ["'2025-01-31'", "'2025-02-28'"],
  },
  datetime: {
    builder: 'timestamp',
    columnOptions: '{ withTimezone: true }',
    output: 'z.date()',
    // The body is JSON: an ISO 8601 string with its offset, a Date once validated.
    input: 'z.iso.datetime({ offset: true }).transform((text) => new Date(text))',
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

export interface Field {
  /** The property, camelCase: `dueAt`. */
  name: string;
  /** The column, snake_case: `due_at`. */
  column: string;
  type: FieldTypeName;
  /** `name:type?`: the column is nullable, and create may leave it out. */
  optional: boolean;
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

/**
 * The names a collection gives the table, the resource and the procedures.
 *
 * @example
 * resourceNames('bookmarks') // { collection: 'bookmarks', table: 'bookmarks', resource: 'Bookmark', plural: 'Bookmarks' }
 */
export function resourceNames(collection: string, singular?: string): ResourceNames {
  if (!identifier.test(collection))
    throw new GenerateError(
      `"${collection}" is not a collection name: use a plural in camelCase, letters and digits from a lower-case letter (bookmarks, readingLists)`,
    );
  if (takenNames.has(collection))
    throw new GenerateError(`"${collection}" is taken by the app itself: choose another collection name`);
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

/**
 * Parses `name:type` words (`notes:text?` for an optional field).
 *
 * @example
 * parseFields(['url:string', 'notes:text?'])
 * // [{ name: 'url', column: 'url', type: 'string', optional: false }, { name: 'notes', …, optional: true }]
 */
export function parseFields(words: readonly string[]): Field[] {
  if (words.length === 0)
    throw new GenerateError('No fields given: list them as name:type (url:string title:string)');
  const fields: Field[] = [];
  for (const word of words) {
    const match = /^([^:]*):([a-z]*)(\??)$/.exec(word);
    if (match === null)
      throw new GenerateError(`"${word}" is not a field: write name:type, or name:type? for an optional one`);
    const [, name = '', type = '', mark] = match;
    if (!identifier.test(name))
      throw new GenerateError(
        `"${name}" is not a field name: use camelCase, letters and digits from a lower-case letter`,
      );
    if ((builtInColumns as readonly string[]).includes(name))
      throw new GenerateError(
        `"${name}" is a column every resource has (${builtInColumns.join(', ')}): choose another name`,
      );
    if (fields.some((field) => field.name === name))
      throw new GenerateError(`The field "${name}" is given twice`);
    if (!Object.hasOwn(fieldTypes, type))
      throw new GenerateError(
        `"${type}" is not a field type (in ${word}): use ${Object.keys(fieldTypes).join(', ')}`,
      );
    fields.push({ name, column: snakeCase(name), type: type as FieldTypeName, optional: mark === '?' });
  }
  return fields;
}
