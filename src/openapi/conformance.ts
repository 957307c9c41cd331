/**
 * Checks real responses against a document: the tool behind conformance tests, which replay
 * requests and assert that every answer is one the document promised.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { JsonSchema } from '../core/schema.js';
import type {
  OpenApiDocument,
  OpenApiMethod,
  OpenApiOperation,
  OpenApiResponse,
  Reference,
} from './types.js';

/**
 * Validates one response; returns what is wrong with it, or an empty list.
 * `path` is the concrete request path (`/api/posts/42`, a query string is ignored); `body` is
 * the parsed body or its text.
 *
 * @example
 * const check: ResponseValidator = createResponseValidator(document);
 * check('GET', '/api/posts/42', 404, 'application/problem+json', { code: 'NOT_FOUND' }); // ["… must have required property 'type'", …]
 */
export type ResponseValidator = (
  method: string,
  path: string,
  status: number,
  /** As a header value arrives: `inject()` and `fetch` give a string, Node's headers may give more. */
  contentType: string | number | readonly string[] | undefined,
  body: unknown,
) => string[];

const componentsId = 'urn:proceed:openapi-components';
const methods = new Set<string>(['get', 'post', 'put', 'patch', 'delete']);

interface Template {
  path: string;
  segments: string[];
  literals: number;
}

function segmentsOf(path: string): string[] {
  return path.split('/').filter((segment) => segment !== '');
}

function isParameter(segment: string): boolean {
  return segment.startsWith('{') && segment.endsWith('}');
}

/** Points `#/components/schemas/X` at the components registered in Ajv. */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    copy[key] =
      key === '$ref' && typeof item === 'string' && item.startsWith('#/components/schemas/')
        ? `${componentsId}#/$defs/${item.slice('#/components/schemas/'.length)}`
        : rewriteRefs(item);
  }
  return copy;
}

function mediaTypeOf(contentType: string | number | readonly string[] | undefined): string | undefined {
  const header = Array.isArray(contentType) ? contentType[0] : contentType;
  return typeof header === 'string' ? header.split(';', 1)[0]?.trim().toLowerCase() || undefined : undefined;
}

function isEmptyBody(body: unknown): boolean {
  return body === undefined || body === null || body === '';
}

/**
 * Builds a validator for the responses of a document: it finds the operation whose path
 * template matches the concrete path, the documented response for the status, checks the
 * media type and validates the body against the schema (JSON Schema 2020-12, with formats).
 *
 * @example
 * const check = createResponseValidator(generateOpenApi({ app, info: { title: 'Blog', version: '1' } }));
 * const response = await app.inject({ method: 'GET', url: '/api/posts/42' });
 * expect(check('GET', '/api/posts/42', response.statusCode, response.headers['content-type'], response.body)).toEqual([]);
 */
