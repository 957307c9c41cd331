/**
 * An answer cut to what its output's JSON Schema names, without compiling code: where the
 * runtime refuses to (Cloudflare Workers while serving a request), the serializer validates the
 * answer and then writes only this, as fast-json-stringify would have. Validation alone is not
 * enough: ArkType, for one, keeps keys a type does not declare.
 */
import { type JsonSchema, resolveLocalRef } from './schema.js';

export type Projection = (value: unknown) => unknown;

/** Past this depth a recursive schema's value is cut to nothing more than its type allows. */
const depthLimit = 64;

/** The projection of an output's JSON Schema; `$ref`s are read against it. */
export function projectionOf(schema: JsonSchema): Projection {
  return (value) => project(value, schema, schema, 0);
}

function project(value: unknown, schema: unknown, root: JsonSchema, depth: number): unknown {
  const node = resolve(schema, root);
  if (node === undefined) return value;
  // Too deep to follow: an object or array is written empty rather than whole, so no key leaks.
  if (depth > depthLimit)
    return Array.isArray(value) ? [] : typeof value === 'object' && value !== null ? {} : value;
  const alternatives = [...asList(node.anyOf), ...asList(node.oneOf)];
  if (alternatives.length > 0) {
    const chosen = alternatives.find((alternative) => fits(value, resolve(alternative, root), root));
    // No alternative fits a validated value only when the schema says too little to tell.
    return chosen === undefined ? value : project(value, chosen, root, depth + 1);
  }
  if (Array.isArray(value)) return projectItems(value, node, root, depth);
  if (typeof value !== 'object' || value === null) return value;
  const rest = node.additionalProperties;
  const patterns = Object.entries((node.patternProperties ?? {}) as Record<string, unknown>).map(
    ([pattern, field]) => [new RegExp(pattern, 'u'), field] as const,
  );
  // A node that names no keys and says nothing of others (`{}`, `z.unknown()`) takes the value whole.
  const properties =
    namedProperties(node, root) ?? (typeof rest === 'object' || patterns.length > 0 ? new Map() : undefined);
  if (properties === undefined) return value;
  // A record whose keys are an enum (`z.record(z.enum([…]), …)`) holds those keys only.
  const names = (node.propertyNames as { enum?: unknown } | undefined)?.enum;
  const result: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    if (Array.isArray(names) && !names.includes(key)) continue;
    const declared = properties.get(key);
    const matched = declared === undefined ? patterns.find(([pattern]) => pattern.test(key)) : undefined;
    if (declared !== undefined) result[key] = project(field, declared, root, depth + 1);
    else if (matched !== undefined) result[key] = project(field, matched[1], root, depth + 1);
    else if (typeof rest === 'object' && rest !== null) result[key] = project(field, rest, root, depth + 1);
    else if (rest === true) result[key] = field;
  }
  return result;
}

/** An array's items, a tuple's (`prefixItems`) each by its own schema. */
function projectItems(value: unknown[], node: JsonSchema, root: JsonSchema, depth: number): unknown[] {
  const prefix = asList(node.prefixItems);
  const { items } = node;
  return value.map((item, index) => {
    const schema = index < prefix.length ? prefix[index] : items;
    return typeof schema === 'object' && schema !== null ? project(item, schema, root, depth + 1) : item;
  });
}

/** The properties an object node names, its `allOf` parts' included; undefined for a node that names none. */
function namedProperties(node: JsonSchema, root: JsonSchema): Map<string, unknown> | undefined {
  const parts = [node, ...asList(node.allOf).map((part) => resolve(part, root) ?? {})];
  const named = new Map<string, unknown>();
  let any = false;
  for (const part of parts) {
    if (typeof part.properties !== 'object' || part.properties === null) continue;
    any = true;
    for (const [key, field] of Object.entries(part.properties as JsonSchema))
      if (!named.has(key)) named.set(key, field);
  }
  return any ? named : undefined;
}

/** Whether a (validated) value is the one an alternative describes: its type, required keys and constants. */
function fits(value: unknown, alternative: JsonSchema | undefined, root: JsonSchema): boolean {
  if (alternative === undefined) return false;
  if ('const' in alternative) return alternative.const === value;
  const types = asList(alternative.type) as string[];
  if (types.length > 0 && !types.some((type) => hasType(value, type))) return false;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return true;
  const record = value as Record<string, unknown>;
  for (const key of asList(alternative.required) as string[]) if (!(key in record)) return false;
  for (const [key, field] of namedProperties(alternative, root) ?? []) {
    const described = resolve(field, root);
    if (described !== undefined && 'const' in described && key in record && record[key] !== described.const)
      return false;
  }
  return true;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'integer':
      return Number.isInteger(value);
    default:
      return typeof value === type;
  }
}

/** The node a schema is, its local `$ref`s followed. */
function resolve(schema: unknown, root: JsonSchema): JsonSchema | undefined {
  let current = schema;
  for (let hops = 0; hops < 16; hops++) {
    if (typeof current !== 'object' || current === null) return undefined;
    const ref = (current as JsonSchema).$ref;
    if (typeof ref !== 'string') return current as JsonSchema;
    current = resolveLocalRef(ref, root);
  }
  return undefined;
}

function asList(value: unknown): unknown[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}
