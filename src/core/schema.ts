/**
 * Everything Proceed needs from a validator: validation through Standard Schema, and JSON
 * Schema through Zod's own converter, Standard JSON Schema (ArkType and others) or Valibot's
 * converter.
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import { z } from 'zod';
import type { FieldError } from './errors.js';
import type { Described, JsonSchema } from './json-schema.js';
import { subschemaLists, subschemaMaps, subschemas } from './subschemas.js';
import { isThenable } from './thenable.js';
import { isValibotSchema, valibotConversionOptions, valibotDate, valibotJsonSchema } from './valibot.js';

export type { JsonSchema, StandardSchemaV1 };

/**
 * Any schema, as a procedure's types take it: the mark every Standard Schema carries. The whole
 * `StandardSchemaV1` interface as a constraint would make the type checker build Zod's
 * `~standard` types for every schema of an API, about a sixth of the type instantiations of its
 * procedures (docs/performance.md, "The type checker").
 */
export interface SchemaLike {
  readonly '~standard': unknown;
}

// Read by indexing rather than `infer`: a pattern with `infer` is a new type on every use.
interface ZodTypes {
  readonly _zod: { readonly input: unknown; readonly output: unknown };
}

/**
 * What a schema accepts, before its transforms and defaults: a Zod schema's own input type, read
 * from its internals (cheaper for the checker than through `~standard`), any other Standard
 * Schema's declared one.
 */
export type SchemaInput<S> = S extends ZodTypes
  ? S['_zod']['input']
  : S extends StandardSchemaV1
    ? StandardSchemaV1.InferInput<S>
    : never;

/** What a schema gives once it has validated: as {@link SchemaInput}, on the other side. */
export type SchemaOutput<S> = S extends ZodTypes
  ? S['_zod']['output']
  : S extends StandardSchemaV1
    ? StandardSchemaV1.InferOutput<S>
    : never;

export type Validation<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

/** A Zod 4 schema, recognised by its internals rather than by `instanceof` (several copies may be loaded). */
export function isZodSchema(schema: unknown): schema is z.ZodType {
  return typeof schema === 'object' && schema !== null && '_zod' in schema;
}

function issuePath(issue: StandardSchemaV1.Issue): string {
  if (issue.path === undefined) return '';
  return issue.path.map((segment) => String(typeof segment === 'object' ? segment.key : segment)).join('.');
}

/** The value an issue is about, read along its path. */
function valueAt(value: unknown, issue: StandardSchemaV1.Issue): unknown {
  let current = value;
  for (const segment of issue.path ?? []) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[typeof segment === 'object' ? segment.key : segment];
  }
  return current;
}

const isoLooking = /^\d{4}-\d{2}-\d{2}/;

/**
 * An issue's message, said plainly where the validator's is misleading: a date the coercer kept
 * as a string because it is not on the calendar (`2020-02-30`) is not "a string instead of a date".
 */
function messageOf(issue: StandardSchemaV1.Issue, input: unknown): string {
  if (issue.message.includes('expected date')) {
    const sent = valueAt(input, issue);
    if (typeof sent === 'string' && isoLooking.test(sent)) return `${sent} is not a date on the calendar`;
  }
  return issue.message;
}

function settle<T>(result: StandardSchemaV1.Result<T>, input: unknown): Validation<T> {
  if (result.issues === undefined) return { ok: true, value: result.value };
  return {
    ok: false,
    errors: result.issues.map((issue) => ({ path: issuePath(issue), message: messageOf(issue, input) })),
  };
}

/**
 * Validates through the Standard Schema interface. Stays synchronous when the validator is, so
 * the common case costs no promise.
 */
export function validate<T>(
  schema: StandardSchemaV1<unknown, T>,
  value: unknown,
): Validation<T> | Promise<Validation<T>> {
  let result: ReturnType<StandardSchemaV1<unknown, T>['~standard']['validate']>;
  try {
    result = schema['~standard'].validate(value);
  } catch (error) {
    if (tooDeep(error)) return nestedTooDeeply;
    throw error;
  }
  return isThenable(result)
    ? Promise.resolve(result).then(
        (settled) => settle(settled as StandardSchemaV1.Result<T>, value),
        (error: unknown) => {
          if (tooDeep(error)) return nestedTooDeeply;
          throw error;
        },
      )
    : settle(result, value);
}

/**
 * A value nested deeper than a validator's recursion goes (a recursive schema given a body of
 * thousands of levels, well within the size limit) fails as the input's fault, not as a crash.
 */
const nestedTooDeeply: Validation<never> = {
  ok: false,
  errors: [{ path: '', message: 'The value is nested too deeply to be checked' }],
};

/** The engine's stack overflow (V8's and JavaScriptCore's message), not another RangeError. */
const tooDeep = (error: unknown): boolean =>
  error instanceof RangeError && /maximum call stack size/i.test(error.message);

function zodDefType(schema: z.ZodType): string {
  return (schema._zod.def as { type: string }).type;
}

