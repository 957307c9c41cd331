/**
 * A procedure called by something other than its own HTTP route (an MCP tool call, docs/mcp.md):
 * the same context (the auth plugin reads the same headers), the same rate limit, the same
 * compiled call (guards, input, handler, view), only the input arrives already whole instead
 * of being read from a path, a query string and a body.
 */
import type { Call } from '../core/call.js';
import type { ContextPipeline } from '../core/context.js';
import { ValidationError } from '../core/errors.js';
import type { Guard } from '../core/guards.js';
import { closestName } from '../core/options.js';
import type { BaseContext, RequestInfo, RequestLog } from '../core/request-context.js';
import type { MountedRoute } from '../core/route-table.js';
import type { StepTracer } from '../core/tracing.js';
import { keyShapeOf } from '../core/unknown-keys.js';
import { type CookieSigner, RequestCookies } from '../http/cookies.js';
import { entityTag, ifMatchHolds } from '../http/entity-tags.js';
import type { HeaderRecord } from '../http/fetch-core.js';
import { forbiddenKeyOf } from '../http/json.js';
import {
  type Answered,
  type IdempotencyRuntime,
  type ProcedureCall,
  procedureCall,
} from '../http/procedure-call.js';
import type { RateLimits, RouteLimiter } from '../http/rate-limit.js';
import { maxParamLength } from '../http/url.js';

/** The request a procedure is called for: the one that carried the call (its headers authenticate it). */
export interface CallingRequest {
  readonly id: string;
  readonly method: string;
  readonly url: string;
  readonly ip: string;
  readonly headers: HeaderRecord;
  /** Times the call's steps (`app.traceOperation`'s), while the operation is recorded. */
  readonly steps?: StepTracer | undefined;
}

/** A called procedure's answer, with the entity tag its REST answer would carry (`ETag`). */
export type CalledAnswer = Answered & { readonly tag?: string };

export interface ProcedureCallsParts {
  readonly context: ContextPipeline;
  readonly rateLimits: RateLimits;
  readonly cookieSigner: CookieSigner;
  readonly entityTags: boolean;
  readonly userSource: () => string | undefined;
  readonly idempotency: () => IdempotencyRuntime | undefined;
  /** The app's logger for one request, by its id (`ctx.request.log`). */
  readonly requestLogOf: (id: string) => RequestLog;
}

interface Compiled {
  readonly call: ProcedureCall;
  readonly limiter: RouteLimiter | undefined;
  /** The names of the route's path parameters, which the input carries among its keys. */
  readonly params: readonly string[];
  /** The route's path with a call's parameters in it. */
  readonly urlOf: (params: Readonly<Record<string, string>>) => string;
}

export class ProcedureCalls {
  readonly #parts: ProcedureCallsParts;
  readonly #compiled = new Map<MountedRoute, Compiled>();

  constructor(parts: ProcedureCallsParts) {
    this.#parts = parts;
  }

