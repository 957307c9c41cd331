/**
 * The part of an output's JSON Schema that decides what fast-json-stringify writes. Validation
 * keywords and annotations (`pattern`, `minLength`, `description`, a `format` such as `uuid`,
 * `enum` beside a `type`) change nothing it writes, and `additionalProperties: false` says what
 * it does anyway (write only the declared keys); but any of them keeps it from its projection
 * (`objectMechanism: 'native'`), which copies each value into a plain object of exactly the
 * declared keys and hands that to the engine's `JSON.stringify`. Where that is fast (V8 13.8
 * and later, so Node 25 and Deno; and JavaScriptCore on Bun, which reports such a V8 version)
 * a cursor page of 20 posts is written in a third of the time; on older V8 the option does
 * nothing. The output is the same byte for byte either way (src/core/output.test.ts).
 */
import type { JsonSchema } from './schema.js';
import { subschemaLists, subschemaMaps, subschemas } from './subschemas.js';

/** Keywords fast-json-stringify never reads while writing. */
const unread = new Set([
  '$comment',
  '$schema',
  'contentEncoding',
  'contentMediaType',
  'deprecated',
  'description',
  'examples',
  'exclusiveMaximum',
  'exclusiveMinimum',
  'maxItems',
  'maxLength',
  'maxProperties',
  'maximum',
  'minItems',
  'minLength',
  'minProperties',
  'minimum',
  'multipleOf',
  'pattern',
  'propertyNames',
  'readOnly',
  'title',
  'uniqueItems',
  'writeOnly',
]);

/** The string formats fast-json-stringify writes in its own way (a `Date` as ISO text, or unescaped). */
const writtenFormats = new Set(['date-time', 'date', 'time', 'unsafe']);

/**
 * Keywords under which fast-json-stringify chooses between schemas by validating the value
 * against each: there a `pattern` or an `enum` decides what is written (a tagged union's tag),
 * so a schema with any of them is left whole. The projection takes none of them anyway.
 */
const choosing = new Set([
  'anyOf',
  'oneOf',
  'allOf',
  'if',
  'not',
  '$ref',
  'patternProperties',
  'dependencies',
]);

/** A copy of `schema` with only what fast-json-stringify reads while writing; whole where it chooses. */
export function serializationSchema(schema: JsonSchema): JsonSchema {
  const writable = writtenAsDeclared(schema, choosesAnywhere(schema)) as JsonSchema;
  return choosesAnywhere(writable) ? writable : (trimmed(writable) as JsonSchema);
}

/**
 * The schema in the words fast-json-stringify writes by, so that it writes exactly what the
 * schema declares: a tuple's `prefixItems` (which it does not read: every item was written whole,
 * a view's row and all) as the array form of `items`; a record whose keys are an enum as those
 * keys' properties (it wrote any key); and, where it chooses an alternative by validating the value
 * (`choosing`), no `additionalProperties: false`, so that a whole row still matches its view's
 * alternative (it answered 500) and is then written as the view: it never writes an undeclared key.
 */
function writtenAsDeclared(node: unknown, chooses: boolean): unknown {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return node;
  const result: Record<string, unknown> = { ...node };
  const under = (each: unknown) => writtenAsDeclared(each, chooses);
  for (const keyword of subschemaLists)
    if (Array.isArray(result[keyword])) result[keyword] = (result[keyword] as unknown[]).map(under);
  for (const keyword of subschemaMaps)
    if (typeof result[keyword] === 'object' && result[keyword] !== null)
      result[keyword] = Object.fromEntries(
        Object.entries(result[keyword] as Record<string, unknown>).map(([name, each]) => [name, under(each)]),
      );
  for (const keyword of subschemas) if (keyword in result) result[keyword] = under(result[keyword]);
  if (Array.isArray(result.prefixItems)) {
    result.additionalItems = result.items ?? true;
    result.items = result.prefixItems;
    delete result.prefixItems;
  }
  const names = (result.propertyNames as { enum?: unknown } | undefined)?.enum;
  if (Array.isArray(names) && typeof result.additionalProperties === 'object') {
    const each = result.additionalProperties;
    const declared = (result.properties ?? {}) as Record<string, unknown>;
    result.properties = { ...Object.fromEntries(names.map((name) => [String(name), each])), ...declared };
    delete result.additionalProperties;
  }
  if (chooses && result.additionalProperties === false) delete result.additionalProperties;
  return result;
}

function choosesAnywhere(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(choosesAnywhere);
  if (typeof node !== 'object' || node === null) return false;
  return Object.entries(node).some(([keyword, value]) => choosing.has(keyword) || choosesAnywhere(value));
}

/** Only `properties`, `items` and `additionalProperties` hold schemas once nothing chooses. */
function trimmed(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(trimmed);
  if (typeof node !== 'object' || node === null) return node;
  const source = node as Record<string, unknown>;
  const result: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(source)) {
    if (unread.has(keyword)) continue;
    if (keyword === 'format' && !writtenFormats.has(value as string)) continue;
    // With a type to write by, the listed values are a validation rule only.
    if (keyword === 'enum' && source.type !== undefined) continue;
    if (keyword === 'additionalProperties' && value === false) continue;
    if (keyword === 'items' || keyword === 'additionalProperties') result[keyword] = trimmed(value);
    else if (keyword === 'properties' && typeof value === 'object' && value !== null)
      result[keyword] = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([name, each]) => [name, trimmed(each)]),
      );
    else result[keyword] = value;
  }
  return result;
}
