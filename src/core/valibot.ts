/**
 * Valibot schemas as users write them (`v.object(…)`): Valibot implements Standard Schema but not
 * Standard JSON Schema, so its JSON Schema comes from `@valibot/to-json-schema`, an optional peer
 * dependency, loaded the first time a Valibot schema is met (docs/procedures.md, "Validators").
 * The conversion is adjusted where Valibot's converter and Proceed's rules differ, so that the
 * same API written with Zod or Valibot has the same document, coercion and strictness.
 */
import type { DatePlaces, Described, JsonSchema } from './json-schema.js';

/** What Proceed reads of a Valibot schema: its `type`, a wrapper's schema and default, an object's entries. */
interface ValibotNode {
  readonly type: string;
  readonly wrapped?: ValibotNode;
  readonly entries?: Readonly<Record<string, ValibotNode>>;
  readonly default?: unknown;
}

interface ConversionContext {
  readonly valibotSchema: ValibotNode;
  readonly jsonSchema: JsonSchema;
}

interface Converter {
  toJsonSchema(
    schema: unknown,
    config: {
      target: 'draft-2020-12';
      typeMode: 'input' | 'output';
      errorMode: 'ignore';
      overrideSchema: (context: ConversionContext) => JsonSchema | undefined;
    },
  ): JsonSchema;
}

const converterPackage = '@valibot/to-json-schema';

/** A Valibot schema, recognised by the vendor its Standard Schema interface names. */
export function isValibotSchema(schema: unknown): boolean {
  return (schema as { '~standard'?: { vendor?: unknown } } | undefined)?.['~standard']?.vendor === 'valibot';
}

let loaded: Converter | { missing: string } | undefined;

/**
 * The converter, loaded synchronously so that routes compile when they are mounted: through
 * `require`, which Node (20.16 and later), Bun and Deno offer to ES modules by
 * `process.getBuiltinModule`. Where it is missing, the reason says what to do instead.
 */
function converter(): Converter | { missing: string } {
  loaded ??= load();
  return loaded;
}

function load(): Converter | { missing: string } {
  const wrap = `wrap the schema with its toStandardJsonSchema() (docs/procedures.md, "Validators")`;
  let modules: typeof import('node:module') | undefined;
  try {
    modules = (
      globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
    ).process?.getBuiltinModule?.('node:module') as typeof import('node:module') | undefined;
  } catch {
    modules = undefined;
  }
  if (modules === undefined)
    return { missing: `this runtime cannot load ${converterPackage} by itself: ${wrap}` };
  try {
    return modules.createRequire(import.meta.url)(converterPackage) as Converter;
  } catch (error) {
    return {
      missing: `${converterPackage} could not be loaded (${(error as Error).message}): install it (an optional peer dependency of proceedjs), or ${wrap}`,
    };
  }
}

/**
 * Marks the JSON Schema node written for `v.date()`, where a value is coerced to a Date. A symbol
 * key: the converter copies each node it is given, and a copy keeps it; JSON never shows it.
 */
export const valibotDate = Symbol('proceed.valibotDate');

function isDateNode(node: unknown): boolean {
  return typeof node === 'object' && node !== null && (node as Record<symbol, unknown>)[valibotDate] === true;
}

/** Where Valibot's converter and Proceed's rules (the ones Zod's schemas follow) part. */
function adjust(io: 'input' | 'output') {
  return ({ valibotSchema, jsonSchema }: ConversionContext): JsonSchema | undefined => {
    switch (valibotSchema.type) {
      // Dates travel in JSON as ISO 8601 strings; query values and bodies are coerced to them.
      case 'date':
        return { type: 'string', format: 'date-time', [valibotDate]: true };
      // A loose object takes any other key: say so, as an object that only names its keys is strict.
      case 'loose_object':
        return { ...jsonSchema, additionalProperties: {} };
      case 'object':
        return io === 'output' ? withOutputDefaults(valibotSchema, jsonSchema) : undefined;
      default:
        return undefined;
    }
  };
}

/**
 * An object's answer never holds a key it does not name (unknown keys are dropped), and a key
 * with a default is always there.
 */
function withOutputDefaults(schema: ValibotNode, jsonSchema: JsonSchema): JsonSchema {
  const required = new Set((jsonSchema.required as string[] | undefined) ?? []);
  for (const [key, entry] of Object.entries(schema.entries ?? {}))
    if (entry.wrapped !== undefined && entry.default !== undefined) required.add(key);
  const properties = Object.keys(schema.entries ?? {});
  return {
    ...jsonSchema,
    required: properties.filter((key) => required.has(key)),
    additionalProperties: false,
  };
}

/**
 * What a schema wrapped with the converter's `toStandardJsonSchema()` is converted with: the same
 * adjustments as a plain one, so wrapping changes nothing in the document or the rules.
 */
export function valibotConversionOptions(io: 'input' | 'output'): Record<string, unknown> {
  return { errorMode: 'ignore', overrideSchema: adjust(io) };
}

/**
 * A Valibot schema's JSON Schema (draft 2020-12), or the reason it has none. Parts JSON Schema
 * cannot say (a transform, a custom check) are described by what they accept before them, or `{}`.
 */
export function valibotJsonSchema(schema: unknown, io: 'input' | 'output'): Described {
  const loadedConverter = converter();
  if ('missing' in loadedConverter) return loadedConverter;
  try {
    const json = loadedConverter.toJsonSchema(schema, {
      target: 'draft-2020-12',
      typeMode: io,
      errorMode: 'ignore',
      overrideSchema: adjust(io),
    });
    delete json.$schema;
    return { json };
  } catch (error) {
    return { missing: `its valibot schema cannot be written as JSON Schema (${(error as Error).message})` };
  }
}

/**
 * The places of `v.date()` in a Valibot input's JSON Schema (as Proceed converts it, plain or
 * wrapped with `toStandardJsonSchema()`), at any depth; undefined when there are none.
 */
export function valibotDatePlaces(json: JsonSchema, depth = 0): DatePlaces | undefined {
  if (depth > 32) return undefined;
  if (isDateNode(json)) return true;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const alternatives = json[key];
    // A date that may be null or absent is still a date where it is there.
    if (Array.isArray(alternatives) && alternatives.some(isDateNode)) return true;
  }
  const { items, properties } = json as { items?: JsonSchema; properties?: Record<string, JsonSchema> };
  if (json.type === 'array' && typeof items === 'object' && items !== null) {
    const inner = valibotDatePlaces(items, depth + 1);
    return inner === undefined ? undefined : { items: inner };
  }
  if (typeof properties !== 'object' || properties === null) return undefined;
  const fields = new Map<string, DatePlaces>();
  for (const [key, property] of Object.entries(properties)) {
    const places =
      typeof property === 'object' && property !== null ? valibotDatePlaces(property, depth + 1) : undefined;
    if (places !== undefined) fields.set(key, places);
  }
  return fields.size === 0 ? undefined : { fields };
}
