/**
 * Uploads (docs/uploads.md): which routes take files, how many and how large, found on the
 * procedure itself. A `z.file()` field of an object input makes the route take a
 * `multipart/form-data` body; a `z.file()` input (or the `data` of an `update*`) takes the raw
 * body as one file. This module knows no HTTP: reading a body is src/http/uploads.ts.
 */
import { ProceedConfigError } from './errors.js';
import type { InputMode } from './naming.js';
import type { ProcedureDefinition } from './procedure-types.js';
import { type JsonSchema, toJsonSchema } from './schema.js';
import { defaultUploadLimits, MiB, type UploadLimits, type UploadOptions } from './upload-options.js';

export {
  checkUploadOptions,
  defaultUploadLimits,
  type UploadLimits,
  type UploadOptions,
} from './upload-options.js';

/**
 * What the upload rules read of a planned route (src/core/routes.ts's `RouteEntry` is one),
 * named here so that this module need not know the planner.
 */
export interface UploadRoute {
  readonly collection: string;
  readonly name: string;
  readonly definition: ProcedureDefinition;
  readonly method: string;
  readonly path: string;
  readonly params: readonly string[];
  readonly inputMode: InputMode;
}

/** One file field of a form (or the raw body's file, named `''` or `data`). */
export interface FileField {
  readonly name: string;
  /** An array of files (`z.array(z.file())`). */
  readonly multiple: boolean;
  /** The media types the schema allows (`.mime()`), lower case; undefined for any. */
  readonly types: readonly string[] | undefined;
  /** Those types as `.mime()` wrote them, which the schema itself compares exactly. */
  readonly declared: readonly string[] | undefined;
  /** The schema's own largest size (`.max()`), when it has one. */
  readonly maxSize: number | undefined;
}

/** Where a route's files come from, as declared by its input. */
export interface UploadShape {
  /** `form`: `multipart/form-data`; `raw`: the whole body is one file. */
  readonly mode: 'form' | 'raw';
  readonly fields: ReadonlyMap<string, FileField>;
  /** For a raw body: whether the file is the input itself or its `data` (an `update*`). */
  readonly target: 'input' | 'data' | undefined;
}

/** A route's shape with the limits that apply to it (the procedure's over the app's over the defaults). */
export interface UploadPlan extends UploadShape {
  readonly limits: UploadLimits;
  /** Whether files are checked by their content: `checkContent` is on and a file field has a `.mime()`. */
  readonly checkContent: boolean;
}

/** A binary string: how `z.file()` describes itself in JSON Schema. */
function isBinary(schema: JsonSchema | undefined): boolean {
  return (
    schema !== undefined &&
    schema.type === 'string' &&
    (schema.format === 'binary' || schema.contentEncoding === 'binary')
  );
}

/** The schema without its `null` option (a nullable field). */
function withoutNull(schema: JsonSchema): JsonSchema {
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = (schema[key] as JsonSchema[] | undefined)?.filter((option) => option.type !== 'null');
    if (options?.length === 1 && options[0] !== undefined) return options[0];
  }
  return schema;
}

function declaredTypesOf(schema: JsonSchema): readonly string[] | undefined {
  if (typeof schema.contentMediaType === 'string') return [schema.contentMediaType];
  const options = schema.anyOf as JsonSchema[] | undefined;
  if (options === undefined) return undefined;
  const types = options.map((option) => option.contentMediaType);
  return types.every((type) => typeof type === 'string') ? (types as string[]) : undefined;
}

function fileTypes(schema: JsonSchema): Pick<FileField, 'types' | 'declared'> {
  const declared = declaredTypesOf(schema);
  return { declared, types: declared?.map((type) => type.toLowerCase()) };
}

/** A media type as a file's is compared with `.mime()`'s: `type/subtype`, lower case, nothing more. */
const exactMediaType = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;

function fileFieldOf(name: string, property: JsonSchema): FileField | undefined {
  const schema = withoutNull(property);
  if (isBinary(schema))
    return {
      name,
      multiple: false,
      ...fileTypes(schema),
      maxSize: typeof schema.maxLength === 'number' ? schema.maxLength : undefined,
    };
  const items = schema.items as JsonSchema | undefined;
  if (schema.type === 'array' && items !== undefined && isBinary(withoutNull(items))) {
    const item = withoutNull(items);
    return {
      name,
      multiple: true,
      ...fileTypes(item),
      maxSize: typeof item.maxLength === 'number' ? item.maxLength : undefined,
    };
  }
  return undefined;
}

const shapes = new WeakMap<ProcedureDefinition, UploadShape | null>();

/** The files a procedure's input declares, or undefined when it takes none. */
export function uploadShapeOf(
  definition: ProcedureDefinition,
  inputMode: InputMode,
): UploadShape | undefined {
  const known = shapes.get(definition);
  if (known !== undefined) return known ?? undefined;
  let shape: UploadShape | undefined;
  if (definition.input !== undefined) {
    const json = toJsonSchema(definition.input, { io: 'input' });
    const root = withoutNull(json);
    const properties = (root.properties ?? {}) as Record<string, JsonSchema>;
    if (isBinary(root)) {
      const field = fileFieldOf('', root) as FileField;
      shape = { mode: 'raw', fields: new Map([['', field]]), target: 'input' };
    } else if (
      inputMode === 'update' &&
      properties.data !== undefined &&
      isBinary(withoutNull(properties.data))
    ) {
      const field = fileFieldOf('data', properties.data) as FileField;
      shape = { mode: 'raw', fields: new Map([['data', field]]), target: 'data' };
    } else {
      const fields = new Map<string, FileField>();
      for (const [name, property] of Object.entries(properties)) {
        const field = fileFieldOf(name, property);
        if (field !== undefined) fields.set(name, field);
      }
      if (fields.size > 0) shape = { mode: 'form', fields, target: undefined };
    }
  }
  shapes.set(definition, shape ?? null);
  return shape;
}

