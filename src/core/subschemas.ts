/**
 * Where a JSON Schema holds schemas, in one place for the code that walks them (the canonical
 * form, the serializer's schema, the MCP tools' output schemas).
 */
import type { JsonSchema } from './json-schema.js';

/** The keywords under which a JSON Schema holds schemas: lists of them, maps by name, one each. */
export const subschemaLists = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;
export const subschemaMaps = ['properties', 'patternProperties', '$defs'] as const;
export const subschemas = ['items', 'additionalProperties', 'not', 'propertyNames'] as const;

/**
 * Every keyword under which a schema holds schemas, 2020-12's and the draft-07 forms other
 * converters write (`items` as a list, `additionalItems`, `dependencies`, `definitions`).
 */
const everySubschema = [
  ...subschemas,
  'additionalItems',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
  'if',
  'then',
  'else',
  'contains',
];
const everySubschemaList = [...subschemaLists, 'items'];
const everySubschemaMap = [...subschemaMaps, 'definitions', 'dependentSchemas', 'dependencies'];

/** A copy of `schema` with `map` applied to each schema directly under it, wherever one can be. */
export function mapSubschemas(schema: JsonSchema, map: (part: JsonSchema) => JsonSchema): JsonSchema {
  const node: JsonSchema = { ...schema };
  for (const key of everySubschema) if (isSchema(node[key])) node[key] = map(node[key] as JsonSchema);
  for (const key of everySubschemaList)
    if (Array.isArray(node[key]))
      node[key] = (node[key] as unknown[]).map((part) => (isSchema(part) ? map(part as JsonSchema) : part));
  for (const key of everySubschemaMap)
    if (isSchema(node[key]))
      node[key] = Object.fromEntries(
        Object.entries(node[key] as JsonSchema).map(([name, part]) => [
          name,
          isSchema(part) ? map(part as JsonSchema) : part,
        ]),
      );
  return node;
}

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
