/**
 * Query strings and path parameters arrive as strings. The coercer turns them into what the
 * input schema expects, derived once per route from the schema, never guessed per request.
 * A value that cannot be converted is left as it is, so the validator reports it as a 400.
 */

import type { z } from 'zod';
import { type DateWalker, datePlacesOf, dateWalker } from './date-places.js';
import { innerZodType, isZodSchema, type JsonSchema, type StandardSchemaV1, toJsonSchema } from './schema.js';

type Scalar = 'number' | 'boolean' | 'number or boolean' | 'date' | 'string';
type FieldCoercion = { scalar: Scalar; array: boolean };

export type Coercer = (raw: Record<string, unknown>) => Record<string, unknown>;

const numeric = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
/** ISO 8601 calendar date, optionally with a time and zone. */
const isoDate =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:[Zz]|[+-](\d{2}):?(\d{2}))?)?$/;

/**
 * An ISO 8601 date that exists on the calendar, as a Date; otherwise the string, for the schema to
 * refuse with a 400 naming the field. `Date` alone rolls `2020-02-30` over to 1 March.
 */
function calendarDate(value: string): Date | string {
  const parts = isoDate.exec(value);
  if (parts === null) return value;
  const [year, month, day, hour = 0, minute = 0, second = 0, offsetHours = 0, offsetMinutes = 0] = parts
    .slice(1)
    .map((part) => (part === undefined ? undefined : Number(part)));
  // setUTCFullYear, not Date.UTC: the latter reads years 0–99 as 1900–1999.
  const lastDay = new Date(0);
  lastDay.setUTCFullYear(year ?? 0, month ?? 0, 0);
  const daysInMonth = lastDay.getUTCDate();
  const exists =
    month !== undefined &&
    month >= 1 &&
    month <= 12 &&
    day !== undefined &&
    day >= 1 &&
    day <= daysInMonth &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offsetHours <= 23 &&
    offsetMinutes <= 59;
  if (!exists) return value;
  // A time without an offset would be read in the server's own time zone, so one instance's
  // 10:00 would be another's 14:00: it is UTC, as a date alone is (docs/procedures.md).
  const date = new Date(
    parts[4] !== undefined && !zoned.test(value) ? `${value.slice(0, 10)}T${value.slice(11)}Z` : value,
  );
  return Number.isNaN(date.getTime()) ? value : date;
}

/** A time's zone at the end of an ISO 8601 date-time: `Z`, or an offset. */
const zoned = /(?:[Zz]|[+-]\d{2}:?\d{2})$/;

function coerceScalar(value: string, scalar: Scalar): unknown {
  switch (scalar) {
    case 'number':
      return numeric.test(value) ? Number(value) : value;
    case 'number or boolean':
      if (value === 'true') return true;
      if (value === 'false') return false;
      return numeric.test(value) ? Number(value) : value;
    case 'boolean':
      if (value === 'true' || value === '1') return true;
      if (value === 'false' || value === '0') return false;
      return value;
    case 'date':
      return calendarDate(value);
    case 'string':
      return value;
  }
}

/**
 * What a field's schema takes, as the coercer reads it: `number`, `boolean` or both (a union of
 * `z.number()` and `z.boolean()`, or of their literals); `string` when a free string is among the
 * options, so that text stays text (`"007"` is not read as 7). A literal string option (`'all'`
 * beside a number) leaves the rest as it is: `"all"` matches it as sent.
 */
function scalarOfJson(schema: JsonSchema | undefined): Scalar | undefined {
  if (schema === undefined) return undefined;
  const kinds = new Set<string>();
  if (!scalarKinds(schema, kinds)) return undefined;
  if (kinds.has('string')) return 'string';
  const number = kinds.has('number');
  const boolean = kinds.has('boolean');
  if (number && boolean) return 'number or boolean';
  if (number) return 'number';
  if (boolean) return 'boolean';
  return kinds.has('string literal') ? 'string' : undefined;
}

