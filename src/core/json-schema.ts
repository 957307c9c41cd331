/** The shapes Proceed's core passes JSON Schema in: types only, below every module that reads them. */

/** A JSON Schema (draft 2020-12) as a plain object. */
export type JsonSchema = Record<string, unknown>;

/** A JSON Schema, or why there is none. */
export type Described = { readonly json: JsonSchema } | { readonly missing: string };

/**
 * Where an input schema expects Dates: the value itself, an object's keys, an array's items, a
 * record's values, a tuple's places (and its rest).
 */
export type DatePlaces =
  | true
  | { readonly fields: ReadonlyMap<string, DatePlaces> }
  | { readonly items: DatePlaces }
  | { readonly values: DatePlaces }
  | { readonly prefix: readonly (DatePlaces | undefined)[]; readonly rest?: DatePlaces };
