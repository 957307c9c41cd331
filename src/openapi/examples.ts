/**
 * Example values for the document: what Swagger UI pre-fills, what Postman puts in a request,
 * what Dredd sends. A schema's own `examples` (Zod's `.meta({ examples })`), `default`, `const`
 * or first `enum` value wins; otherwise a real-looking value is made from the format and the
 * property's name (a UUIDv7, an email, a title). Every value made keeps to the schema's bounds
 * and pattern; where that cannot be done, there is no example rather than a wrong one
 * (docs/openapi.md, "Examples").
 */
import type { JsonSchema } from '../core/schema.js';

const componentPrefix = '#/components/schemas/';
/** Deep enough for any real body; stops self-referencing schemas. */
const maxDepth = 8;

/** A schema the example cannot satisfy. */
const none = Symbol('no example');
type Made = unknown | typeof none;

/**
 * Strings by format. Each passes the format's usual pattern (Zod's included), and the dates are
 * fixed so that a document is the same every time it is generated.
 */
const byFormat: Record<string, string> = {
  email: 'ada@example.com',
  'date-time': '2026-03-14T09:26:53.000Z',
  date: '2026-03-14',
  time: '09:26:53',
  duration: 'PT15M',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  'uri-reference': '/api/posts',
  hostname: 'example.com',
  ipv4: '192.0.2.10',
  ipv6: '2001:db8::10',
  byte: 'aGVsbG8=',
  base64: 'aGVsbG8=',
  jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJl',
};

/** Strings by the (lower-cased) property name, for plain `type: string` fields. */
const byName: [test: RegExp, value: string][] = [
  [/email/, 'ada@example.com'],
  [/password/, 'correct-horse-battery'],
  [/token/, 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJl'],
  [/^(name|fullname|displayname|author)$/, 'Ada Lovelace'],
  [/title|subject|headline/, 'Notes on the Analytical Engine'],
  [
    /^(content|body|text|markdown|message)$/,
    'The engine weaves algebraic patterns as the loom weaves flowers.',
  ],
  [/excerpt|summary|description/, 'How the engine weaves algebraic patterns.'],
  [/slug/, 'analytical-engine'],
  // Cursors are most often the key of an item, and the example item's key is its `id`.
  [/cursor/, uuidV7('id')],
  [/url|link|website|href/, 'https://example.com/'],
  [/^(q|query|search|term)$/, 'engine'],
];

/**
 * A UUIDv7 that looks real (time-ordered prefix, version 7, RFC variant). The tail is taken from
 * the property's name, so `id` and `authorId` in one example are not the same record.
 */
function uuidV7(seed: string): string {
  let hash = 2166136261;
  for (const character of seed) hash = Math.imul(hash ^ character.charCodeAt(0), 16777619) >>> 0;
  const tail = `${hash.toString(16).padStart(8, '0')}a5b6`.slice(0, 12);
  return `01951a2b-3c4d-7e5f-8a9b-${tail}`;
}

function fitLength(text: string, schema: JsonSchema): string {
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Number.POSITIVE_INFINITY;
  let fitted = text;
  while (fitted.length < min) fitted += ` ${text}`;
  if (fitted.length > max) fitted = fitted.slice(0, max).trimEnd();
  return fitted.length < min ? fitted.padEnd(min, 'x') : fitted;
}

function matchesPattern(text: string, schema: JsonSchema): boolean {
  if (typeof schema.pattern !== 'string') return true;
  try {
    return new RegExp(schema.pattern, 'u').test(text);
  } catch {
    return false;
  }
}

function makeString(schema: JsonSchema, name: string): Made {
  const format = typeof schema.format === 'string' ? schema.format : undefined;
  const lower = name.toLowerCase();
  let text: string;
  if (format === 'uuid') text = uuidV7(name);
  else if (format !== undefined && byFormat[format] !== undefined) text = byFormat[format];
  else if (format !== undefined) return none;
  // Keys without a declared format still look like the keys Proceed's examples use everywhere.
  else if (/^id$|[a-z0-9]Id$|_id$/.test(name)) text = uuidV7(name);
  else text = fitLength(byName.find(([test]) => test.test(lower))?.[1] ?? 'text', schema);
  const lengthFits =
    (typeof schema.minLength !== 'number' || text.length >= schema.minLength) &&
    (typeof schema.maxLength !== 'number' || text.length <= schema.maxLength);
  return lengthFits && matchesPattern(text, schema) ? text : none;
}

/** Numbers by the property's name; others take the smallest allowed value from 1 up. */
const numbersByName: [test: RegExp, value: number][] = [[/expires|ttl|seconds/, 900]];

function makeNumber(schema: JsonSchema, integer: boolean, name: string): Made {
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf } = schema;
  let low = typeof minimum === 'number' ? minimum : Number.NEGATIVE_INFINITY;
  if (typeof exclusiveMinimum === 'number') low = Math.max(low, exclusiveMinimum + (integer ? 1 : 0.5));
  let high = typeof maximum === 'number' ? maximum : Number.POSITIVE_INFINITY;
  if (typeof exclusiveMaximum === 'number') high = Math.min(high, exclusiveMaximum - (integer ? 1 : 0.5));
  const preferred = numbersByName.find(([test]) => test.test(name.toLowerCase()))?.[1] ?? 1;
  let value = Math.min(Math.max(preferred, low), high);
  if (integer) value = Math.ceil(value);
  if (typeof multipleOf === 'number' && multipleOf > 0) value = Math.ceil(value / multipleOf) * multipleOf;
  return value >= low && value <= high && Number.isFinite(value) ? value : none;
}