  #compile(route: MountedRoute): Compiled {
    let compiled = this.#compiled.get(route);
    if (compiled === undefined) {
      const parts = this.#parts;
      compiled = {
        call: procedureCall(route, {
          userSource: parts.userSource,
          entityTags: parts.entityTags,
          idempotency: parts.idempotency,
          entityTag,
          ifMatchHolds,
          rateLimits: parts.rateLimits,
        }),
        limiter: parts.rateLimits.limiterFor(route),
        ...pathParts(route.path),
      };
      this.#compiled.set(route, compiled);
    }
    return compiled;
  }

  /**
   * The routes among `routes` whose guards let the caller of `request` through before any input
   * is read: a guard that needs a user refuses an anonymous caller, any other is asked. A guard
   * that fails or throws hides its route, unless it read the call's path parameters, which no
   * list has (the caller is the user the path names): that one only the call can decide. The
   * context is built once, for all of them.
   */
  async callableBy(routes: readonly MountedRoute[], request: CallingRequest): Promise<MountedRoute[]> {
    let paramsRead = false;
    // Every read of a parameter is noted, and finds none.
    const params = new Proxy({} as Record<string, string>, {
      get: () => {
        paramsRead = true;
        return undefined;
      },
      has: () => {
        paramsRead = true;
        return false;
      },
      ownKeys: () => {
        paramsRead = true;
        return [];
      },
    });
    const info = new CalledRequest(request, request.method, params, this.#parts, undefined);
    const ctx = (await this.#parts.context.build(info)) as BaseContext & { user?: unknown };
    const signedIn = ctx.user !== undefined && ctx.user !== null;
    const passes = async (guard: Guard<never>) => {
      if (guard.requiresUser === true && !signedIn) return false;
      paramsRead = false;
      try {
        return (await guard.check(ctx as never)) === true || paramsRead;
      } catch {
        return paramsRead;
      }
    };
    const callable: MountedRoute[] = [];
    for (const route of routes) {
      // A guard reading `ctx.request.method` or `.url` sees the route's own, as its call would.
      info.aimAt(route.method, this.#compile(route).urlOf);
      let all = true;
      for (const guard of route.definition.guards)
        if (!(await passes(guard))) {
          all = false;
          break;
        }
      if (all) callable.push(route);
    }
    return callable;
  }

  /**
   * Calls `route`'s procedure with `input` (what its input schema describes, path parameters
   * included) for `request`. Throws what its route would answer with as a problem; an input
   * holding a key no JSON body may hold (`__proto__`, `constructor.prototype`) is refused as its
   * body would be.
   */
  async call(route: MountedRoute, request: CallingRequest, input: unknown): Promise<CalledAnswer> {
    const { call, limiter, params, urlOf } = this.#compile(route);
    if (limiter !== undefined) {
      const checked = limiter.check(request.ip);
      if (checked instanceof Promise) await checked;
    }
    const given = input ?? {};
    if (typeof given !== 'object' || Array.isArray(given))
      throw new ValidationError([{ path: '', message: 'The arguments must be an object' }]);
    // Where its REST route refuses such a body: after the rate limit, before the context.
    const refused = forbiddenKeyOf(given);
    if (refused !== undefined) throw refused;
    const { pathParams, rest } = splitParams(given as Record<string, unknown>, params, route);
    const info = new CalledRequest(request, route.method, pathParams, this.#parts, urlOf);
    const made = this.#parts.context.build(info);
    const ctx = (made instanceof Promise ? await made : made) as BaseContext & { user?: unknown };
    // An update's input is its parameters and `data`: anything else would be dropped unread.
    if (route.inputMode === 'update')
      for (const key of Object.keys(rest))
        if (key !== 'data')
          throw new ValidationError([
            { path: key, message: `Unknown argument "${key}": an update takes its parameters and data` },
          ]);
    const body = route.inputMode === 'update' ? rest.data : rest;
    // One tool call per request (stateless MCP): the request's If-Match and Idempotency-Key are
    // the call's, taken as its REST route takes them (a read's If-Match against its answer's tag).
    const ifMatch = headerText(request.headers['if-match']);
    const reads = route.method === 'GET';
    const sent: Call = {
      ctx,
      params: pathParams,
      query: route.inputMode === 'query' ? rest : undefined,
      body: route.inputMode === 'query' ? undefined : body,
      ifMatch: reads ? undefined : ifMatch,
      trace: request.steps,
      givenAsArguments: true,
    };
    const ran = call.run(sent, request.headers['idempotency-key']);
    const answered: CalledAnswer = ran instanceof Promise ? await ran : ran;
    // A read's If-Match is compared with its answer's tag (a stale one: 412). A versioned record's
    // tag goes back with the answer, for a later write's If-Match; any other write refuses a tag
    // but `*`, so an unversioned answer's would be of no use, and is not made.
    if (route.definition.versioning === undefined) {
      if (reads && ifMatch !== undefined) call.tagOf(answered, ifMatch);
      return answered;
    }
    const tag = reads ? call.tagOf(answered, ifMatch) : call.writtenTagOf(answered);
    // Set on the reply: a copy of it (`{ ...answered, tag }`) cost a tool read a tenth of its
    // time in a duel (docs/performance.md, "MCP tools/call against the same REST call").
    if (tag !== undefined) (answered as { tag?: string }).tag = tag;
    return answered;
  }
}

/** A header's text: a repeated one joined, as one line would carry it. */
function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * A route's path split once: the names of its parameters, and how to make it with given ones
 * (the auth plugin reads every call's URL, for a socket's token, and a regular expression per
 * call was a fiftieth of a tool call's time).
 */
function pathParts(path: string): Pick<Compiled, 'params' | 'urlOf'> {
  // Literal text and parameter names in turn: ['/api/posts/', 'id', ''].
  const parts = path.split(/:([^/]+)/);
  const params = parts.filter((_, at) => at % 2 === 1);
  if (params.length === 0) return { params, urlOf: () => path };
  return {
    params,
    urlOf: (values) => {
      let url = parts[0] as string;
      for (let at = 1; at < parts.length; at += 2)
        url += encodeURIComponent(values[parts[at] as string] ?? '') + (parts[at + 1] as string);
      return url;
    },
  };
}

/**
 * The path parameters among the input's keys, as the text a path would carry, and the rest. A
 * path always carries each of its parameters as text: one missing, empty, or neither a string nor
 * a number is refused, as no request to the route could send it (left among the rest, it would
 * reach the input while a guard reading `ctx.request.params` saw none).
 */
function splitParams(
  input: Record<string, unknown>,
  names: readonly string[],
  route: MountedRoute,
): { pathParams: Record<string, string>; rest: Record<string, unknown> } {
  const pathParams: Record<string, string> = {};
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) if (!names.includes(key)) rest[key] = value;
  for (const name of names) {
    const value = input[name];
    const text = typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
    if (text !== undefined && text.length > maxParamLength)
      throw new ValidationError([
        {
          path: name,
          message: `${name} is a parameter of the route's path: at most ${maxParamLength} characters`,
        },
      ]);
    if (text === undefined || text === '')
      throw new ValidationError([
        {
          path: name,
          message:
            value === undefined
              ? `Required${sentAs(name, input, names, route)}`
              : `${name} is a parameter of the route's path: a string or a number, not empty`,
        },
      ]);
    pathParams[name] = text;
  }
  return { pathParams, rest };
}

/**
 * Where an agent likely sent a missing path parameter: a key named after it (`postId` for `id`)
 * or spelt near it (`idd`), said with the refusal; an agent reads "id: Required" alone as a
 * field it never heard of.
 */
function sentAs(
  name: string,
  input: Record<string, unknown>,
  names: readonly string[],
  route: MountedRoute,
): string {
  const lower = name.toLowerCase();
  // A key the input names is an argument of its own (`userId` beside a missing `id`).
  const { fields } = keyShapeOf(route.definition.input);
  const others = Object.keys(input).filter((key) => !names.includes(key) && fields?.has(key) !== true);
  const near =
    others.find((key) => key.length > name.length && key.toLowerCase().endsWith(lower)) ??
    closestName(name, others);
  return near === undefined ? '' : ` (sent as "${near}"? The argument is "${name}")`;
}

/** The request a called procedure sees as `ctx.request`: the carrying request's, on the route's method and path. */
class CalledRequest implements RequestInfo {
  readonly id: string;
  method: string;
  readonly ip: string;
  readonly headers: HeaderRecord;
  readonly params: Readonly<Record<string, string>>;
  readonly #parts: ProcedureCallsParts;
  readonly #request: CallingRequest;
  #urlOf: ((params: Readonly<Record<string, string>>) => string) | undefined;
  #cookies: RequestCookies | undefined;
  #log: RequestLog | undefined;

  /** With no route yet (a list of what the caller may call): the carrying request's method and URL until aimed. */
  constructor(
    request: CallingRequest,
    method: string,
    params: Record<string, string>,
    parts: ProcedureCallsParts,
    urlOf: ((params: Readonly<Record<string, string>>) => string) | undefined,
  ) {
    this.id = request.id;
    this.method = method;
    this.ip = request.ip;
    this.headers = request.headers;
    this.params = params;
    this.#parts = parts;
    this.#request = request;
    this.#urlOf = urlOf;
  }

  /** A list's request, on the next route whose guards are asked: one context serves them all. */
  aimAt(method: string, urlOf: (params: Readonly<Record<string, string>>) => string): void {
    this.method = method;
    this.#urlOf = urlOf;
  }

  /** The carrying request's logger: its lines carry that request's id. */
  get log(): RequestLog {
    this.#log ??= this.#parts.requestLogOf(this.id);
    return this.#log;
  }

  /** The route's path with the call's parameters, as its own request would have it (made when read). */
  get url(): string {
    return this.#urlOf === undefined ? this.#request.url : this.#urlOf(this.params);
  }

  header(name: string): string | undefined {
    const value = this.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  }

  cookie(name: string, options?: { signed?: boolean }): string | undefined {
    this.#cookies ??= new RequestCookies(this.headers.cookie, this.#parts.cookieSigner);
    return this.#cookies.get(name, options);
  }
}
