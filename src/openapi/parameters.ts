import type { RouteEntry } from '../core/routes.js';
import type { JsonSchema } from '../core/schema.js';
import type { HeaderDocumentation } from '../core/steps.js';
import { type FileField, uploadShapeOf } from '../core/uploads.js';
import { exampleFor, hasOwnExample } from './examples.js';
import { strictBody } from './schema-facts.js';
import type { OpenApiMediaType, OpenApiParameter, OpenApiRequestBody } from './types.js';

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A documented header's schema: its type and whatever else the server bounds. */
export function headerSchema(header: HeaderDocumentation): JsonSchema {
  return { type: header.type, ...header.schema };
}

export function parameter(
  name: string,
  location: 'path' | 'query',
  required: boolean,
  schema: JsonSchema,
  components: Record<string, JsonSchema>,
): OpenApiParameter {
  const result: OpenApiParameter = { name, in: location, required, schema };
  if (typeof schema.description === 'string') result.description = schema.description;
  if (schema.deprecated === true) result.deprecated = true;
  if (location === 'query' && schema.type === 'array') {
    result.style = 'form';
    result.explode = true;
  }
  if (required || hasOwnExample(schema)) {
    const example = exampleFor(schema, components, name);
    if (example !== undefined) result.example = example;
  }
  return result;
}

/** Sets a body's `example` when one can be made that its schema accepts. */
export function withExample(
  media: OpenApiMediaType | undefined,
  components: Record<string, JsonSchema>,
  omit?: ReadonlySet<string>,
): void {
  if (media === undefined) return;
  const example = exampleFor(media.schema, components, '', omit);
  if (example !== undefined) media.example = example;
}

/** Whether every answer of this schema has an `id` (so a create always sends `Location`). */
export function requiresId(schema: JsonSchema, components: Record<string, JsonSchema>, depth = 0): boolean {
  if (depth > 8) return false;
  if (typeof schema.$ref === 'string') {
    const target = components[decodeURIComponent(schema.$ref.replace('#/components/schemas/', ''))];
    return target !== undefined && requiresId(target, components, depth + 1);
  }
  if (Array.isArray(schema.oneOf)) {
    return (schema.oneOf as JsonSchema[]).every((choice) => requiresId(choice, components, depth + 1));
  }
  return Array.isArray(schema.required) && schema.required.includes('id');
}

export function queryParameters(
  input: JsonSchema,
  properties: Record<string, JsonSchema>,
  required: ReadonlySet<string>,
  pathParams: readonly string[],
  components: Record<string, JsonSchema>,
): OpenApiParameter[] {
  if (isObject(input.properties)) {
    return Object.entries(properties)
      .filter(([name]) => !pathParams.includes(name))
      .map(([name, schema]) => parameter(name, 'query', required.has(name), schema, components));
  }
  // An input that is not a plain object (a record, a union) still arrives as a query string.
  if (Object.keys(input).length === 0) return [];
  return [{ name: 'query', in: 'query', required: false, schema: input, style: 'form', explode: true }];
}

/**
 * A file as OpenAPI tools read one: a binary string (Swagger UI offers a file picker for it), its
 * media type when it takes one, its size limit in words.
 */
export function fileSchema(field: FileField, description: unknown): JsonSchema {
  const schema: JsonSchema = { type: 'string', format: 'binary' };
  if (field.types?.length === 1) schema.contentMediaType = field.types[0];
  // A binary string's length is its size in bytes.
  if (field.maxSize !== undefined) schema.maxLength = field.maxSize;
  const said = [
    typeof description === 'string' ? description.replace(/([^.!?])$/, '$1.') : undefined,
    field.types !== undefined && field.types.length > 1 ? `One of ${field.types.join(', ')}.` : undefined,
    field.maxSize !== undefined ? `At most ${field.maxSize} bytes.` : undefined,
  ].filter((text) => text !== undefined);
  if (said.length > 0) schema.description = said.join(' ');
  return schema;
}

