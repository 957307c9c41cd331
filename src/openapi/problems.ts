/**
 * The problem responses (docs/errors.md) as reusable OpenAPI components: one `Problem` schema and
 * one response per status, each narrowing `status` and `code` to what that status can carry.
 * The codes come from the core's table, so the document cannot drift from the server.
 */
import { STATUS_CODES } from 'node:http';
import {
  type ErrorCode,
  type ErrorDefinition,
  errorStatus,
  errorTitle,
  maxFieldErrors,
  type Problem,
  problemType,
} from '../core/errors.js';
import type { JsonSchema } from '../core/schema.js';
import type { OpenApiHeader, OpenApiResponse, Reference } from './types.js';

export const problemMediaType = 'application/problem+json';

/** Every error code, in the table's order. */
export const errorCodes = Object.keys(errorStatus) as ErrorCode[];

/**
 * The `Problem` component: an RFC 9457 problem details body as Proceed sends it. A document
 * whose routes answer an app's own codes lists them in `code` too ({@link problemSchemaWith}).
 *
 * @example
 * expect(document.components.schemas.Problem).toEqual(problemSchema);
 */
export const problemSchema: JsonSchema = problemSchemaOf([]);

/** The Problem schema for the built-in codes and `appProblems`; its texts as long as theirs at most. */
function problemSchemaOf(appProblems: readonly ErrorDefinition[]): JsonSchema {
  const codes = [...errorCodes, ...appProblems.map((problem) => problem.code)];
  const titles = [
    ...errorCodes.map((code) => errorTitle[code]),
    ...appProblems.map((problem) => problem.title),
  ];
  const longest = (texts: readonly string[]) => Math.max(...texts.map((text) => text.length));
  return {
    type: 'object',
    description: 'RFC 9457 problem details. `code` is stable and machine-readable; `detail` is for people.',
    properties: {
      type: {
        type: 'string',
        format: 'uri-reference',
        maxLength: longest(codes.map(problemType)),
        description: 'A URN naming the kind of problem, e.g. `urn:proceed:problem:not-found`',
      },
      title: {
        type: 'string',
        maxLength: longest(titles),
        description: 'A short summary of the kind of problem',
      },
      status: {
        type: 'integer',
        format: 'int32',
        minimum: 400,
        maximum: 599,
        description: 'The HTTP status',
      },
      detail: { type: 'string', description: 'What went wrong with this request' },
      code: { type: 'string', enum: codes },
      errors: {
        type: 'array',
        description: `One entry per failed check (validation problems only), the first ${maxFieldErrors} of them`,
        maxItems: maxFieldErrors,
        items: {
          type: 'object',
          properties: {
            path: {
              type: 'string',
              description: 'Dotted path into the input; empty for the input as a whole',
            },
            message: { type: 'string' },
          },
          required: ['path', 'message'],
        },
      },
    },
    required: ['type', 'title', 'status', 'detail', 'code'],
  };
}

/** The Problem schema with an app's own codes added to `code` (and their texts to the lengths). */
export function problemSchemaWith(appProblems: readonly ErrorDefinition[]): JsonSchema {
  return appProblems.length === 0 ? problemSchema : problemSchemaOf(appProblems);
}

/** The statuses Proceed's own codes answer with. */
export type ProblemStatus = 400 | 401 | 403 | 404 | 409 | 412 | 413 | 415 | 422 | 429 | 431 | 500 | 503;

interface ProblemResponseSpec {
  name: string;
  description: string;
  /** The `detail` of the example body: what a client would really read. */
  example: string;
  headers?: Record<string, OpenApiHeader>;
}

const wwwAuthenticate: OpenApiHeader = {
  description: 'Always `Bearer`: the route takes a bearer token',
  schema: { type: 'string', const: 'Bearer' },
};

/** A number of seconds the server writes: a safe integer. */
const retryAfterSeconds: JsonSchema = {
  type: 'integer',
  format: 'int64',
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
};