/** Adds the kinds of scalar a schema (or each of its union's options) takes; false for any other. */
function scalarKinds(schema: JsonSchema, kinds: Set<string>): boolean {
  const options = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (options !== undefined) return options.every((option) => scalarKinds(option, kinds));
  const types = Array.isArray(schema.type) ? schema.type : [schema.type ?? kindOfConstant(schema.const)];
  for (const type of types) {
    if (type === 'integer' || type === 'number') kinds.add('number');
    else if (type === 'boolean') kinds.add('boolean');
    else if (type === 'string')
      kinds.add(schema.const !== undefined || schema.enum !== undefined ? 'string literal' : 'string');
    else if (type !== 'null') return false;
  }
  return true;
}

function kindOfConstant(value: unknown): string | undefined {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return typeof value;
  return value === null ? 'null' : undefined;
}

/** A field's schema without the `null` a nullable field adds beside it. */
function withoutNull(schema: JsonSchema): JsonSchema {
  const options = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  const others = options?.filter((option) => option.type !== 'null');
  return others?.length === 1 && others[0] !== undefined ? withoutNull(others[0]) : schema;
}

function fieldOfJson(field: JsonSchema): FieldCoercion | undefined {
  const schema = withoutNull(field);
  if (schema.type === 'array') {
    const scalar = scalarOfJson(schema.items as JsonSchema | undefined) ?? 'string';
    return { scalar, array: true };
  }
  const scalar = scalarOfJson(schema);
  return scalar === undefined ? undefined : { scalar, array: false };
}

interface ObjectOption {
  readonly properties: Record<string, JsonSchema>;
  /** It takes keys beside its properties (`additionalProperties` other than false). */
  readonly open: boolean;
}

/** An object schema, or each object among a union's (or an intersection's) options. */
function objectsOf(json: JsonSchema): ObjectOption[] {
  const option = (schema: JsonSchema): ObjectOption => ({
    properties: (schema.properties ?? {}) as Record<string, JsonSchema>,
    open: schema.additionalProperties !== undefined && schema.additionalProperties !== false,
  });
  if (json.properties !== undefined) return [option(json)];
  // The parts of an intersection all apply: one that takes any key takes another's as it is.
  const parts = json.allOf as JsonSchema[] | undefined;
  if (parts !== undefined) return parts.map((part) => ({ ...option(part), open: false }));
  const options = (json.anyOf ?? json.oneOf) as JsonSchema[] | undefined;
  return (options ?? []).flatMap((each) =>
    each.properties === undefined && each.additionalProperties === undefined ? [] : [option(each)],
  );
}

/** Per-field coercions of an object input schema. Exposed for the tests and the OpenAPI generator. */
export function coercionPlan(schema: StandardSchemaV1): Map<string, FieldCoercion> {
  const plan = new Map<string, FieldCoercion>();
  const json = toJsonSchema(schema, { io: 'input' });
  // A union of objects (a discriminated union among them) is coerced by the fields its options
  // agree on: a field a number in one and text in another is left as sent, for its option to read.
  const disagreed = new Set<string>();
  const objects = objectsOf(json);
  for (const { properties } of objects) {
    for (const [key, property] of Object.entries(properties)) {
      if (disagreed.has(key)) continue;
      const field = fieldOfJson(property) ?? { scalar: 'string', array: false };
      const known = plan.get(key);
      if (known === undefined) plan.set(key, field);
      else if (known.scalar !== field.scalar || known.array !== field.array) {
        plan.delete(key);
        disagreed.add(key);
      }
    }
  }
  // An option that takes any key (a loose object, a catchall, a record) takes this one as text.
  if (objects.length > 1)
    for (const key of plan.keys())
      if (objects.some(({ properties, open }) => open && !Object.hasOwn(properties, key))) plan.delete(key);
  for (const [key, field] of plan) if (field.scalar === 'string' && !field.array) plan.delete(key);
  const dates = datePlacesOf(schema);
  if (dates !== undefined && dates !== true && 'fields' in dates)
    for (const [key, places] of dates.fields) {
      if (places === true) plan.set(key, { scalar: 'date', array: false });
      else if ('items' in places && places.items === true) plan.set(key, { scalar: 'date', array: true });
    }
  return plan;
}

/**
 * The first field of a query input that no query string can carry: an object (a record among
 * them), or an array of objects or arrays. Its REST route could never be called (an MCP tool's
 * JSON arguments could carry it, but the route is the procedure's first face), so it is refused
 * when it is mounted (docs/procedures.md, "Query-string coercion"). Undefined when every field can.
 */