class ExampleMaker {
  readonly #components: Record<string, JsonSchema>;

  constructor(components: Record<string, JsonSchema>) {
    this.#components = components;
  }

  make(schema: JsonSchema, name: string, depth: number, omit: ReadonlySet<string>): Made {
    if (depth > maxDepth) return none;
    if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
    if ('example' in schema) return schema.example;
    if ('const' in schema) return schema.const;
    if ('default' in schema) return schema.default;
    if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
    if (typeof schema.$ref === 'string') {
      const target = schema.$ref.startsWith(componentPrefix)
        ? this.#components[decodeURIComponent(schema.$ref.slice(componentPrefix.length))]
        : undefined;
      return target === undefined ? none : this.make(target, name, depth + 1, omit);
    }
    // A one-item example page is the only page: nothing comes before or after it.
    if (/^(next|prev)/.test(name) && allowsNull(schema)) return null;
    for (const key of ['anyOf', 'oneOf'] as const) {
      const choices = schema[key];
      if (!Array.isArray(choices)) continue;
      // The first choice that is not `null`: a nullable field shows what it holds when set.
      const ordered = [...choices].sort((a: JsonSchema, b: JsonSchema) => +isNull(a) - +isNull(b));
      for (const choice of ordered) {
        const made = this.make(choice as JsonSchema, name, depth + 1, omit);
        if (made !== none) return made;
      }
      return none;
    }
    if (Array.isArray(schema.allOf)) return this.#allOf(schema.allOf as JsonSchema[], name, depth);
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type];
    const type = types.find((candidate) => candidate !== 'null') ?? types[0];
    switch (type) {
      case 'string':
        return makeString(schema, name);
      case 'integer':
        return makeNumber(schema, true, name);
      case 'number':
        return makeNumber(schema, false, name);
      case 'boolean':
        return true;
      case 'null':
        return null;
      case 'array':
        return this.#array(schema, name, depth);
      case 'object':
        return this.#object(schema, depth, omit);
      default:
        return schema.properties === undefined ? none : this.#object(schema, depth, omit);
    }
  }

  #array(schema: JsonSchema, name: string, depth: number): Made {
    if (typeof schema.maxItems === 'number' && schema.maxItems === 0) return [];
    if (Array.isArray(schema.prefixItems)) {
      const items = (schema.prefixItems as JsonSchema[]).map((item) =>
        this.make(item, name, depth + 1, noOmissions),
      );
      return items.includes(none) ? none : items;
    }
    const empty = typeof schema.minItems === 'number' && schema.minItems > 0 ? none : [];
    if (!isSchema(schema.items)) return empty;
    const item = this.make(schema.items, name, depth + 1, noOmissions);
    if (item === none) return empty;
    const count = Math.max(1, typeof schema.minItems === 'number' ? schema.minItems : 1);
    return Array.from({ length: count }, () => item);
  }

  #object(schema: JsonSchema, depth: number, omit: ReadonlySet<string>): Made {
    const properties = isSchema(schema.properties) ? (schema.properties as Record<string, JsonSchema>) : {};
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    const example: Record<string, unknown> = {};
    for (const [key, property] of Object.entries(properties)) {
      if (omit.has(key)) continue;
      const made = this.make(property, key, depth + 1, noOmissions);
      if (made !== none) example[key] = made;
      else if (required.has(key)) return none;
    }
    const count = Object.keys(example).length;
    if (typeof schema.minProperties === 'number' && count < schema.minProperties) return none;
    if (typeof schema.maxProperties === 'number' && count > schema.maxProperties) return none;
    return example;
  }

  #allOf(parts: JsonSchema[], name: string, depth: number): Made {
    const made = parts.map((part) => this.make(part, name, depth + 1, noOmissions));
    if (made.includes(none)) return none;
    if (made.every((part) => isSchema(part))) return Object.assign({}, ...made);
    return made.length === 1 ? made[0] : none;
  }
}

const noOmissions: ReadonlySet<string> = new Set();

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function allowsNull(schema: JsonSchema): boolean {
  if (Array.isArray(schema.type) ? schema.type.includes('null') : schema.type === 'null') return true;
  const choices = [schema.anyOf, schema.oneOf].filter(Array.isArray).flat() as JsonSchema[];
  return choices.some(isNull);
}

function isNull(schema: JsonSchema): boolean {
  return schema.type === 'null' || ('const' in schema && schema.const === null);
}

/**
 * An example for a schema of the document, or `undefined` when none can be made that the schema
 * accepts. `name` is the field or parameter the value is for; `omit` leaves top-level properties
 * out (the ignored `id` of an update body).
 *
 * @example
 * exampleFor({ type: 'string', format: 'uuid' }, {}, 'id') // '01951a2b-3c4d-7e5f-8a9b-…'
 */
export function exampleFor(
  schema: JsonSchema,
  components: Record<string, JsonSchema>,
  name = '',
  omit: ReadonlySet<string> = noOmissions,
): unknown {
  if (Object.keys(schema).length === 0) return undefined;
  const made = new ExampleMaker(components).make(schema, name, 0, omit);
  return made === none ? undefined : made;
}

/**
 * Whether a schema's author gave it an example or a default, rather than one Proceed would make
 * up. Optional query parameters get only these: a made-up cursor or filter in a pre-filled
 * request would change what the request asks for.
 */
export function hasOwnExample(schema: JsonSchema): boolean {
  return (
    (Array.isArray(schema.examples) && schema.examples.length > 0) ||
    'example' in schema ||
    'default' in schema
  );
}
