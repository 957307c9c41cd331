/**
 * Keys an input does not name: a query parameter or a JSON body key that the input schema would
 * silently drop (a typo such as `is_private` for `isPrivate` changes what the request means) is a
 * 400 naming it, with the key meant when one is close (docs/procedures.md, "Keys the input does not
 * name"). The rule reads the input's JSON Schema, so it holds for every validator that describes
 * itself (Zod, ArkType and any Standard JSON Schema one); an input that cannot is not checked.
 */
import { type FieldError, ValidationError } from './errors.js';
import { closestName } from './options.js';
import { type JsonSchema, resolveLocalRef, type StandardSchemaV1, toJsonSchema } from './schema.js';

/** What an input allows at one place of its value: the keys of an object, the items of an array. */
export interface KeyShape {
  /** The keys an object here names, each with its value's shape; absent where no object is expected. */
  readonly fields?: ReadonlyMap<string, KeyShape>;
  /** Any other key is welcome here (`z.looseObject`, `.catchall()`, a record), its value of this shape. */
  readonly rest?: KeyShape;
  /** The shape of the items of an array here. */
  readonly items?: KeyShape;
  /** Alternatives told apart by the constant value of one key: a discriminated union. */
  readonly tagged?: { readonly key: string; readonly shapes: ReadonlyMap<unknown, KeyShape> };
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Anything goes: a schema that says nothing (`z.unknown()`), or one that cannot be read. */
const anything: KeyShape = (() => {
  const shape: Mutable<KeyShape> = { fields: new Map() };
  shape.rest = shape;
  shape.items = shape;
  return shape;
})();
/** A value that holds no keys (a string, a number, `null`, nothing at all): none to check. */
const scalar: KeyShape = {};
/** An object that names no key and takes none: the input of a procedure without `.input()`. */
export const noKeys: KeyShape = { fields: new Map() };

/** Merging past this depth (recursive alternatives) gives up and lets everything through. */
const mergeDepth = 16;

/** How one input's JSON Schema is read: the root for `$ref`s, and the shapes already made. */
interface Reading {
  readonly root: JsonSchema;
  readonly made: Map<object, KeyShape>;
  /** Shapes still being made (a recursive schema refers to itself): merged with anything, they give `anything`. */
  readonly unfinished: Set<KeyShape>;
}

/**
 * The keys an input schema allows, read once when the route is compiled.
 *
 * @example
 * const shape = keyShapeOf(z.object({ tag: z.string(), page: z.object({ size: z.number() }) }));
 * unknownKeysIn({ tags: 'x', page: { sise: 2 } }, shape, { noun: 'key' });
 * // [{ path: 'tags', message: 'Unknown key; did you mean "tag"?' },
 * //  { path: 'page.sise', message: 'Unknown key; did you mean "size"?' }]
 */
export function keyShapeOf(schema: StandardSchemaV1 | undefined): KeyShape {
  if (schema === undefined) return anything;
  const root = toJsonSchema(schema, { io: 'input' });
  return shapeOf(root, { root, made: new Map(), unfinished: new Set() });
}

/** True when the shape checks nothing, so a route may skip the walk. */
export function checksNothing(shape: KeyShape): boolean {
  return shape === anything || shape === scalar;
}

/** The shape of the value under one key (an update's body under `data`). */
export function shapeAt(shape: KeyShape, key: string): KeyShape {
  if (shape.tagged !== undefined) return anything;
  return shape.fields?.get(key) ?? shape.rest ?? (shape.fields === undefined ? anything : noKeys);
}

function shapeOf(schema: unknown, reading: Reading): KeyShape {
  if (schema === false) return scalar;
  const node = nodeOf(schema, reading);
  if (node === undefined) return anything;
  const known = reading.made.get(node);
  if (known !== undefined) return known;
  // Made in place: a recursive schema's `$ref` to this node gets this very object, filled below.
  const shape: Mutable<KeyShape> = {};
  reading.made.set(node, shape);
  reading.unfinished.add(shape);
  const made = readNode(node, reading);
  reading.unfinished.delete(shape);
  Object.assign(shape, made);
  if (made !== anything && made !== scalar) return shape;
  reading.made.set(node, made);
  return made;
}

/** One JSON Schema node: its own keywords, its alternatives (`anyOf`, `oneOf`) and its parts (`allOf`). */
function readNode(node: JsonSchema, reading: Reading): KeyShape {
  if (isNever(node)) return scalar;
  const parts: KeyShape[] = [];
  const own = ownShape(node, reading);
  if (own !== undefined) parts.push(own);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const alternatives = node[key];
    if (Array.isArray(alternatives)) parts.push(unionShape(alternatives, reading));
  }
  if (Array.isArray(node.allOf)) for (const part of node.allOf) parts.push(shapeOf(part, reading));
  if (parts.length > 0) return merge(parts, reading);
  // A node that says nothing of its type (`{}`, a description only) allows any value.
  return node.const !== undefined || node.enum !== undefined || node.type !== undefined ? scalar : anything;
}

