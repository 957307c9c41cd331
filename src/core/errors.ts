/**
 * One error class, string codes and an open code → status table (docs/errors.md). Handlers
 * throw these; every transport turns them into RFC 9457 problem details with {@link toProblem}.
 * Apps add codes of their own with {@link defineErrors}.
 */
import { withoutQueryParameters } from './redaction.js';

/** Every error code Proceed itself answers with, and the HTTP status that goes with it. */
export const errorStatus = {
  VALIDATION_FAILED: 400,
  INVALID_JSON: 400,
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  INVALID_TOKEN: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RANGE_NOT_SATISFIABLE: 416,
  IDEMPOTENCY_KEY_REUSED: 422,
  UPGRADE_REQUIRED: 426,
  RATE_LIMITED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL: 500,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/** The human title of each code, sent as the problem's `title`. */
export const errorTitle: { readonly [C in ErrorCode]: string } = {
  VALIDATION_FAILED: 'Validation failed',
  INVALID_JSON: 'Malformed JSON',
  BAD_REQUEST: 'Malformed HTTP request',
  UNAUTHENTICATED: 'Authentication required',
  INVALID_TOKEN: 'Invalid token',
  FORBIDDEN: 'Forbidden',
  NOT_FOUND: 'Not found',
  ROUTE_NOT_FOUND: 'Route not found',
  METHOD_NOT_ALLOWED: 'Method not allowed',
  REQUEST_TIMEOUT: 'Request timeout',
  CONFLICT: 'Conflict',
  PRECONDITION_FAILED: 'Precondition failed',
  PAYLOAD_TOO_LARGE: 'Payload too large',
  UNSUPPORTED_MEDIA_TYPE: 'Unsupported media type',
  RANGE_NOT_SATISFIABLE: 'Range not satisfiable',
  IDEMPOTENCY_KEY_REUSED: 'Idempotency key reused',
  UPGRADE_REQUIRED: 'Upgrade required',
  RATE_LIMITED: 'Too many requests',
  HEADERS_TOO_LARGE: 'Request headers too large',
  INTERNAL: 'Internal server error',
  UNAVAILABLE: 'Service unavailable',
};

/**
 * An error code an app defines: its status and title travel with it, so it is answered,
 * documented and typed like the built-in ones.
 */
export interface ErrorDefinition<C extends string = string, S extends number = number> {
  readonly code: C;
  readonly status: S;
  readonly title: string;
}

/** A built-in code or an app's own: what `meta({ errors })` and route documentation list. */
export type ProblemCode = ErrorCode | ErrorDefinition;

type DefinedErrors<T extends Record<string, { status: number; title: string }>> = {
  readonly [C in keyof T & string]: ErrorDefinition<C, T[C]['status']>;
};

const appCodePattern = /^[A-Z][A-Z0-9_]*$/;

/**
 * Defines an app's own error codes. Codes are UPPER_SNAKE_CASE and may not reuse a built-in one;
 * statuses are 4xx or 5xx.
 *
 * @example
 * export const blogErrors = defineErrors({
 *   INVALID_TRANSITION: { status: 409, title: 'Invalid state transition' },
 * });
 * throw new ProceedError(blogErrors.INVALID_TRANSITION, 'An archived post cannot become published');
 */
export function defineErrors<const T extends Record<string, { status: number; title: string }>>(
  table: T,
): DefinedErrors<T> {
  const defined: Record<string, ErrorDefinition> = {};
  for (const [code, { status, title }] of Object.entries(table)) {
    if (!appCodePattern.test(code))
      throw new ProceedConfigError(`defineErrors: "${code}" is not an UPPER_SNAKE_CASE code`);
    if (Object.hasOwn(errorStatus, code))
      throw new ProceedConfigError(`defineErrors: "${code}" is a built-in code; choose another name`);
    if (!Number.isInteger(status) || status < 400 || status > 599)
      throw new ProceedConfigError(`defineErrors: ${code} needs a 4xx or 5xx status, not ${status}`);
    if (typeof title !== 'string' || title.trim() === '')
      throw new ProceedConfigError(`defineErrors: ${code} needs a title`);
    defined[code] = Object.freeze({ code, status, title });
  }
  return Object.freeze(defined) as DefinedErrors<T>;
}

/** The code, status and title of a built-in code or a definition. */
export function describeProblem(code: ProblemCode): ErrorDefinition {
  if (typeof code !== 'string') return code;
  // JavaScript callers (and casts) can pass any string: an unknown one must not become a status-less error.
  if (!Object.hasOwn(errorStatus, code))
    throw new TypeError(
      `"${code}" is not a built-in error code; define it with defineErrors() and pass the definition`,
    );
  return { code, status: errorStatus[code], title: errorTitle[code] };
}

/** One failed check of a validation: a dotted path into the input and what is wrong there. */
export interface FieldError {
  path: string;
  message: string;
}

/** An RFC 9457 problem details body as Proceed sends it. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  /** A built-in {@link ErrorCode} or one the app defined. */
  code: string;
  errors?: FieldError[];
}