export function createResponseValidator(document: OpenApiDocument): ResponseValidator {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: componentsId, $defs: rewriteRefs(document.components.schemas) as JsonSchema });
  const compiled = new Map<string, ValidateFunction>();

  const templates: Template[] = Object.keys(document.paths)
    .map((path) => {
      const segments = segmentsOf(path);
      return { path, segments, literals: segments.filter((segment) => !isParameter(segment)).length };
    })
    // A literal segment beats a parameter: `/posts/drafts` before `/posts/{id}`.
    .sort((a, b) => b.literals - a.literals);

  const findPath = (path: string): string | undefined => {
    const concrete = segmentsOf(path.split('?', 1)[0] ?? '');
    const match = templates.find(
      (template) =>
        template.segments.length === concrete.length &&
        template.segments.every((segment, index) => isParameter(segment) || segment === concrete[index]),
    );
    return match?.path;
  };

  const resolveResponse = (response: OpenApiResponse | Reference): OpenApiResponse | undefined => {
    if (!('$ref' in response)) return response;
    const name = response.$ref.replace('#/components/responses/', '');
    return document.components.responses[name];
  };

  const validatorFor = (key: string, schema: JsonSchema): ValidateFunction => {
    let validate = compiled.get(key);
    if (validate === undefined) {
      validate = ajv.compile(rewriteRefs(schema) as JsonSchema);
      compiled.set(key, validate);
    }
    return validate;
  };

  return (method, path, status, contentType, body) => {
    const lower = method.toLowerCase();
    const where = `${method.toUpperCase()} ${path}`;
    const template = findPath(path);
    if (template === undefined) return [`${where}: no documented path matches`];
    // HEAD answers as GET does, without a body.
    const documentedMethod = lower === 'head' ? 'get' : lower;
    const operation: OpenApiOperation | undefined = methods.has(documentedMethod)
      ? document.paths[template]?.[documentedMethod as OpenApiMethod]
      : undefined;
    if (operation === undefined) return [`${where}: ${method.toUpperCase()} ${template} is not documented`];
    const documented =
      operation.responses[String(status)] ??
      operation.responses[`${String(status).charAt(0)}XX`] ??
      operation.responses.default;
    const response = documented === undefined ? undefined : resolveResponse(documented);
    if (response === undefined) {
      const known = Object.keys(operation.responses).join(', ');
      return [
        `${where}: status ${status} is not documented for ${operation.operationId} (documented: ${known})`,
      ];
    }
    if (response.content === undefined) {
      return isEmptyBody(body) ? [] : [`${where}: status ${status} is documented without a body`];
    }
    if (lower === 'head') return isEmptyBody(body) ? [] : [`${where}: HEAD answered with a body`];
    const mediaType = mediaTypeOf(contentType);
    // The most specific documented range: `image/png`, then `image/*`, then `*/*`.
    const media =
      mediaType === undefined
        ? undefined
        : (response.content[mediaType] ??
          response.content[`${mediaType.split('/', 1)[0]}/*`] ??
          response.content['*/*']);
    if (mediaType === undefined || media === undefined) {
      const known = Object.keys(response.content).join(', ');
      return [
        `${where}: content type ${contentType ?? '(none)'} is not documented for ${status} (documented: ${known})`,
      ];
    }
    // Bytes (a file answer) have nothing a JSON Schema can check beyond being there.
    if (media.schema.format === 'binary') return [];
    let value = body;
    if (typeof body === 'string' && mediaType.endsWith('json')) {
      try {
        value = JSON.parse(body);
      } catch {
        return [`${where}: the body is not valid JSON`];
      }
    }
    const validate = validatorFor(`${lower} ${template} ${status} ${mediaType}`, media.schema);
    if (validate(value)) return [];
    return (validate.errors ?? []).map(
      (error) => `${where} ${status}: ${error.instancePath || '(body)'} ${error.message ?? 'is invalid'}`,
    );
  };
}

/**
 * Checks every example in a document against the schema beside it: parameters, request bodies,
 * responses and their headers. Returns what does not fit, or an empty list. A wrong example is
 * worse than none: Swagger UI sends it, Postman saves it, Dredd expects the server to accept it.
 *
 * @example
 * expect(exampleErrors(generateOpenApi({ app, info }))).toEqual([]);
 */
export function exampleErrors(document: OpenApiDocument): string[] {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: componentsId, $defs: rewriteRefs(document.components.schemas) as JsonSchema });
  const errors: string[] = [];
  const check = (where: string, holder: { schema?: JsonSchema; example?: unknown } | undefined): void => {
    if (holder?.schema === undefined || !('example' in holder)) return;
    const validate = ajv.compile(rewriteRefs(holder.schema) as JsonSchema);
    if (validate(holder.example)) return;
    for (const error of validate.errors ?? []) {
      errors.push(`${where}: example ${error.instancePath || '(value)'} ${error.message ?? 'is invalid'}`);
    }
  };
  const checkResponse = (where: string, response: OpenApiResponse | Reference): void => {
    if ('$ref' in response) return;
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      if (!('$ref' in header)) check(`${where} header ${name}`, header);
    }
    for (const [type, media] of Object.entries(response.content ?? {})) check(`${where} ${type}`, media);
  };
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item ?? {}) as [string, OpenApiOperation][]) {
      if (!methods.has(method)) continue;
      const where = `${method.toUpperCase()} ${path}`;
      for (const parameter of operation.parameters ?? []) {
        if (!('$ref' in parameter)) check(`${where} ${parameter.in} parameter ${parameter.name}`, parameter);
      }
      const body = operation.requestBody;
      if (body !== undefined && !('$ref' in body)) {
        for (const [type, media] of Object.entries(body.content))
          check(`${where} request body ${type}`, media);
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        checkResponse(`${where} ${status}`, response);
      }
    }
  }
  for (const [name, response] of Object.entries(document.components.responses ?? {})) {
    checkResponse(`components.responses.${name}`, response);
  }
  return errors;
}