/** Zod dates become `string`/`date-time`, as they travel in JSON. */
function describeDates(ctx: { zodSchema: unknown; jsonSchema: JsonSchema }): void {
  if (isZodSchema(ctx.zodSchema) && zodDefType(ctx.zodSchema) === 'date') {
    ctx.jsonSchema.type = 'string';
    ctx.jsonSchema.format = 'date-time';
  }
}

export interface JsonSchemaOptions {
  /** `input` describes what a client sends, `output` what the server answers. */
  io: 'input' | 'output';
  /**
   * Lift schemas registered with `.meta({ id })` into `$defs` (the OpenAPI generator's
   * components). Off: everything is inlined.
   */
  named?: boolean;
  /** Rewrites the JSON Schema of one Zod schema once converted (after dates are described). */
  override?: (zodSchema: unknown, jsonSchema: JsonSchema) => void;
}

/**
 * Conversions already made, by schema, then `override` (each its own), then `io` and `named`: a
 * procedure's input is converted for its coercion, its unknown keys, its OpenAPI operation and its
 * MCP tool alike, and a view is shared by several procedures, while Zod takes about 0.4 ms a
 * conversion (three in four of the blog's at start were repeats: docs/performance.md). Zod's
 * schemas do not change once made (`.meta()` makes another); one registered in a registry with
 * `.register()` after its first conversion keeps that conversion.
 */
const conversions = new WeakMap<object, Map<JsonSchemaOptions['override'], Map<string, JsonSchema>>>();

/**
 * The JSON Schema (draft 2020-12) of a schema, or `{}` when the validator cannot describe itself.
 * Each call gets a copy of its own, free to change.
 *
 * @example
 * toJsonSchema(z.object({ limit: z.number().int() }), { io: 'input' })
 */
export function toJsonSchema(schema: StandardSchemaV1, options: JsonSchemaOptions): JsonSchema {
  let byOverride = conversions.get(schema);
  if (byOverride === undefined) {
    byOverride = new Map();
    conversions.set(schema, byOverride);
  }
  let byOptions = byOverride.get(options.override);
  if (byOptions === undefined) {
    byOptions = new Map();
    byOverride.set(options.override, byOptions);
  }
  const key = options.named === true ? `${options.io} named` : options.io;
  let converted = byOptions.get(key);
  if (converted === undefined) {
    converted = convert(schema, options);
    byOptions.set(key, converted);
  }
  return structuredClone(converted);
}

function convert(schema: StandardSchemaV1, options: JsonSchemaOptions): JsonSchema {
  if (isZodSchema(schema)) {
    const result = z.toJSONSchema(schema, {
      io: options.io,
      target: 'draft-2020-12',
      unrepresentable: 'any',
      override: (ctx: { zodSchema: unknown; jsonSchema: JsonSchema }) => {
        describeDates(ctx);
        if (
          options.io === 'output' &&
          isZodSchema(ctx.zodSchema) &&
          zodDefType(ctx.zodSchema) === 'transform'
        )
          transformedOutputs.add(schema);
        options.override?.(ctx.zodSchema, ctx.jsonSchema);
      },
      ...(options.named === true ? {} : { metadata: withoutIds, reused: 'inline' as const }),
    }) as JsonSchema;
    delete result.$schema;
    return result;
  }
  const described = standardJsonSchema(schema, options.io);
  return 'json' in described ? canonical(described.json, options.io) : {};
}

/** Zod schemas whose output conversion met a `.transform()` (recorded as it is made, once). */
const transformedOutputs = new WeakSet<object>();

/**
 * Whether a Zod schema's output passes through a `.transform()` (its output's JSON Schema is then
 * `{}` there: nothing a writer could cut the value by). Read from its output conversion, made now
 * if it was not (cached, as every conversion is). Other validators: false.
 */
export function transformsItsOutput(schema: StandardSchemaV1): boolean {
  if (!isZodSchema(schema)) return false;
  toJsonSchema(schema, { io: 'output' });
  return transformedOutputs.has(schema);
}

/** A local reference (`#`, `#/$defs/name`) read against the schema's root; any other is not followed. */
export function resolveLocalRef(ref: string, root: JsonSchema): unknown {
  if (!ref.startsWith('#')) return undefined;
  let current: unknown = root;
  for (const part of ref.slice(1).split('/').slice(1)) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as JsonSchema)[part.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  return current;
}

/**
 * Writes what every validator means alike as Zod writes it, so that the same API gives the same
 * document, coercion and strictness whichever validator it is written with: a union of bare types
 * as one `type` list (`string | null`), an enum of strings typed `string`, no empty `required`,
 * and an answer's object closed to keys it does not name (the serializer writes those alone).
 */
