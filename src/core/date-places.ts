/**
 * JSON has no dates: where an input schema declares a `Date` (`z.date()`, `v.date()`), the ISO
 * 8601 text a client sends is turned into one before validation, exactly there and nowhere else
 * (docs/procedures.md, "Input"). This module finds those places in a schema, once per route, and
 * walks a value along them.
 */
import type { z } from 'zod';
import type { DatePlaces } from './json-schema.js';
import { convertedJsonSchema, innerZodType, isZodSchema, type StandardSchemaV1 } from './schema.js';
import { isValibotSchema, valibotDatePlaces } from './valibot.js';

type ZodDef = {
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  valueType?: z.ZodType;
  items?: readonly z.ZodType[];
  rest?: z.ZodType | null;
  left?: z.ZodType;
  right?: z.ZodType;
};

/**
 * The places of `z.date()` in a Zod schema, at any depth: an object's fields, an array's items, a
 * record's values, a tuple's places, both sides of an intersection, what a `z.lazy()` gives.
 * Undefined when there are none. A recursive schema gives places that refer to themselves: each
 * schema is read once (`made`). A union's options may disagree about a place (a date in one, a
 * string in another), so none is read in a union: its dates are the validator's to refuse.
 */
export function zodDatePlaces(
  schema: z.ZodType,
  made: Map<z.ZodType, DatePlaces | undefined> = new Map(),
): DatePlaces | undefined {
  const { type, schema: inner } = innerZodType(schema);
  if (type === 'date') return true;
  if (made.has(inner)) return made.get(inner);
  const def = inner._zod.def as unknown as ZodDef;
  if (type === 'lazy') {
    // The schema it stands for, made once and kept by Zod: a recursion meets that one again,
    // which `made` holds by then.
    const stands = (inner._zod as { innerType?: z.ZodType }).innerType;
    return stands === undefined ? undefined : zodDatePlaces(stands, made);
  }
  const single = (key: 'items' | 'values', element: z.ZodType | undefined): DatePlaces | undefined => {
    if (element === undefined) return undefined;
    const places = { [key]: true } as { items: DatePlaces } | { values: DatePlaces };
    made.set(inner, places);
    const found = zodDatePlaces(element, made);
    if (found === undefined) {
      made.set(inner, undefined);
      return undefined;
    }
    (places as Record<string, DatePlaces>)[key] = found;
    return places;
  };
  if (type === 'array') return single('items', def.element);
  if (type === 'record') return single('values', def.valueType);
  if (type === 'tuple' && def.items !== undefined) {
    // Made before its places are read, as an object's: a tuple may hold itself (through z.lazy).
    const prefix: (DatePlaces | undefined)[] = [];
    const places: { prefix: (DatePlaces | undefined)[]; rest?: DatePlaces } = { prefix };
    made.set(inner, places);
    for (const item of def.items) prefix.push(zodDatePlaces(item, made));
    const rest = def.rest === null || def.rest === undefined ? undefined : zodDatePlaces(def.rest, made);
    if (rest !== undefined) places.rest = rest;
    if (rest !== undefined || prefix.some((place) => place !== undefined)) return places;
    made.set(inner, undefined);
    return undefined;
  }
  // Both sides of an intersection of objects hold at once: their fields are read as one object's.
  if (type === 'intersection' && def.left !== undefined && def.right !== undefined) {
    const shapes = [def.left, def.right].map((side) => {
      const found = innerZodType(side);
      return found.type === 'object' ? (found.schema._zod.def as unknown as ZodDef).shape : undefined;
    });
    if (shapes[0] === undefined || shapes[1] === undefined) return undefined;
    return objectPlaces(inner, { ...shapes[0], ...shapes[1] }, made);
  }
  if (type === 'object' && def.shape !== undefined) return objectPlaces(inner, def.shape, made);
  return undefined;
}