/** `{ not: {} }`: no value fits (Zod's `z.never()`). */
function isNever(node: unknown): boolean {
  if (typeof node !== 'object' || node === null) return false;
  const not = (node as JsonSchema).not;
  return typeof not === 'object' && not !== null && Object.keys(not).length === 0;
}

/** What the node's own keywords allow: an object's keys, an array's items; undefined when it has none. */
function ownShape(node: JsonSchema, reading: Reading): KeyShape | undefined {
  const types = Array.isArray(node.type) ? node.type : [node.type];
  const isObject =
    types.includes('object') ||
    ['properties', 'additionalProperties', 'patternProperties', 'propertyNames'].some((key) => key in node);
  const isArray = types.includes('array') || node.items !== undefined || node.prefixItems !== undefined;
  if (!isObject && !isArray) return undefined;
  const shape: Mutable<KeyShape> = {};
  if (isObject) Object.assign(shape, objectShape(node, reading));
  if (isArray) shape.items = itemsShape(node, reading);
  return shape;
}

/**
 * An object's keys. Keys beyond `properties` are refused when the schema says `false`, or names
 * its keys and says nothing of others (a validator that does so drops them: Zod's `z.object`);
 * they are welcome when it says so (`additionalProperties` a schema, `patternProperties`,
 * `propertyNames`) or names no key at all (`{ type: 'object' }`: any object).
 */
function objectShape(node: JsonSchema, reading: Reading): KeyShape {
  const properties = (node.properties ?? {}) as Record<string, unknown>;
  const fields = new Map<string, KeyShape>();
  for (const key of Object.keys(properties)) fields.set(key, shapeOf(properties[key], reading));
  const additional = node.additionalProperties;
  if (additional === false || isNever(additional)) return { fields };
  if (additional !== undefined) return { fields, rest: shapeOf(additional, reading) };
  const welcomes = node.patternProperties !== undefined || node.propertyNames !== undefined;
  return welcomes || node.properties === undefined ? { fields, rest: anything } : { fields };
}

/** An array's items; a tuple's positions are merged into one shape. */
function itemsShape(node: JsonSchema, reading: Reading): KeyShape {
  const parts = Array.isArray(node.prefixItems)
    ? node.prefixItems.map((item: unknown) => shapeOf(item, reading))
    : [];
  if (node.items === undefined && parts.length === 0) return anything;
  if (node.items !== undefined) parts.push(shapeOf(node.items, reading));
  return merge(parts, reading);
}

/**
 * A union. When every alternative that holds keys is an object with one key of constant values
 * (a discriminated union), the value's own constant picks the alternative whose keys count;
 * otherwise a key is unknown only when no alternative names it.
 */
function unionShape(alternatives: readonly unknown[], reading: Reading): KeyShape {
  const shapes = alternatives.map((alternative) => shapeOf(alternative, reading));
  const tagged = discriminated(alternatives, shapes, reading);
  return tagged ?? merge(shapes, reading);
}

function discriminated(
  alternatives: readonly unknown[],
  shapes: readonly KeyShape[],
  reading: Reading,
): KeyShape | undefined {
  const objects = shapes.flatMap((shape, index) => (shape === scalar ? [] : [index]));
  const first = nodeOf(alternatives[objects[0] ?? -1], reading);
  if (objects.length < 2 || first === undefined) return undefined;
  for (const key of Object.keys((first.properties ?? {}) as object)) {
    const picks = new Map<unknown, KeyShape>();
    const decides = (index: number): boolean => {
      const shape = shapes[index] as KeyShape;
      const values = constantsOf(nodeOf(alternatives[index], reading), key, reading);
      if (shape.fields === undefined || values === undefined || values.some((value) => picks.has(value)))
        return false;
      for (const value of values) picks.set(value, shape);
      return true;
    };
    if (objects.every(decides)) return { tagged: { key, shapes: picks } };
  }
  return undefined;
}

