/**
 * Views chosen per record (docs/views.md, "Per record: the owner's view"). An output schema made
 * by {@link recordViewSchema} stands for "each record in the view its caller may see of it":
 * before an answer is written, every record in such a place is cut down to the fields of the
 * view chosen for it, so the serializer compiled from the schema writes only those.
 */
import { z } from 'zod';
import { isZodSchema, type JsonSchema, wrapperTypes } from './schema.js';

/** Picks, for one record and the request's context, which of the views it is shown in. */
export type ChooseView = (record: Record<string, unknown>, ctx: unknown) => string;

/** The views of one per-record schema, lowest first, and how one is chosen. */
export interface RecordViews {
  /** Each view's name, its fields and which of them it requires, lowest view first. */
  readonly views: readonly { name: string; keys: readonly string[]; required: ReadonlySet<string> }[];
  readonly choose: ChooseView;
}

const recordViews = new WeakMap<object, RecordViews>();

/**
 * A Zod schema for "a record in the view `choose` picks for it": a union of the views, the widest
 * first (Zod's union keeps the first that fits, which for a record already cut down to its view is
 * that view), documented in OpenAPI as `anyOf` the views.
 */
export function recordViewSchema<V extends readonly [z.ZodObject, ...z.ZodObject[]]>(
  views: { readonly [I in keyof V]: { name: string; schema: V[I] } },
  choose: ChooseView,
): z.ZodUnion<V> {
  const widestFirst = [...views].reverse().map((view) => view.schema);
  const schema = z.union(widestFirst as unknown as V);
  recordViews.set(schema, {
    views: views.map(({ name, schema: view }) => ({
      name,
      keys: Object.keys(view.shape),
      required: new Set(
        Object.entries(view.shape)
          .filter(([, field]) => !(field as z.ZodType).safeParse(undefined).success)
          .map(([key]) => key),
      ),
    })),
    choose,
  });
  return schema;
}

/** The views of a per-record schema, or undefined for any other schema. */
export function recordViewsOf(schema: unknown): RecordViews | undefined {
  return typeof schema === 'object' && schema !== null ? recordViews.get(schema) : undefined;
}

/** Where records sit in an answer: the places a projection walks, and nothing else. */
type Place =
  | { kind: 'record'; views: RecordViews }
  | { kind: 'object'; fields: ReadonlyMap<string, Place> }
  | { kind: 'array'; item: Place };

type Def = {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  innerType?: z.ZodType;
  out?: z.ZodType;
  in?: z.ZodType;
  options?: readonly z.ZodType[];
  left?: z.ZodType;
  right?: z.ZodType;
  valueType?: z.ZodType;
  keyType?: z.ZodType;
  items?: readonly z.ZodType[];
  rest?: z.ZodType | null;
};

/** Every schema directly inside `schema`, to find per-record views where they cannot be cut. */
function childrenOf(def: Def): z.ZodType[] {
  const children: (z.ZodType | null | undefined)[] = [
    ...Object.values(def.shape ?? {}),
    def.element,
    def.innerType,
    def.in,
    def.out,
    ...(def.options ?? []),
    def.left,
    def.right,
    def.keyType,
    def.valueType,
    ...(def.items ?? []),
    def.rest,
  ];
  return children.filter((child): child is z.ZodType => isZodSchema(child));
}

function containsRecordViews(schema: z.ZodType, seen: Set<unknown>): boolean {
  if (seen.has(schema)) return false;
  seen.add(schema);
  if (recordViews.has(schema)) return true;
  return childrenOf(schema._zod.def as Def).some((child) => containsRecordViews(child, seen));
}

/**
 * The places of per-record views in an output schema (undefined when it has none). They may sit
 * at the top, in object fields and in arrays, through optional, nullable and default; anywhere
 * else (a union of envelopes, a record map, a tuple) is refused when the route is compiled.
 */
function placeOf(schema: z.ZodType, where: string): Place | undefined {
  const views = recordViews.get(schema);
  if (views !== undefined) return { kind: 'record', views };
  const def = schema._zod.def as Def;
  if (wrapperTypes.has(def.type) && def.innerType !== undefined) return placeOf(def.innerType, where);
  if (def.type === 'pipe' && def.out !== undefined) return placeOf(def.out, where);
  if (def.type === 'object' && def.shape !== undefined) {
    const fields = new Map<string, Place>();
    for (const [key, field] of Object.entries(def.shape)) {
      const place = placeOf(field, where === '' ? key : `${where}.${key}`);
      if (place !== undefined) fields.set(key, place);
    }
    return fields.size === 0 ? undefined : { kind: 'object', fields };
  }
  if (def.type === 'array' && def.element !== undefined) {
    const item = placeOf(def.element, `${where}[]`);
    return item === undefined ? undefined : { kind: 'array', item };
  }
  if (containsRecordViews(schema, new Set()))
    throw new TypeError(
      `A per-record view at ${where === '' ? 'the top' : `"${where}"`} sits inside a ${def.type}: put it in an object's field or an array (docs/views.md)`,
    );
  return undefined;
}

/** A record cut down to the fields of the view chosen for it. */
function cut(record: unknown, views: RecordViews, ctx: unknown): unknown {
  if (typeof record !== 'object' || record === null) return record;
  const chosen = views.choose(record as Record<string, unknown>, ctx);
  const view = views.views.find(({ name }) => name === chosen);
  if (view === undefined) throw new Error(`No view "${chosen}" to show a record in`);
  const shown: Record<string, unknown> = {};
  for (const key of view.keys) {
    const value = (record as Record<string, unknown>)[key];
    if (value !== undefined) shown[key] = value;
    else if (view.required.has(key)) throw new Error(`"${key}" is required in the ${chosen} view`);
  }
  return shown;
}

function project(value: unknown, place: Place, ctx: unknown): unknown {
  switch (place.kind) {
    case 'record':
      return cut(value, place.views, ctx);
    case 'array':
      return Array.isArray(value) ? value.map((item) => project(item, place.item, ctx)) : value;
    case 'object': {
      if (typeof value !== 'object' || value === null) return value;
      const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
      for (const [key, field] of place.fields) copy[key] = project(copy[key], field, ctx);
      return copy;
    }
  }
}

/**
 * How to cut the records of an answer to their views before it is written, or undefined when the
 * schema has no per-record views (the answer is written as it is).
 */
export function recordCutter(schema: unknown): ((value: unknown, ctx: unknown) => unknown) | undefined {
  if (!isZodSchema(schema)) return undefined;
  const place = placeOf(schema, '');
  if (place === undefined) return undefined;
  return (value, ctx) => project(value, place, ctx);
}

/**
 * For the serializer: a per-record view's JSON Schema becomes one object holding every field of
 * every view, none required, so that it writes whichever fields the cut left (each is declared in
 * some view; no other field can pass).
 */
export function everyViewField(zodSchema: unknown, jsonSchema: JsonSchema): void {
  if (recordViewsOf(zodSchema) === undefined) return;
  const members = (jsonSchema.anyOf ?? []) as JsonSchema[];
  const properties: Record<string, unknown> = {};
  for (const member of members) Object.assign(properties, member.properties);
  for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
  Object.assign(jsonSchema, { type: 'object', properties });
}

/** For documentation: the views lowest first, as a reader expects them. */
export function lowestViewFirst(zodSchema: unknown, jsonSchema: JsonSchema): void {
  if (recordViewsOf(zodSchema) === undefined || !Array.isArray(jsonSchema.anyOf)) return;
  jsonSchema.anyOf = [...jsonSchema.anyOf].reverse();
}
