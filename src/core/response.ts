/**
 * What a handler decides about its own answer, per request: headers and cookies
 * (docs/procedures.md, "Headers and cookies per request"). The core only records the handler's
 * wishes and refuses mistakes where they are made; the HTTP layer writes them (src/http/cookies.ts).
 */
import { ProceedConfigError } from './errors.js';

export interface CookieOptions {
  /** Seconds until the browser drops it; 0 or less drops it at once. */
  maxAge?: number;
  expires?: Date;
  /** Default `/`, so that a cookie set by `/api/auth/login` reaches `/api/posts` too. */
  path?: string;
  domain?: string;
  /** Default true: sent over HTTPS only (browsers treat `localhost` as secure). */
  secure?: boolean;
  /** Default true: out of reach of page scripts. */
  httpOnly?: boolean;
  /** Default `lax`. `none` needs `secure`. */
  sameSite?: 'strict' | 'lax' | 'none';
  partitioned?: boolean;
  /** Signed with the app's first cookie secret, so that `ctx.request.cookie(name, { signed: true })` can trust it. */
  signed?: boolean;
}

/** A cookie a handler set or cleared, as the HTTP layer receives it. */
export interface ResponseCookie {
  readonly name: string;
  readonly value: string;
  readonly options: Readonly<Required<Pick<CookieOptions, 'path' | 'secure' | 'httpOnly' | 'sameSite'>>> &
    Omit<CookieOptions, 'path' | 'secure' | 'httpOnly' | 'sameSite'>;
}

// RFC 6265 §4.1.1: a cookie name is an RFC 7230 token.
const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// RFC 6265 §4.1.1: an attribute value has no control characters and no ';'.
const cookieAttribute = /^[\x20-\x3a\x3c-\x7e]*$/;
// RFC 7230 §3.2: a header name is a token; its value has no control characters but tab.
const headerValue = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Headers the HTTP layer owns: set through the body, the status or `response.cookie()`. */
const ownedHeaders = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'set-cookie',
  'etag',
  'x-request-id',
  'location',
  'idempotency-replayed',
]);

/**
 * A header a procedure or its handler may put on an answer, its name lower-cased: a token, none
 * the HTTP layer owns (a fixed `content-length` cut every body short), a text value without
 * control characters (a CR or LF failed every answer). Throws a ProceedConfigError naming `where`.
 */
export function checkedAnswerHeader(where: string, name: string, value: unknown): string {
  const lower = name.toLowerCase();
  if (!token.test(name)) throw new ProceedConfigError(`${where}: "${name}" is not a header name`);
  if (ownedHeaders.has(lower))
    throw new ProceedConfigError(
      `${where}: Proceed sets ${lower} itself (docs/procedures.md, "Headers and cookies per request")`,
    );
  if (typeof value !== 'string')
    throw new ProceedConfigError(`${where}: the value of ${lower} is text, not ${JSON.stringify(value)}`);
  if (!headerValue.test(value))
    throw new ProceedConfigError(`${where}: the value of ${lower} has a control character`);
  return lower;
}

function cookieMistake(name: string, rule: string): never {
  throw new ProceedConfigError(
    `response.cookie("${name}"): ${rule} (docs/procedures.md, "Headers and cookies per request")`,
  );
}

/**
 * Checks a cookie against the rules browsers apply silently: a cookie they would drop is a
 * mistake in the handler, refused where it is made instead of lost on the way.
 */