/** A schema object with its `$ref`s followed (local ones only), or undefined: `true`, or nothing to read. */
function nodeOf(schema: unknown, reading: Reading): JsonSchema | undefined {
  let node = schema;
  for (let hops = 0; hops < 8; hops++) {
    if (typeof node !== 'object' || node === null) return undefined;
    const ref = (node as JsonSchema).$ref;
    if (typeof ref !== 'string') return node as JsonSchema;
    node = resolveLocalRef(ref, reading.root);
  }
  return undefined;
}

/** The values one property of an object alternative may take, when they are constants (`const`, `enum`). */
function constantsOf(node: JsonSchema | undefined, key: string, reading: Reading): unknown[] | undefined {
  const property = nodeOf((node?.properties as Record<string, unknown> | undefined)?.[key], reading);
  const values = property?.const !== undefined ? [property.const] : property?.enum;
  if (!Array.isArray(values) || values.length === 0) return undefined;
  return values.every((value) => value === null || typeof value !== 'object') ? values : undefined;
}

/**
 * Shapes of which the value may fit any: a key is known when one of them names it, welcome when
 * one welcomes any. Never stricter than any one of them.
 */
function merge(shapes: readonly KeyShape[], reading: Reading, depth = 0): KeyShape {
  const some = shapes.filter((shape) => shape !== scalar);
  if (some.length <= 1) return some[0] ?? scalar;
  // Beside other shapes, a discriminated union counts as its alternatives.
  const holding = some.flatMap((shape) => (shape.tagged ? [...shape.tagged.shapes.values()] : [shape]));
  if (depth > mergeDepth || holding.some((shape) => shape === anything || reading.unfinished.has(shape)))
    return anything;
  const merged: Mutable<KeyShape> = {};
  const objects = holding.filter((shape) => shape.fields !== undefined);
  if (objects.length > 0) Object.assign(merged, mergeObjects(objects, reading, depth));
  const arrays = holding.flatMap((shape) => (shape.items === undefined ? [] : [shape.items]));
  if (arrays.length > 0) merged.items = merge(arrays, reading, depth + 1);
  return merged;
}

function mergeObjects(objects: readonly KeyShape[], reading: Reading, depth: number): KeyShape {
  const keys = new Set(objects.flatMap((shape) => [...(shape.fields?.keys() ?? [])]));
  const fields = new Map<string, KeyShape>();
  for (const key of keys) {
    const under = objects.flatMap((shape) => {
      const field = shape.fields?.get(key) ?? shape.rest;
      return field === undefined ? [] : [field];
    });
    fields.set(key, merge(under, reading, depth + 1));
  }
  const rests = objects.flatMap((shape) => (shape.rest === undefined ? [] : [shape.rest]));
  return rests.length === 0 ? { fields } : { fields, rest: merge(rests, reading, depth + 1) };
}

