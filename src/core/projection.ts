/**
 * An answer cut to what its output's JSON Schema names, without compiling code: where the
 * runtime refuses to (Cloudflare Workers while serving a request), the serializer validates the
 * answer and then writes only this, as fast-json-stringify would have. Validation alone is not
 * enough: ArkType, for one, keeps keys a type does not declare. Outside production every answer
 * is cut so before its check (src/core/output.ts): the schema is read once, into one step per
 * node, so that an answer costs a walk of its own keys.
 */
import { type JsonSchema, resolveLocalRef } from './schema.js';

export type Projection = (value: unknown) => unknown;

/** One node's projection of a value found `depth` levels down. */
type Step = (value: unknown, depth: number) => unknown;

/** Past this depth a recursive schema's value is cut to nothing more than its type allows. */
const depthLimit = 64;

const whole: Step = (value) => value;

/** Too deep to follow: an object or array is written empty rather than whole, so no key leaks. */
function tooDeep(value: unknown): unknown {
  if (Array.isArray(value)) return [];
  return typeof value === 'object' && value !== null ? {} : value;
}

/** The projection of an output's JSON Schema; `$ref`s are read against it. */
export function projectionOf(schema: JsonSchema): Projection {
  const root = new ProjectionCompiler(schema).stepOf(schema);
  return (value) => root(value, 0);
}

class ProjectionCompiler {
  readonly #root: JsonSchema;
  readonly #steps = new Map<JsonSchema, Step>();
  readonly #making = new Set<JsonSchema>();

  constructor(root: JsonSchema) {
    this.#root = root;
  }

  /** A node's step, made once per node; a reference back to a node being made is followed when run. */
  stepOf(schema: unknown): Step {
    const node = resolve(schema, this.#root);
    if (node === undefined) return whole;
    const step = this.#steps.get(node);
    if (step !== undefined) return step;
    if (this.#making.has(node)) return (value, depth) => (this.#steps.get(node) as Step)(value, depth);
    this.#making.add(node);
    const made = this.#shaped(node);
    this.#making.delete(node);
    this.#steps.set(node, made);
    return made;
  }

  #shaped(node: JsonSchema): Step {
    const root = this.#root;
    const alternatives = [...asList(node.anyOf), ...asList(node.oneOf)].map((alternative) => ({
      fits: fitsOf(resolve(alternative, root), root),
      step: this.stepOf(alternative),
    }));
    if (alternatives.length > 0)
      return (value, depth) => {
        if (depth > depthLimit) return tooDeep(value);
        const chosen = alternatives.find(({ fits }) => fits(value));
        // No alternative fits a validated value only when the schema says too little to tell.
        return chosen === undefined ? value : chosen.step(value, depth + 1);
      };
    const items = this.#itemsStep(node);
    const object = this.#objectStep(node);
    return (value, depth) => {
      if (depth > depthLimit) return tooDeep(value);
      if (Array.isArray(value)) return items(value, depth);
      if (typeof value !== 'object' || value === null) return value;
      return object === undefined ? value : object(value as Record<string, unknown>, depth);
    };
  }

  /** An array's items, a tuple's (`prefixItems`) each by its own schema. */
  #itemsStep(node: JsonSchema): (value: unknown[], depth: number) => unknown[] {
    const prefix = asList(node.prefixItems).map((schema) => this.#stepOfSchema(schema));
    const items = this.#stepOfSchema(node.items);
    return (value, depth) =>
      value.map((item, index) => (index < prefix.length ? prefix[index] : items)?.(item, depth + 1) ?? item);
  }

  /** The step of a schema given as one (an object), or undefined where there is none to follow. */
  #stepOfSchema(schema: unknown): Step | undefined {
    return typeof schema === 'object' && schema !== null ? this.stepOf(schema) : undefined;
  }

  /** An object's keys cut to those its node names; undefined for a node that takes any value whole. */
  #objectStep(node: JsonSchema): ((value: Record<string, unknown>, depth: number) => unknown) | undefined {
    const root = this.#root;
    const rest = node.additionalProperties;
    const patterns = Object.entries((node.patternProperties ?? {}) as Record<string, unknown>).map(
      ([pattern, field]) => ({ pattern: new RegExp(pattern, 'u'), step: this.stepOf(field) }),
    );
    // A node that names no keys and says nothing of others (`{}`, `z.unknown()`) takes the value whole.
    const named = namedProperties(node, root);
    if (named === undefined && typeof rest !== 'object' && patterns.length === 0) return undefined;
    const declared = new Map<string, Step>();
    for (const [key, field] of named ?? []) declared.set(key, this.stepOf(field));
    const restStep = typeof rest === 'object' && rest !== null ? this.stepOf(rest) : undefined;
    const keepsRest = rest === true;
    // A record whose keys are an enum (`z.record(z.enum([…]), …)`) holds those keys only.
    const enumerated = (node.propertyNames as { enum?: unknown } | undefined)?.enum;
    const names = Array.isArray(enumerated) ? new Set(enumerated) : undefined;
    return (value, depth) => {
      const result: Record<string, unknown> = {};
      for (const key of Object.keys(value)) {
        if (names !== undefined && !names.has(key)) continue;
        const field = value[key];
        const step =
          declared.get(key) ??
          (patterns.length === 0
            ? restStep
            : (patterns.find(({ pattern }) => pattern.test(key))?.step ?? restStep));
        if (step !== undefined) result[key] = step(field, depth + 1);
        else if (keepsRest) result[key] = field;
      }
      return result;
    };
  }
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

/**
 * Whether a (validated) value is the one an alternative describes: its type, required keys and
 * constants, read off the alternative once.
 */
function fitsOf(alternative: JsonSchema | undefined, root: JsonSchema): (value: unknown) => boolean {
  if (alternative === undefined) return () => false;
  if ('const' in alternative) {
    const constant = alternative.const;
    return (value) => value === constant;
  }
  const types = asList(alternative.type) as string[];
  const required = asList(alternative.required) as string[];
  const constants: Array<readonly [string, unknown]> = [];
  for (const [key, field] of namedProperties(alternative, root) ?? []) {
    const described = resolve(field, root);
    if (described !== undefined && 'const' in described) constants.push([key, described.const]);
  }
  return (value) => {
    if (types.length > 0 && !types.some((type) => hasType(value, type))) return false;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return true;
    const record = value as Record<string, unknown>;
    for (const key of required) if (!(key in record)) return false;
    for (const [key, constant] of constants) if (key in record && record[key] !== constant) return false;
    return true;
  };
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