/** The places of an object's fields, made before they are read: a field may hold the object itself. */
function objectPlaces(
  schema: z.ZodType,
  shape: Record<string, z.ZodType>,
  made: Map<z.ZodType, DatePlaces | undefined>,
): DatePlaces | undefined {
  const fields = new Map<string, DatePlaces>();
  const places = { fields };
  made.set(schema, places);
  for (const [key, field] of Object.entries(shape)) {
    const found = zodDatePlaces(field, made);
    if (found !== undefined) fields.set(key, found);
  }
  if (fields.size > 0) return places;
  made.set(schema, undefined);
  return undefined;
}

/** Whether a date is anywhere in these places (which may refer to themselves). */
function holdsDate(places: DatePlaces, seen: Set<DatePlaces>): boolean {
  if (places === true) return true;
  if (seen.has(places)) return false;
  seen.add(places);
  return innerPlaces(places).some((inner) => holdsDate(inner, seen));
}

function innerPlaces(places: Exclude<DatePlaces, true>): DatePlaces[] {
  if ('items' in places) return [places.items];
  if ('values' in places) return [places.values];
  if ('prefix' in places)
    return [...places.prefix, places.rest].filter((place): place is DatePlaces => place !== undefined);
  return [...places.fields.values()];
}

/**
 * JSON Schema cannot tell a date the validator wants as a `Date` from a date-time string, so the
 * places of dates are read from the schema itself, for the validators Proceed knows.
 */
export function datePlacesOf(schema: StandardSchemaV1): DatePlaces | undefined {
  if (isZodSchema(schema)) {
    const places = zodDatePlaces(schema);
    // A recursive schema's places refer to themselves even where no date is anywhere below.
    return places !== undefined && holdsDate(places, new Set()) ? places : undefined;
  }
  if (isValibotSchema(schema)) {
    const converted = convertedJsonSchema(schema, 'input');
    return converted === undefined ? undefined : valibotDatePlaces(converted);
  }
  return undefined;
}

export type DateWalker = (value: unknown) => unknown;

/**
 * Walks a value along the places of its dates, turning ISO strings into Dates there with
 * `toDate`. Places that refer to themselves (a recursive schema) get one walker, which calls
 * itself. What is not of the shape the places expect is handed on as it is, for the validator.
 */
export function dateWalker(
  places: DatePlaces,
  toDate: DateWalker,
  made: Map<DatePlaces, DateWalker> = new Map(),
): DateWalker {
  if (places === true) return toDate;
  const known = made.get(places);
  if (known !== undefined) return known;
  let walk: DateWalker = (value) => value;
  made.set(places, (value) => walk(value));
  const inner = (place: DatePlaces) => dateWalker(place, toDate, made);
  const isRecord = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  if ('items' in places) {
    const item = inner(places.items);
    walk = (value) => (Array.isArray(value) ? value.map(item) : value);
  } else if ('values' in places) {
    const each = inner(places.values);
    walk = (value) => {
      if (!isRecord(value)) return value;
      const copy: Record<string, unknown> = { ...value };
      for (const key of Object.keys(copy)) copy[key] = each(copy[key]);
      return copy;
    };
  } else if ('prefix' in places) {
    const prefix = places.prefix.map((place) => (place === undefined ? undefined : inner(place)));
    const rest = places.rest === undefined ? undefined : inner(places.rest);
    walk = (value) =>
      Array.isArray(value)
        ? value.map((item, at) => {
            const walkItem = at < prefix.length ? prefix[at] : rest;
            return walkItem === undefined ? item : walkItem(item);
          })
        : value;
  } else {
    const fields = [...places.fields].map(([key, place]) => [key, inner(place)] as const);
    walk = (value) => {
      if (!isRecord(value)) return value;
      const copy: Record<string, unknown> = { ...value };
      for (const [key, field] of fields) if (key in copy) copy[key] = field(copy[key]);
      return copy;
    };
  }
  return walk;
}
