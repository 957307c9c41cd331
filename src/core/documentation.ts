/**
 * What a route can answer, derived once from its procedure (input, guards, kind, steps, meta) and
 * what plugins added. The server's behaviour and the OpenAPI document both follow these rules;
 * keeping them here, beside the code that runs the route, keeps the two from drifting.
 */
import { describeProblem, type ErrorDefinition, type ProblemCode } from './errors.js';
import { canForbid, type Guard, rolesPassingAll } from './guards.js';
import type { DocumentationSource } from './route-table.js';
import type { RouteEntry } from './routes.js';
import type { HeaderDocumentation, RouteDocumentation } from './steps.js';

/** Everything the documentation of one route says beyond its schemas. */
export interface RouteFacts {
  /** Every problem the route can answer, by status then code. */
  readonly problems: readonly ErrorDefinition[];
  /** Headers of its successful answers, besides the procedure's fixed ones. */
  readonly headers: Readonly<Record<string, HeaderDocumentation>>;
  /** Optional request headers it reads (`If-Match`, `If-None-Match`, …). */
  readonly requestHeaders: Readonly<Record<string, HeaderDocumentation>>;
  /** It answers 304 to a matching `If-None-Match`. */
  readonly notModified: boolean;
  /** `required`: a guard needs a signed-in caller; `optional`: a token is checked when sent. */
  readonly bearer: 'none' | 'optional' | 'required';
  /** The guards' names, in order, then the steps that check access (`owned()`). */
  readonly guards: readonly string[];
  /**
   * The roles that let a caller in, one list each (`[['editor'], ['admin']]`): those every role
   * guard (`admin`, `hasRole`) lets in, as OpenAPI 3.1 lets a bearer requirement name roles;
   * `[[]]` when no guard names roles.
   */
  readonly roleChoices: readonly (readonly string[])[];
}

/** The roles that let a caller in, each a way in of its own; `[[]]` when no guard names roles. */
function roleChoicesOf(guards: readonly Guard<never>[]): string[][] {
  return rolesPassingAll(guards)?.map((role) => [role]) ?? [[]];
}

/** Whether the route reads a JSON body. */
export function takesBody(route: RouteEntry): boolean {
  return route.inputMode !== 'query';
}

/**
 * The facts of a route: derived problems (400 for input, 401/403 from the guards' `failsWith`,
 * 404 for a path that names a record, 409 and 412 for a write, 408/413/415 for a body, 500 and 503
 * always), those
 * of its steps and `meta.errors`, and whatever `added` (plugins) says.
 *
 * @example
 * routeFacts(route, table.documentationOf(route)).problems.map((problem) => problem.status)
 */
export function routeFacts(route: RouteEntry, added: readonly RouteDocumentation[] = []): RouteFacts {
  const { definition } = route;
  const codes: ProblemCode[] = [];
  // Every procedure: one without `.input()` refuses any key sent to it (docs/procedures.md).
  codes.push('VALIDATION_FAILED');
  if (takesBody(route)) codes.push('INVALID_JSON', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  if (definition.guards.length > 0) codes.push('UNAUTHENTICATED');
  if (definition.guards.some(canForbid)) codes.push('FORBIDDEN');
  if (route.params.length > 0) codes.push('NOT_FOUND');
  if (definition.kind === 'mutation') codes.push('CONFLICT');
  // Any write answers an If-Match it cannot honour with 412: a version that is not current, or
  // any tag at all where the procedure keeps no versions (docs/http-caching.md).
  if (route.method !== 'GET') codes.push('PRECONDITION_FAILED');
  codes.push(...(definition.meta.errors ?? []));
  // What plugins add comes after the procedure's own facts: the idempotency plugin's text names
  // the app's ttl, which the procedure cannot know.
  const documentation = [
    ...definition.documentation,
    ...versionDocumentation(route),
    ...(definition.idempotent ? [idempotencyDocumentation()] : []),
    ...(definition.output?.kind === 'download' ? [fileDocumentation(route)] : []),
    ...(definition.output?.kind === 'events' ? [eventStreamDocumentation] : []),
    ...(definition.output?.kind === 'socket' ? [socketDocumentation] : []),
    ...added,
  ];
  // The procedure's fixed headers (`.headers()`), as HTTP documents name them: Cache-Control.
  const headers: Record<string, HeaderDocumentation> = Object.fromEntries(
    Object.entries(definition.headers).map(([name, value]) => [
      name.replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase()),
      {
        description: `Always \`${value}\``,
        type: 'string',
        schema: { const: value },
      } satisfies HeaderDocumentation,
    ]),
  );
  const requestHeaders: Record<string, HeaderDocumentation> = {};
  let notModified = false;
  let bearer: RouteFacts['bearer'] = definition.guards.length > 0 ? 'required' : 'none';
  for (const each of documentation) {
    codes.push(...(each.problems ?? []));
    for (const [name, header] of Object.entries(each.headers ?? {})) {
      // One entry per header whatever its case: a step's `ETag` replaces a fixed `Etag`.
      for (const known of Object.keys(headers))
        if (known.toLowerCase() === name.toLowerCase()) delete headers[known];
      headers[name] = header;
    }
    Object.assign(requestHeaders, each.requestHeaders);
    if (each.notModified === true) notModified = true;
    if (each.bearer === 'required') bearer = 'required';
    else if (each.bearer === 'optional' && bearer === 'none') bearer = 'optional';
  }
  // Any route: 500 when something unexpected fails; 503 from a server that is closing (or a
  // database that is down, docs/errors.md). A body can also be too slow to arrive: 408.
  if (takesBody(route)) codes.push('REQUEST_TIMEOUT');
  // Any request: headers over Node's limit are refused before routing (docs/deployment.md).
  codes.push('HEADERS_TOO_LARGE', 'INTERNAL', 'UNAVAILABLE');
  return {
    problems: distinctProblems(codes),
    headers,
    requestHeaders,
    notModified,
    bearer,
    // The guards, then the steps that check access (`owned()`), as `proceed routes` lists them.
    guards: [
      ...definition.guards.map((guard) => guard.name),
      ...documentation.flatMap((each) => (each.check === undefined ? [] : [each.check])),
    ],
    roleChoices: roleChoicesOf(definition.guards),
  };
}