export function fieldNoQueryCarries(schema: StandardSchemaV1): { key: string; what: string } | undefined {
  const json = toJsonSchema(schema, { io: 'input' });
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  for (const [key, property] of Object.entries(properties)) {
    const field = withoutNull(property);
    if (takesOnly(field, ['object'])) return { key, what: 'an object' };
    if (
      field.type === 'array' &&
      takesOnly((field.items as JsonSchema | undefined) ?? {}, ['object', 'array'])
    )
      return { key, what: 'an array of objects or arrays' };
  }
  return undefined;
}

/** Whether a schema (each of its union's options, a `null` aside) is only of these types. */
function takesOnly(schema: JsonSchema, types: readonly string[]): boolean {
  const options = ((schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined)?.filter(
    (option) => option.type !== 'null',
  );
  if (options !== undefined) return options.length > 0 && options.every((option) => takesOnly(option, types));
  const own = Array.isArray(schema.type) ? schema.type.filter((type) => type !== 'null') : [schema.type];
  return own.length > 0 && own.every((type) => typeof type === 'string' && types.includes(type));
}

/**
 * Builds the coercer for an input schema. Keys the schema does not describe stay strings;
 * repeated keys arrive as arrays and stay arrays only where the schema wants one. A discriminated
 * union is coerced by the option its discriminator names, as sent.
 */
export function createCoercer(schema: StandardSchemaV1 | undefined): Coercer {
  if (schema === undefined) return (raw) => raw;
  const tagged = taggedPlans(toJsonSchema(schema, { io: 'input' }));
  if (tagged !== undefined)
    return (raw) => {
      const plan = tagged.byValue.get(String(raw[tagged.key]));
      return plan === undefined ? raw : applyPlan(raw, plan);
    };
  const plan = [...coercionPlan(schema)];
  if (plan.length === 0) return (raw) => raw;
  return (raw) => applyPlan(raw, plan);
}

function applyPlan(
  raw: Record<string, unknown>,
  plan: Iterable<[string, FieldCoercion]>,
): Record<string, unknown> {
  for (const [key, { scalar, array }] of plan) {
    const value = raw[key];
    if (value === undefined) continue;
    if (array) {
      const values = Array.isArray(value) ? value : [value];
      raw[key] = values.map((item) => (typeof item === 'string' ? coerceScalar(item, scalar) : item));
    } else if (typeof value === 'string') {
      raw[key] = coerceScalar(value, scalar);
    }
  }
  return raw;
}

/**
 * The plans of a discriminated union, by its discriminator's value as text (`?kind=circle`): the
 * key every option gives one constant of its own. Undefined for any other schema.
 */
function taggedPlans(
  json: JsonSchema,
): { key: string; byValue: Map<string, Array<[string, FieldCoercion]>> } | undefined {
  const options = (json.anyOf ?? json.oneOf) as JsonSchema[] | undefined;
  if (options === undefined || options.length < 2) return undefined;
  const propertiesOf = options.map((option) => option.properties as Record<string, JsonSchema> | undefined);
  const [first] = propertiesOf;
  if (first === undefined || propertiesOf.some((properties) => properties === undefined)) return undefined;
  const constantOf = (property: JsonSchema | undefined): string | undefined => {
    const value =
      property?.const ??
      (Array.isArray(property?.enum) && property.enum.length === 1 ? property.enum[0] : undefined);
    return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
      ? String(value)
      : undefined;
  };
  for (const key of Object.keys(first)) {
    const values = propertiesOf.map((properties) => constantOf(properties?.[key]));
    if (values.some((value) => value === undefined) || new Set(values).size !== values.length) continue;
    const byValue = new Map<string, Array<[string, FieldCoercion]>>();
    propertiesOf.forEach((properties, index) => {
      const plan: Array<[string, FieldCoercion]> = [];
      for (const [name, property] of Object.entries(properties ?? {})) {
        const field = fieldOfJson(property);
        if (field !== undefined && !(field.scalar === 'string' && !field.array)) plan.push([name, field]);
      }
      byValue.set(values[index] as string, plan);
    });
    return { key, byValue };
  }
  return undefined;
}

/** The fields a coercer of this schema turns from text: any option's, for a discriminated union. */
function coercedKeys(schema: StandardSchemaV1): Set<string> {
  const keys = new Set(coercionPlan(schema).keys());
  const tagged = taggedPlans(toJsonSchema(schema, { io: 'input' }));
  for (const plan of tagged?.byValue.values() ?? []) for (const [key] of plan) keys.add(key);
  return keys;
}

function parseIsoDate(value: unknown): unknown {
  return typeof value === 'string' ? calendarDate(value) : value;
}

/**
 * JSON has no dates, so a `z.date()` (or `v.date()`) in a body could never be satisfied as sent.
 * This turns ISO 8601 strings into Dates exactly where the input schema declares a date, at any
 * depth (src/core/date-places.ts), and touches nothing else. Other validators get the body as sent.
 */
export function createBodyDateCoercer(schema: StandardSchemaV1 | undefined): DateWalker {
  const places = schema === undefined ? undefined : datePlacesOf(schema);
  return places === undefined ? (value) => value : dateWalker(places, parseIsoDate);
}

/**
 * The first field of a Zod object input declared with `z.coerce` of a type Proceed coerces itself
 * (through its wrappers, a pipe's either side and an array's items): in a query string, a form or
 * a path, where Proceed coerces strictly, it would coerce again, loosely (`z.coerce.boolean()`
 * reads `no` and `0` as true, `z.coerce.number()` an empty value as 0). `keys` limits the fields
 * looked at (a body route's path parameters). Undefined for any other input.
 */
export function zodCoercedField(
  schema: StandardSchemaV1,
  keys?: readonly string[],
): { key: string; type: string } | undefined {
  if (!isZodSchema(schema)) return undefined;
  // Only where Proceed turns the text itself: `z.coerce.date()` in a union it reads as text is
  // the schema's only way to a date.
  const coerced = coercedKeys(schema);
  const looked = keys === undefined ? [...coerced] : keys.filter((key) => coerced.has(key));
  return coercedFieldOf(schema as z.ZodType, looked, 0);
}

/** The first `z.coerce` field of an object, or of any object among a union's options. */
function coercedFieldOf(
  schema: z.ZodType,
  keys: readonly string[] | undefined,
  depth: number,
): { key: string; type: string } | undefined {
  if (depth > 16) return undefined;
  const { type, schema: inner } = innerZodType(schema);
  const def = inner._zod.def as { shape?: Record<string, z.ZodType>; options?: z.ZodType[] };
  if (type === 'union')
    for (const option of def.options ?? []) {
      const found = coercedFieldOf(option, keys, depth + 1);
      if (found !== undefined) return found;
    }
  if (type !== 'object') return undefined;
  for (const [key, field] of Object.entries(def.shape ?? {})) {
    if (keys !== undefined && !keys.includes(key)) continue;
    const coerced = coercedType(field, 0);
    if (coerced !== undefined) return { key, type: coerced };
  }
  return undefined;
}

function coercedType(schema: z.ZodType, depth: number): string | undefined {
  if (depth > 16) return undefined;
  const def = schema._zod.def as {
    type: string;
    coerce?: boolean;
    innerType?: z.ZodType;
    element?: z.ZodType;
    in?: z.ZodType;
    out?: z.ZodType;
  };
  if (def.coerce === true) return strictlyCoerced.has(def.type) ? def.type : undefined;
  if (def.type === 'union')
    for (const option of (def as { options?: z.ZodType[] }).options ?? []) {
      const found = coercedType(option, depth + 1);
      if (found !== undefined) return found;
    }
  if (def.type === 'pipe')
    return (
      (def.in === undefined ? undefined : coercedType(def.in, depth + 1)) ??
      (def.out === undefined ? undefined : coercedType(def.out, depth + 1))
    );
  const next = def.type === 'array' ? def.element : def.innerType;
  return next === undefined ? undefined : coercedType(next, depth + 1);
}

/** The types Proceed turns text into itself: `z.coerce` of any other (a bigint) is the only way. */
const strictlyCoerced: ReadonlySet<string> = new Set(['number', 'boolean', 'date']);