export interface ProceedErrorOptions {
  errors?: FieldError[];
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * The error every layer of Proceed throws and every transport understands: a built-in code, or
 * an app's own from {@link defineErrors}.
 *
 * @example
 * throw new ProceedError('CONFLICT', 'A user with this email already exists');
 * throw new ProceedError(blogErrors.INVALID_TRANSITION, 'An archived post cannot become published');
 */
export class ProceedError extends Error {
  override name = 'ProceedError';
  readonly code: string;
  readonly status: number;
  readonly title: string;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ProblemCode, detail?: string, options: ProceedErrorOptions = {}) {
    const described = describeProblem(code);
    super(detail ?? described.title, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = described.code;
    this.status = described.status;
    this.title = described.title;
    this.errors = options.errors;
    this.headers = options.headers;
  }
}

/** @example throw new NotFoundError('No post with this id'); */
export class NotFoundError extends ProceedError {
  constructor(detail = 'No such record') {
    super('NOT_FOUND', detail);
  }
}

/** @example throw new ConflictError('A user with this email already exists'); */
export class ConflictError extends ProceedError {
  constructor(detail = 'The request conflicts with the current state') {
    super('CONFLICT', detail);
  }
}

/**
 * A write found the record at another version than the one `If-Match` named (docs/http-caching.md).
 *
 * @example throw new PreconditionFailedError();
 */
export class PreconditionFailedError extends ProceedError {
  constructor(
    detail = 'The record changed since the version in If-Match: read it again and retry with its new ETag',
  ) {
    super('PRECONDITION_FAILED', detail);
  }
}

/** @example throw new ForbiddenError('Only the author may do this'); */
export class ForbiddenError extends ProceedError {
  constructor(detail = 'You may not do this') {
    super('FORBIDDEN', detail);
  }
}

/** @example throw new UnauthenticatedError(); */
export class UnauthenticatedError extends ProceedError {
  constructor(detail = 'This route needs a bearer token') {
    super('UNAUTHENTICATED', detail, { headers: { 'www-authenticate': 'Bearer' } });
  }
}

/** @example throw new ValidationError([{ path: 'email', message: 'Invalid email' }]); */
export class ValidationError extends ProceedError {
  constructor(errors: FieldError[], detail = describeFieldErrors(errors)) {
    super('VALIDATION_FAILED', detail, { errors });
  }
}

function describeFieldErrors(errors: FieldError[]): string {
  const first = errors[0];
  if (first === undefined) return 'The input is invalid';
  const where = first.path === '' ? 'input' : first.path;
  // Said apart from the first message, which may itself end in a number ("at least 8 characters").
  const others = errors.length - 1;
  const more = others > 0 ? `; ${others} more ${others === 1 ? 'error' : 'errors'}` : '';
  return `${where}: ${first.message}${more}`;
}

/** The problem `type` URI of a code: a stable URN, so clients can match on it. */
export function problemType(code: string): string {
  return `urn:proceed:problem:${code.toLowerCase().replaceAll('_', '-')}`;
}

export interface ProblemResponse {
  status: number;
  headers: Record<string, string>;
  body: Problem;
  /** The error was not a {@link ProceedError}: the caller should log it. */
  unexpected: boolean;
}

/** The most `errors` a problem lists (its `detail` still counts them all); the document says so. */
export const maxFieldErrors = 100;

/**
 * Turns anything thrown into the problem response that goes on the wire. Unknown errors become
 * 500 `INTERNAL`; their message is shown only when `exposeInternals` is set (never in production).
 */
export function toProblem(error: unknown, exposeInternals = false): ProblemResponse {
  if (error instanceof ProceedError) {
    const body: Problem = {
      type: problemType(error.code),
      title: error.title,
      status: error.status,
      detail: error.message,
      code: error.code,
    };
    // The first ones only: an input with thousands of bad items must not make an answer as large.
    if (error.errors !== undefined) body.errors = error.errors.slice(0, maxFieldErrors);
    return { status: error.status, headers: { ...error.headers }, body, unexpected: false };
  }
  const detail =
    exposeInternals && error instanceof Error
      ? withoutQueryParameters(error.message)
      : 'The server could not complete the request';
  return {
    status: 500,
    headers: {},
    body: {
      type: problemType('INTERNAL'),
      title: errorTitle.INTERNAL,
      status: 500,
      detail,
      code: 'INTERNAL',
    },
    unexpected: true,
  };
}

/** Raised while an app is being assembled (a bad procedure name, two routes on one path, …). */
export class ProceedConfigError extends Error {
  override readonly name = 'ProceedConfigError';
}