/**
 * Codes by their characters, not by a locale: the document is the same whatever the machine's
 * locale, and no collator is loaded for it (ICU's first comparison took 8 ms of a start).
 */
const byCharacters = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Codes once each, by status then code; two definitions of one code must agree. */
export function distinctProblems(codes: readonly ProblemCode[]): ErrorDefinition[] {
  const byCode = new Map<string, ErrorDefinition>();
  for (const code of codes) {
    const problem = describeProblem(code);
    const known = byCode.get(problem.code);
    if (known !== undefined && (known.status !== problem.status || known.title !== problem.title))
      throw new TypeError(`Error code ${problem.code} is defined twice, with different statuses or titles`);
    byCode.set(problem.code, problem);
  }
  return [...byCode.values()].sort((a, b) => a.status - b.status || byCharacters(a.code, b.code));
}

const etagOfBody: HeaderDocumentation = {
  description:
    'A strong tag of this exact body (a compressed copy adds its coding: `"…-gzip"`). Send it back in `If-None-Match` to get 304 with no body while the answer is unchanged',
  type: 'string',
};

const etagOfVersion: HeaderDocumentation = {
  description:
    'A strong tag of this exact body: `"{version}.{hash}"`. Send it back in `If-None-Match` to get 304 while the answer is unchanged, and in `If-Match` on a write so that it applies only to this version',
  type: 'string',
};

const conditionalRead = (etag: HeaderDocumentation): RouteDocumentation => ({
  // A read with a tag also honours If-Match (RFC 9110): a tag that is not current is 412.
  problems: ['PRECONDITION_FAILED'],
  headers: { ETag: etag },
  requestHeaders: {
    'If-None-Match': {
      description: 'The `ETag` of the answer the client holds: 304 with no body while it is still current',
      type: 'string',
    },
  },
  notModified: true,
});

/**
 * What `.versioned()` adds: on a read, the tag with its version (whatever the app's `entityTags`
 * says); on a write, `If-Match` and 412, and the new version's tag when it answers with the record.
 */
function versionDocumentation(route: RouteEntry): RouteDocumentation[] {
  const { versioning } = route.definition;
  if (versioning === undefined) return [];
  if (route.method === 'GET') return [conditionalRead(etagOfVersion)];
  return [
    {
      requestHeaders: {
        'If-Match': {
          description:
            'The `ETag` of the version the client read: the write applies only while it is current, else 412 and nothing changes',
          type: 'string',
        },
      },
      ...(versioning.read === undefined ? {} : { headers: { ETag: etagOfVersion } }),
    },
  ];
}

/**
 * What an app with entity tags (the default) adds to each GET's documentation: the `ETag` of its
 * 200, `If-None-Match` and 304. An app-less document gets it through
 * `generateOpenApi({ mounts, documentation })`.
 */
export const entityTagDocumentation: DocumentationSource = (route) =>
  route.method === 'GET' &&
  route.successStatus === 200 &&
  route.definition.versioning === undefined &&
  route.definition.output?.kind !== 'download' &&
  route.definition.output?.kind !== 'events' &&
  route.definition.output?.kind !== 'socket'
    ? conditionalRead(etagOfBody)
    : undefined;