export function checkedCookie(name: string, value: string, options: CookieOptions = {}): ResponseCookie {
  if (!token.test(name))
    cookieMistake(name, "a cookie name is a token (letters, digits and !#$%&'*+-.^_`|~)");
  const resolved = {
    ...options,
    path: options.path ?? '/',
    secure: options.secure ?? true,
    httpOnly: options.httpOnly ?? true,
    sameSite: options.sameSite ?? 'lax',
  } as const;
  // Browsers match the prefixes whatever their case.
  const prefix = name.toLowerCase();
  if (prefix.startsWith('__secure-') && !resolved.secure)
    cookieMistake(name, 'a __Secure- cookie must be secure');
  if (prefix.startsWith('__host-')) {
    if (!resolved.secure || resolved.path !== '/' || resolved.domain !== undefined)
      cookieMistake(name, 'a __Host- cookie must be secure, have path "/" and no domain');
  }
  if (resolved.sameSite === 'none' && !resolved.secure)
    cookieMistake(name, 'sameSite "none" needs secure: browsers drop it otherwise');
  if (resolved.partitioned === true && !resolved.secure)
    cookieMistake(name, 'a partitioned cookie must be secure');
  if (resolved.maxAge !== undefined && !Number.isInteger(resolved.maxAge))
    cookieMistake(name, 'maxAge is a whole number of seconds');
  if (!cookieAttribute.test(resolved.path)) cookieMistake(name, 'path has a character a cookie cannot carry');
  if (resolved.domain !== undefined && !cookieAttribute.test(resolved.domain))
    cookieMistake(name, 'domain has a character a cookie cannot carry');
  if (
    resolved.expires !== undefined &&
    (!(resolved.expires instanceof Date) || Number.isNaN(resolved.expires.getTime()))
  )
    cookieMistake(name, 'expires is a valid Date');
  return { name, value, options: resolved };
}

/**
 * A handler's say over its answer: `response` in the handler's arguments. Made per request, a
 * few fields that stay empty unless the handler sets something. `S` is the statuses the
 * procedure declares with `.rest({ status: [...] })`; `never` when it declares one.
 */
export class ResponseControl<in out S extends number = number> {
  readonly #declared: readonly number[];
  #status: number | undefined;
  #headers: Array<[string, string]> | undefined;
  #cookies: ResponseCookie[] | undefined;

  constructor(declared: readonly number[]) {
    this.#declared = declared;
  }

  /**
   * Answers with another of the statuses the procedure declares (`.rest({ status: [200, 201] })`):
   * 201 for an upsert that created, 204 for nothing to say. A status it does not declare fails to
   * compile, and fails the call if it gets through.
   */
  status(code: S): this {
    if (!this.#declared.includes(code) || this.#declared.length < 2)
      throw new ProceedConfigError(
        `response.status(${String(code)}): the procedure declares ${this.#declared.join(', ')}; list every status it answers with in .rest({ status: [...] }) (docs/procedures.md, "Headers and cookies per request")`,
      );
    this.#status = code;
    return this;
  }

  /** The status the handler chose; undefined when it chose none (the first declared applies). */
  get chosenStatus(): number | undefined {
    return this.#status;
  }

  /**
   * Sets a header on the answer, replacing one set before under the same name. The headers the
   * HTTP layer owns (`content-type`, `set-cookie`, `etag`…) are refused: use the body, the
   * procedure's declaration or `cookie()`.
   */
  header(name: string, value: string): this {
    const lower = checkedAnswerHeader(`response.header("${name}")`, name, value);
    this.#headers ??= [];
    const headers = this.#headers;
    const index = headers.findIndex(([existing]) => existing === lower);
    if (index >= 0) headers[index] = [lower, value];
    else headers.push([lower, value]);
    return this;
  }

  /** Sets a cookie; each leaves as its own `Set-Cookie` line. */
  cookie(name: string, value: string, options?: CookieOptions): this {
    const cookie = checkedCookie(name, value, options);
    this.#cookies ??= [];
    const cookies = this.#cookies;
    const index = cookies.findIndex(
      (existing) => existing.name === name && existing.options.path === cookie.options.path,
    );
    if (index >= 0) cookies[index] = cookie;
    else cookies.push(cookie);
    return this;
  }

  /** Tells the browser to drop a cookie: the same name, path and domain it was set with. */
  clearCookie(
    name: string,
    options: Pick<CookieOptions, 'path' | 'domain' | 'secure' | 'sameSite' | 'partitioned'> = {},
  ): this {
    return this.cookie(name, '', { ...options, maxAge: 0, expires: new Date(0) });
  }

  /** The headers set, lower-cased, in the order first set; undefined when none. */
  get headers(): ReadonlyArray<readonly [string, string]> | undefined {
    return this.#headers;
  }

  /** The cookies set or cleared; undefined when none. */
  get cookies(): readonly ResponseCookie[] | undefined {
    return this.#cookies;
  }
}