/**
 * Refuses, at start-up, an upload route that cannot work, naming the procedure: files in a GET,
 * a raw file beside path parameters, `.uploads()` without a file, `.idempotent()` with files,
 * `checkContent` where no file declares a `.mime()`.
 */
export function checkUploadRoute(route: UploadRoute): void {
  const { definition } = route;
  const owner = `${route.collection}.${route.name}`;
  const shape = uploadShapeOf(definition, route.inputMode);
  if (shape === undefined) {
    if (definition.uploads !== undefined)
      throw new ProceedConfigError(
        `${owner} sets .uploads() but its input has no file: add a z.file() field, or drop .uploads() (docs/uploads.md)`,
      );
    return;
  }
  if (route.inputMode === 'query')
    throw new ProceedConfigError(
      `${owner} takes a file but maps to ${route.method} ${route.path}, which has no body: make it a mutation, or .rest({ method: 'POST', path }) (docs/uploads.md)`,
    );
  if (shape.target === 'input' && route.params.length > 0)
    throw new ProceedConfigError(
      `${owner} takes the raw body as its input (a z.file() input) but its path has parameters (${route.params.join(', ')}) that the input cannot hold: make the input an object with a z.file() field (a form), or an update* with data: z.file() (docs/uploads.md)`,
    );
  for (const field of shape.fields.values())
    for (const type of field.declared ?? [])
      if (!exactMediaType.test(type))
        throw new ProceedConfigError(
          `${owner}: .mime() of ${field.name === '' ? 'its file' : `"${field.name}"`} lists "${type}", which no file's type ever equals: a file's type is compared whole, so list each type as type/subtype in lower case, without a wildcard or parameters (image/png, image/jpeg) (docs/uploads.md)`,
        );
  if (definition.idempotent)
    throw new ProceedConfigError(
      `${owner} takes files and is .idempotent(): a replay cannot tell two uploads apart by their key alone; drop .idempotent() (docs/uploads.md)`,
    );
  if (
    definition.uploads?.checkContent &&
    [...shape.fields.values()].every((field) => field.types === undefined)
  )
    throw new ProceedConfigError(
      `${owner} sets .uploads({ checkContent: true }) but none of its files declares .mime(): there is no type to check the content against; add .mime([...]) to the z.file() (docs/uploads.md)`,
    );
  if (shape.mode === 'raw' && definition.uploads !== undefined)
    for (const key of ['files', 'fields', 'fieldSize'] as const)
      if (definition.uploads[key] !== undefined)
        throw new ProceedConfigError(
          `${owner} takes its raw body as one file: .uploads({ ${key} }) applies to forms only (docs/uploads.md)`,
        );
}

/** The limits of a route: the procedure's over the app's over the defaults. */
export function uploadPlanOf(route: UploadRoute, app: UploadOptions | undefined): UploadPlan | undefined {
  const shape = uploadShapeOf(route.definition, route.inputMode);
  if (shape === undefined) return undefined;
  const own = route.definition.uploads ?? {};
  const fileSize = own.fileSize ?? app?.fileSize ?? defaultUploadLimits.fileSize;
  const files = own.files ?? app?.files ?? defaultUploadLimits.files;
  // The largest file a field can hold, its schema's .max() included.
  const largest = Math.max(
    ...[...shape.fields.values()].map((field) => Math.min(fileSize, field.maxSize ?? fileSize)),
  );
  // A total of the route's own wins; an app's total does not override a route's own fileSize.
  const total =
    own.total ??
    (own.fileSize === undefined && own.files === undefined ? app?.total : undefined) ??
    (shape.mode === 'raw' ? largest : largest * files + MiB);
  return {
    ...shape,
    limits: {
      fileSize,
      files,
      fields: own.fields ?? app?.fields ?? defaultUploadLimits.fields,
      fieldSize: own.fieldSize ?? app?.fieldSize ?? defaultUploadLimits.fieldSize,
      total,
      memory: own.memory ?? app?.memory ?? defaultUploadLimits.memory,
    },
    checkContent:
      (own.checkContent ?? app?.checkContent ?? false) &&
      [...shape.fields.values()].some((field) => field.types !== undefined),
  };
}

/**
 * A request body read only when the call gets to its input: after the guards and the middlewares
 * placed before `.input()`, so that a caller refused there never has a byte of it read or stored.
 * The adapter makes it and disposes of it once the answer is sent.
 */
export abstract class DeferredBody {
  /** Whether reading has begun. */
  abstract readonly started: boolean;
  /** The body as the input takes it: a record of fields and files, or one file. */
  abstract read(): Promise<unknown>;
}