/** What an event stream honours: the id a reconnecting client resumes after. */
const eventStreamDocumentation: RouteDocumentation = {
  requestHeaders: {
    'Last-Event-ID': {
      description:
        'The `id` of the last event the client received, sent when it reconnects: the stream resumes after it',
      type: 'string',
    },
  },
};

/**
 * What a socket's handshake may be refused with before the upgrade (docs/sockets.md): no
 * handshake at all, a malformed one, one with cookies from another site, one from a client that
 * holds its most sockets.
 */
const socketDocumentation: RouteDocumentation = {
  problems: ['UPGRADE_REQUIRED', 'BAD_REQUEST', 'FORBIDDEN', 'RATE_LIMITED'],
};

/** What a file answer carries and honours (docs/files.md); ranges, 304 and 412 on GET only. */
export function fileDocumentation(route: Pick<RouteEntry, 'method'>): RouteDocumentation {
  const reads = route.method === 'GET';
  return {
    ...(reads
      ? { problems: ['RANGE_NOT_SATISFIABLE', 'PRECONDITION_FAILED'] as const, notModified: true }
      : {}),
    headers: {
      'Content-Disposition': {
        description:
          '`attachment` (or `inline`), with the file name as `filename` and, when it is not plain ASCII, as `filename*` (RFC 6266, RFC 8187)',
        type: 'string',
      },
      ETag: {
        description:
          "The file's tag: the handler's own, or its size and modification time, or a hash of its bytes; absent for a stream of unknown age",
        type: 'string',
      },
      'Last-Modified': {
        description: 'When the file last changed, when known',
        type: 'string',
        // An IMF-fixdate (RFC 9110): always 29 characters.
        schema: { maxLength: 29 },
      },
      'Accept-Ranges': {
        description: '`bytes` when the file can be read in ranges, else `none`',
        type: 'string',
        schema: { enum: ['bytes', 'none'] },
      },
    },
    ...(reads
      ? {
          requestHeaders: {
            Range: {
              description:
                'One range, `bytes=first-last`, `bytes=first-` or `bytes=-suffixLength`: 206 with that part; 416 when it starts past the end; several ranges get the whole file',
              type: 'string',
            },
            'If-Range': {
              description:
                'The `ETag` or `Last-Modified` the client holds part of: the range only while it is current',
              type: 'string',
            },
            'If-None-Match': {
              description: 'The `ETag` the client holds: 304 with no body while it is current',
              type: 'string',
            },
            'If-Modified-Since': {
              description: 'The `Last-Modified` the client holds: 304 while the file has not changed since',
              type: 'string',
            },
            'If-Match': {
              description:
                'The `ETag` the client asks for, strongly compared (`*`: any): 412 when the file is another',
              type: 'string',
            },
            'If-Unmodified-Since': {
              description: 'Without If-Match: 412 when the file changed after this date',
              type: 'string',
            },
          },
        }
      : {}),
  };
}

/**
 * What an idempotent POST answers besides its own: `Idempotency-Key`, a replay's header, 409
 * while the first request runs, 422 for a key sent with another body. `ttl` is how long the app's
 * store keeps a key (ms); without it the text says "24 hours by default".
 *
 * @example
 * idempotencyDocumentation(6 * 60 * 60 * 1000).requestHeaders?.['Idempotency-Key']?.description // '… within 6 hours …'
 */
export function idempotencyDocumentation(ttl?: number): RouteDocumentation {
  const within =
    ttl === undefined ? 'while the server keeps it (24 hours by default)' : `within ${spoken(ttl)}`;
  return {
    problems: ['CONFLICT', 'IDEMPOTENCY_KEY_REUSED'],
    requestHeaders: {
      'Idempotency-Key': {
        description: `A unique key (a UUID, say) for this request: sent again with the same body ${within}, it replays the first answer instead of running the request again`,
        type: 'string',
        // 1–255 visible ASCII characters, in quotes or not (src/core/idempotency.ts).
        schema: { minLength: 1, maxLength: 257, pattern: '^[\\x21-\\x7e]+$' },
      },
    },
    headers: {
      'Idempotency-Replayed': {
        description:
          '`true` when this answer is the stored answer of an earlier request with the same `Idempotency-Key`',
        type: 'string',
        schema: { const: 'true' },
      },
    },
  };
}

/** A duration in the largest whole unit: `24 hours`, `90 minutes`, `1500 ms`. */
function spoken(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
    [1000, 'second'],
  ];
  for (const [size, unit] of units) {
    if (ms % size === 0 && ms / size >= (unit === 'day' ? 2 : 1)) {
      const count = ms / size;
      return `${count} ${unit}${count === 1 ? '' : 's'}`;
    }
  }
  return `${ms} ms`;
}