/** The body of a route that takes files: a form, or the raw bytes of one file (docs/uploads.md). */
export function uploadBody(
  route: RouteEntry,
  properties: Record<string, JsonSchema>,
  required: ReadonlySet<string>,
  /** Whether the input takes keys it does not name (a loose object): a form's other parts then too. */
  open = false,
): OpenApiRequestBody | undefined {
  const shape = uploadShapeOf(route.definition, route.inputMode);
  if (shape === undefined) return undefined;
  if (shape.mode === 'raw') {
    const field = shape.fields.values().next().value as FileField;
    // Each media type it takes is a content entry of its own.
    const schema = fileSchema({ ...field, types: undefined }, undefined);
    const types = field.types ?? ['application/octet-stream'];
    return {
      required: true,
      content: Object.fromEntries(types.map((type) => [type, { schema: { ...schema } }])),
    };
  }
  const formProperties: Record<string, JsonSchema> = {};
  const encoding: Record<string, { contentType: string }> = {};
  for (const [name, property] of Object.entries(properties)) {
    if (route.params.includes(name)) continue;
    const field = shape.fields.get(name);
    if (field === undefined) {
      formProperties[name] = property;
      continue;
    }
    const file = fileSchema(field, property.description);
    formProperties[name] = field.multiple ? { type: 'array', items: file } : file;
    if (field.types !== undefined && field.types.length > 1)
      encoding[name] = { contentType: field.types.join(', ') };
  }
  const schema: JsonSchema = { type: 'object', properties: formProperties };
  // A part the input does not name is refused (src/core/input-assembly.ts).
  if (!open) schema.additionalProperties = false;
  const bodyRequired = [...required].filter((name) => !route.params.includes(name));
  if (bodyRequired.length > 0) schema.required = bodyRequired;
  const media: OpenApiMediaType = { schema };
  if (Object.keys(encoding).length > 0) media.encoding = encoding;
  return { required: true, content: { 'multipart/form-data': media } };
}

export function requestBody(
  route: RouteEntry,
  input: JsonSchema,
  properties: Record<string, JsonSchema>,
  required: ReadonlySet<string>,
): OpenApiRequestBody | undefined {
  if (route.inputMode === 'query') return undefined;
  const open = ['additionalProperties', 'patternProperties', 'propertyNames', 'unevaluatedProperties'].some(
    (key) => key in input,
  );
  const upload = uploadBody(route, properties, required, open);
  if (upload !== undefined) return upload;
  if (route.inputMode === 'update') {
    return {
      required: required.has('data'),
      content: { 'application/json': { schema: strictBody(properties.data ?? {}) } },
    };
  }
  if (!isObject(input.properties))
    return { required: false, content: { 'application/json': { schema: input } } };
  const bodyProperties = Object.fromEntries(
    Object.entries(properties).filter(([name]) => !route.params.includes(name)),
  );
  const bodyRequired = [...required].filter((name) => !route.params.includes(name));
  const freeForm = input.additionalProperties !== undefined && input.additionalProperties !== false;
  if (Object.keys(bodyProperties).length === 0 && !freeForm && input.patternProperties === undefined) {
    return undefined;
  }
  const schema: JsonSchema = { ...input, properties: bodyProperties };
  if (bodyRequired.length > 0) schema.required = bodyRequired;
  else delete schema.required;
  return {
    required: bodyRequired.length > 0,
    content: { 'application/json': { schema: strictBody(schema) } },
  };
}

/** A file's body in OpenAPI 3.1: bytes of each declared media type, or of any. */
export function binaryContent(types: readonly string[]): Record<string, OpenApiMediaType> {
  const listed = types.length === 0 ? ['*/*'] : types;
  return Object.fromEntries(
    listed.map((type) => [
      type,
      { schema: { type: 'string', format: 'binary', ...(type === '*/*' ? {} : { contentMediaType: type }) } },
    ]),
  );
}