function canonical(schema: JsonSchema, io: 'input' | 'output', partOfAll = false): JsonSchema {
  const node: JsonSchema = { ...schema };
  delete (node as Record<symbol, unknown>)[valibotDate];
  for (const key of subschemaLists)
    if (Array.isArray(node[key]))
      node[key] = (node[key] as unknown[]).map((part) => canonicalPart(part, io, key === 'allOf'));
  for (const key of subschemaMaps)
    if (isJsonObject(node[key]))
      node[key] = Object.fromEntries(
        Object.entries(node[key] as JsonSchema).map(([name, part]) => [name, canonicalPart(part, io)]),
      );
  for (const key of subschemas)
    if (isJsonObject(node[key])) node[key] = canonical(node[key] as JsonSchema, io);
  const alternatives = node.anyOf as JsonSchema[] | undefined;
  if (
    alternatives?.every(isBareType) &&
    Object.keys(node).every((key) => key === 'anyOf' || annotations.has(key))
  ) {
    const { anyOf: _alternatives, ...annotated } = node;
    return {
      type: alternatives.flatMap((alternative) => alternative.type as string | string[]),
      ...annotated,
    };
  }
  if (
    Array.isArray(node.enum) &&
    node.type === undefined &&
    node.enum.every((value) => typeof value === 'string')
  )
    node.type = 'string';
  if (Array.isArray(node.required) && node.required.length === 0) delete node.required;
  // A part of an `allOf` closed to its own keys would refuse the other parts' (an intersection).
  if (
    io === 'output' &&
    !partOfAll &&
    node.allOf === undefined &&
    isJsonObject(node.properties) &&
    node.additionalProperties === undefined
  )
    node.additionalProperties = false;
  return node;
}

/** Keywords that describe a schema without changing what it accepts. */
const annotations: ReadonlySet<string> = new Set([
  'description',
  'title',
  'default',
  'examples',
  'deprecated',
]);

function canonicalPart(part: unknown, io: 'input' | 'output', partOfAll = false): unknown {
  return isJsonObject(part) ? canonical(part, io, partOfAll) : part;
}

function isJsonObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `{ type: 'string' }` and nothing else. */
function isBareType(schema: JsonSchema): boolean {
  return Object.keys(schema).length === 1 && (typeof schema.type === 'string' || Array.isArray(schema.type));
}

/**
 * Why a schema cannot describe itself as JSON Schema, or undefined when it can. Proceed needs
 * the description to coerce a query string and to write the OpenAPI document, and refuses a
 * route at start-up where it is missing (docs/procedures.md, "Validators").
 */
export function whyNoJsonSchema(schema: StandardSchemaV1, io: 'input' | 'output'): string | undefined {
  if (isZodSchema(schema)) return undefined;
  const described = standardJsonSchema(schema, io);
  return 'json' in described ? undefined : described.missing;
}

/**
 * A schema's JSON Schema as its converter wrote it, before Proceed's canonical form: where a
 * converter marks nodes (Valibot's dates), they are these very objects.
 */
export function convertedJsonSchema(
  schema: StandardSchemaV1,
  io: 'input' | 'output',
): JsonSchema | undefined {
  const described = standardJsonSchema(schema, io);
  return 'json' in described ? described.json : undefined;
}

function standardJsonSchema(schema: StandardSchemaV1, io: 'input' | 'output'): Described {
  const standard = (schema as unknown as Partial<StandardJSONSchemaV1>)['~standard'];
  const vendor = String(standard?.vendor ?? 'unknown');
  if (standard?.jsonSchema !== undefined) {
    try {
      const { $schema: _dialect, ...json } = standard.jsonSchema[io]({
        target: 'draft-2020-12',
        ...(vendor === 'valibot' ? { libraryOptions: valibotConversionOptions(io) } : {}),
      });
      return { json };
    } catch (error) {
      return {
        missing: `its ${vendor} schema cannot be written as JSON Schema (${(error as Error).message})`,
      };
    }
  }
  if (isValibotSchema(schema)) return valibotJsonSchema(schema, io);
  return {
    missing: `its validator (${vendor}) does not describe itself as JSON Schema (Standard JSON Schema, "~standard.jsonSchema"); Zod, ArkType and Valibot do`,
  };
}

/** The global registry minus `id`s: descriptions and examples stay, named components are inlined. */
const withoutIds = {
  get(schema: z.core.$ZodType) {
    const meta = z.globalRegistry.get(schema);
    if (meta === undefined || !('id' in meta)) return meta;
    const { id: _id, ...rest } = meta;
    return rest;
  },
  has: (schema: z.core.$ZodType) => z.globalRegistry.has(schema),
} as unknown as z.core.$ZodRegistry<{ id?: string }>;

/** Zod types that wrap one inner schema and check nothing of its shape themselves. */
export const wrapperTypes: ReadonlySet<string> = new Set([
  'optional',
  'nullable',
  'default',
  'prefault',
  'catch',
  'readonly',
  'nonoptional',
]);

/** The type a Zod schema checks once its optional/default/nullable wrappers are peeled off. */
export function innerZodType(schema: z.ZodType): { type: string; schema: z.ZodType } {
  let current = schema;
  for (let depth = 0; depth < 16; depth++) {
    const def = current._zod.def as { type: string; innerType?: z.ZodType; in?: z.ZodType };
    if (wrapperTypes.has(def.type) && def.innerType !== undefined) current = def.innerType;
    else if (def.type === 'pipe' && def.in !== undefined) current = def.in;
    else break;
  }
  return { type: zodDefType(current), schema: current };
}