const specs: Record<number, ProblemResponseSpec> = {
  400: {
    name: 'BadRequest',
    example: 'title: Too small: expected string to have >=1 characters',
    description: 'The input failed validation (`VALIDATION_FAILED`, see `errors`) or the body is not JSON',
  },
  401: {
    name: 'Unauthorized',
    example: 'This route needs a bearer token',
    description: 'No bearer token (`UNAUTHENTICATED`), or a bad, expired or revoked one (`INVALID_TOKEN`)',
    headers: { 'WWW-Authenticate': wwwAuthenticate },
  },
  403: {
    name: 'Forbidden',
    example: 'Guard "admin" denied access',
    description: 'A guard denied access; `detail` names the guard',
  },
  404: {
    name: 'NotFound',
    example: 'No such record',
    description: 'No such record, or one the caller may not see',
  },
  409: {
    name: 'Conflict',
    example: 'A record with this value already exists',
    description: 'The request conflicts with the current state (a duplicate, or an invalid transition)',
  },
  412: {
    name: 'PreconditionFailed',
    example: 'The record changed since the version in If-Match: read it again and retry with its new ETag',
    description: 'The version named by `If-Match` is not the current one; nothing was changed',
  },
  413: {
    name: 'PayloadTooLarge',
    example: 'The request body is larger than the server accepts',
    description: 'The body is larger than the server accepts',
  },
  415: {
    name: 'UnsupportedMediaType',
    example: 'The request body must be application/json (or a +json media type)',
    description: 'The body is not JSON (`application/json` or a `+json` type)',
  },
  422: {
    name: 'UnprocessableEntity',
    example: 'This Idempotency-Key was used with a different request body',
    description:
      'The request cannot be carried out as sent (an `Idempotency-Key` reused with another body, say)',
  },
  429: {
    name: 'TooManyRequests',
    example: 'Rate limit exceeded, retry in 1 minute',
    description: 'Rate limit hit; retry after the given number of seconds',
    headers: {
      'Retry-After': {
        description: 'Seconds to wait before retrying',
        schema: retryAfterSeconds,
      },
    },
  },
  431: {
    name: 'RequestHeaderFieldsTooLarge',
    example: 'The request line and headers are larger than the server accepts',
    description: 'The request line and headers are over the server limit (16 KiB); the connection is closed',
  },
  500: {
    name: 'InternalError',
    example: 'The server could not complete the request',
    description: 'Something unexpected failed on the server',
  },
  503: {
    name: 'ServiceUnavailable',
    example: 'The service is not ready',
    description: 'The service is not ready (its health check failed) or is shutting down',
    headers: {
      'Retry-After': {
        description: 'Seconds to wait before asking again',
        schema: retryAfterSeconds,
      },
    },
  },
};

/** For a status only an app's codes answer with: a name and description from the status. */
function specOf(status: number): ProblemResponseSpec {
  const known = specs[status];
  if (known !== undefined) return known;
  const reason = STATUS_CODES[status] ?? `Status ${status}`;
  return {
    name:
      reason
        .replace(/[^A-Za-z0-9]+/g, ' ')
        .trim()
        .split(' ')
        .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
        .join('') || `Status${status}`,
    example: reason,
    description: reason,
  };
}

/** Built-in codes a status can carry, except the ones no documented route produces. */
function builtInCodesOf(status: number): ErrorDefinition[] {
  return errorCodes
    .filter((code) => errorStatus[code] === status && code !== 'ROUTE_NOT_FOUND')
    .map((code) => ({ code, status, title: errorTitle[code] }));
}

/**
 * The `components.responses` entry of a problem status: the built-in codes of that status and
 * the app's own codes (`appCodes`) that routes of the document answer with.
 */
export function problemResponse(
  status: number,
  appCodes: readonly ErrorDefinition[] = [],
): { name: string; response: OpenApiResponse } {
  const spec = specOf(status);
  const described = [...builtInCodesOf(status), ...appCodes.filter((each) => each.status === status)];
  const codes = described.map((each) => each.code);
  const first = described[0] ?? { code: 'INTERNAL', title: errorTitle.INTERNAL };
  const example: Problem = {
    type: problemType(first.code),
    title: first.title,
    status,
    detail: spec.example,
    code: first.code,
  };
  if (status === 400)
    example.errors = [{ path: 'title', message: 'Too small: expected string to have >=1 characters' }];
  const response: OpenApiResponse = {
    description: `${spec.description}. Codes: ${described.map((each) => `\`${each.code}\` (${each.title})`).join(', ')}`,
    content: {
      [problemMediaType]: {
        schema: {
          allOf: [
            { $ref: '#/components/schemas/Problem' },
            {
              type: 'object',
              properties: {
                status: { type: 'integer', format: 'int32', minimum: status, maximum: status, const: status },
                code: { type: 'string', enum: codes },
              },
            },
          ],
        },
        example,
      },
    },
  };
  if (spec.headers !== undefined) response.headers = spec.headers;
  return { name: spec.name, response };
}

/**
 * The name of the shared response of a problem status in `components.responses`; `onLimitedRoute`
 * names its copy with the `X-RateLimit-*` headers a rate-limited route adds.
 */
export function problemResponseName(status: number, onLimitedRoute = false): string {
  return `${specOf(status).name}${onLimitedRoute ? 'OnLimitedRoute' : ''}`;
}

/** A reference to the shared response of a problem status. */
export function problemReference(status: number, onLimitedRoute = false): Reference {
  return { $ref: `#/components/responses/${problemResponseName(status, onLimitedRoute)}` };
}
