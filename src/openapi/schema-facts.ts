/**
 * What the document can say of a converted schema that the validator's JSON Schema leaves out
 * (docs/openapi.md, "OWASP rules"): the `format` of an integer from its bounds, the length a
 * string's format fixes, and, on a JSON body, the strictness the server applies to its keys
 * (src/core/unknown-keys.ts). Each works on JSON Schema, so it holds for every validator.
 */
import type { JsonSchema } from '../core/schema.js';

const int32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };
const int64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n };

/** Formats whose strings all have one length: a UUID is always 36 characters (RFC 9562). */
const fixedLengths: Readonly<Record<string, number>> = { uuid: 36 };

/** Keywords whose value is a schema. */
const schemaKeywords = [
  'items',
  'additionalProperties',
  'unevaluatedProperties',
  'propertyNames',
  'contains',
  'not',
  'if',
  'then',
  'else',
] as const;
/** Keywords whose value is a list of schemas. */
const listKeywords = ['allOf', 'anyOf', 'oneOf', 'prefixItems'] as const;
/** Keywords whose value maps names to schemas. */
const mapKeywords = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'] as const;

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typesOf(schema: JsonSchema): unknown[] {
  return Array.isArray(schema.type) ? schema.type : [schema.type];
}

/** The lowest and highest values an integer schema allows, when it says both. */
function boundsOf(schema: JsonSchema): { min: number; max: number } | undefined {
  const min =
    typeof schema.minimum === 'number'
      ? schema.minimum
      : typeof schema.exclusiveMinimum === 'number'
        ? Math.floor(schema.exclusiveMinimum) + 1
        : undefined;
  const max =
    typeof schema.maximum === 'number'
      ? schema.maximum
      : typeof schema.exclusiveMaximum === 'number'
        ? Math.ceil(schema.exclusiveMaximum) - 1
        : undefined;
  return min === undefined || max === undefined ? undefined : { min, max };
}

/**
 * An integer's `format`: `int32` when its bounds fit in 32 bits, else `int64`; none when a bound
 * lies beyond 64 bits (no format would be true of it).
 */
export function integerFormat(schema: JsonSchema): 'int32' | 'int64' | undefined {
  const bounds = boundsOf(schema);
  if (bounds === undefined) return 'int64';
  if (bounds.min >= int32.min && bounds.max <= int32.max) return 'int32';
  const fits = (value: number) =>
    Number.isFinite(value) &&
    BigInt(Math.trunc(value)) >= int64.min &&
    BigInt(Math.trunc(value)) <= int64.max;
  return fits(bounds.min) && fits(bounds.max) ? 'int64' : undefined;
}

/** Calls `visit` on a schema and every schema inside it, parents first. */
function walk(schema: JsonSchema, visit: (node: JsonSchema) => void): void {
  visit(schema);
  for (const key of schemaKeywords) {
    const child = schema[key];
    if (isSchema(child)) walk(child, visit);
  }
  for (const key of listKeywords) {
    const list = schema[key];
    if (Array.isArray(list)) for (const child of list) if (isSchema(child)) walk(child, visit);
  }
  for (const key of mapKeywords) {
    const map = schema[key];
    if (isSchema(map)) for (const child of Object.values(map)) if (isSchema(child)) walk(child, visit);
  }
}

/**
 * A copy of a converted schema with what its own keywords imply written out: each integer's
 * `format` (unless it has one) and the `maxLength` of a string whose format fixes its length.
 *
 * @example
 * withImpliedFacts({ type: 'integer', minimum: 1, maximum: 100 }); // { …, format: 'int32' }
 * withImpliedFacts({ type: 'string', format: 'uuid' }); // { …, maxLength: 36 }
 */
export function withImpliedFacts(schema: JsonSchema): JsonSchema {
  const copy = structuredClone(schema);
  walk(copy, (node) => {
    const types = typesOf(node);
    if (types.includes('integer') && node.format === undefined) {
      const format = integerFormat(node);
      if (format !== undefined) node.format = format;
    }
    const fixed = typeof node.format === 'string' ? fixedLengths[node.format] : undefined;
    if (types.includes('string') && fixed !== undefined && node.maxLength === undefined)
      node.maxLength = fixed;
  });
  return copy;
}

/**
 * A copy of a JSON body's schema in which each object the server checks strictly says
 * `additionalProperties: false`: one that names its keys and says nothing of others (an unknown
 * key there is a 400). Followed through properties, array items and a map's values; not through
 * `$ref` (a shared component may be an output too), nor into `allOf`/`anyOf`/`oneOf`, where
 * `additionalProperties` would refuse a key another part names.
 *
 * @example
 * strictBody({ type: 'object', properties: { title: { type: 'string' } } });
 * // { type: 'object', properties: { … }, additionalProperties: false }
 */
export function strictBody(schema: JsonSchema): JsonSchema {
  const copy = structuredClone(schema);
  const mark = (node: JsonSchema): void => {
    if (typeof node.$ref === 'string') return;
    if (listKeywords.slice(0, 3).some((key) => key in node)) return;
    const properties = node.properties;
    if (isSchema(properties)) {
      const open = [
        'additionalProperties',
        'patternProperties',
        'propertyNames',
        'unevaluatedProperties',
      ].some((key) => key in node);
      if (!open) node.additionalProperties = false;
      for (const child of Object.values(properties)) if (isSchema(child)) mark(child);
    }
    if (isSchema(node.items)) mark(node.items);
    if (isSchema(node.additionalProperties)) mark(node.additionalProperties);
  };
  mark(copy);
  return copy;
}