/** How the keys found are reported. */
export interface KeyCheck {
  /** What a key is called in the message: `query parameter`, `key`. */
  noun: string;
  /** Top-level keys that join the input from elsewhere (path parameters): never unknown. */
  exempt?: readonly string[];
  /** Where the value sits in the input (`data` for an update's body); '' for the input itself. */
  path?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** The shape that counts for an object: a discriminated union's alternative picked by the object's own value. */
function pick(shape: KeyShape, value: Record<string, unknown>): KeyShape | undefined {
  return shape.tagged === undefined ? shape : shape.tagged.shapes.get(value[shape.tagged.key]);
}

/** Nesting past which the quick look gives up and leaves the decision to the full walk. */
const quickDepth = 64;

/**
 * Whether `value` may hold a key its shape does not allow: the look taken on every request, which
 * makes no object. Past `quickDepth` it answers yes, and the full walk decides.
 */
function mayHoldUnknown(
  value: unknown,
  shape: KeyShape,
  exempt: readonly string[] | undefined,
  depth: number,
): boolean {
  if (depth > quickDepth) return true;
  if (Array.isArray(value)) {
    const { items } = shape;
    if (items === undefined || checksNothing(items)) return false;
    for (const item of value)
      if (typeof item === 'object' && item !== null && mayHoldUnknown(item, items, undefined, depth + 1))
        return true;
    return false;
  }
  if (!isRecord(value)) return false;
  const picked = pick(shape, value);
  if (picked?.fields === undefined) return false;
  // Own keys are asked for only when one is unknown: a plain object's for…in lists its own alone.
  for (const key in value) {
    const item = value[key];
    const field = picked.fields.get(key) ?? picked.rest;
    if (field === undefined) {
      if (item !== undefined && exempt?.includes(key) !== true && Object.hasOwn(value, key)) return true;
    } else if (typeof item === 'object' && item !== null && !checksNothing(field)) {
      if (mayHoldUnknown(item, field, undefined, depth + 1)) return true;
    }
  }
  return false;
}

/**
 * The keys under `value` that its shape does not allow, at any depth, each with its path
 * (dotted, array indexes as numbers: `lines.0.sku`) and the key meant when one is close;
 * undefined when there is none. Keys whose value is `undefined` never came from JSON: skipped.
 */
export function unknownKeysIn(value: unknown, shape: KeyShape, check: KeyCheck): FieldError[] | undefined {
  if (checksNothing(shape) || !mayHoldUnknown(value, shape, check.exempt, 0)) return undefined;
  let found: FieldError[] | undefined;
  // Breadth first and without recursion: top-level keys are reported first, and no body is too deep.
  const pending: Pending[] = [[value, shape, check.path ?? '']];
  for (let head = 0; head < pending.length; head++) {
    const [at, expected, path] = pending[head] as Pending;
    if (Array.isArray(at)) {
      const { items } = expected;
      if (items !== undefined && !checksNothing(items))
        for (let index = 0; index < at.length; index++)
          enqueue(pending, at[index], items, path, String(index));
      continue;
    }
    if (!isRecord(at)) continue;
    const picked = pick(expected, at);
    // No alternative has this discriminator: the validator refuses it with its own message.
    if (picked?.fields === undefined) continue;
    const exempt = head === 0 ? check.exempt : undefined;
    for (const key in at) {
      const item = at[key];
      if (item === undefined || !Object.hasOwn(at, key)) continue;
      const field = picked.fields.get(key) ?? picked.rest;
      if (field !== undefined) enqueue(pending, item, field, path, key);
      else if (exempt?.includes(key) !== true) {
        found ??= [];
        found.push({
          path: join(path, key),
          message: unknownMessage(key, picked.fields, check.noun, exempt),
        });
        // Enough to correct a request; a body of a hundred thousand keys gets no longer answer.
        if (found.length === reportedAtMost) return found;
      }
    }
  }
  return found;
}

/** The most unknown keys one answer lists. */
const reportedAtMost = 20;

type Pending = [value: unknown, shape: KeyShape, path: string];

/** Queues a value that may hold keys; a scalar, or a place where anything goes, has none to check. */
function enqueue(pending: Pending[], value: unknown, shape: KeyShape, path: string, key: string): void {
  if (typeof value === 'object' && value !== null && !checksNothing(shape))
    pending.push([value, shape, join(path, key)]);
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/**
 * `Unknown key`, with the key meant when one is close: `Unknown key; did you mean "title"?`. A
 * path parameter is never the key meant: it comes from the path, and sent here it is refused too.
 */
function unknownMessage(
  key: string,
  fields: ReadonlyMap<string, KeyShape>,
  noun: string,
  exempt: readonly string[] | undefined,
): string {
  const names = [...fields.keys()];
  const meant = closestName(
    key,
    exempt === undefined ? names : names.filter((name) => !exempt.includes(name)),
  );
  const unknown = `Unknown ${noun}`;
  return meant === undefined ? unknown : `${unknown}; did you mean "${meant}"?`;
}

/** Throws a 400 `VALIDATION_FAILED` naming every key under `value` that its shape does not allow. */
export function refuseUnknownKeys(value: unknown, shape: KeyShape, check: KeyCheck): void {
  const found = unknownKeysIn(value, shape, check);
  if (found !== undefined) throw new ValidationError(found);
}
