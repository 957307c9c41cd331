/**
 * Cookies on the wire, for every adapter: `Set-Cookie` lines from what handlers set, the request's
 * `Cookie` header read once, and signatures (docs/procedures.md, "Headers and cookies per request").
 *
 * A signed cookie is `value.signature`: an HMAC-SHA256 of the cookie's name and value, so a
 * signature cannot be moved to another cookie. The first secret signs; every secret verifies, so
 * that secrets rotate without signing anyone out.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { parse, serialize } from 'cookie';
import { ProceedConfigError } from '../core/errors.js';
import type { ResponseCookie } from '../core/response.js';

/** The app's cookie secrets, newest first; empty when the app signs nothing. */
export class CookieSigner {
  readonly #secrets: readonly string[];

  constructor(secrets: readonly string[] = []) {
    if (!Array.isArray(secrets))
      throw new ProceedConfigError(
        'createApp cookies.secrets is a list of secrets, newest first (a string is one secret: [secret])',
      );
    for (const secret of secrets) {
      if (typeof secret !== 'string' || Buffer.byteLength(secret) < 32)
        throw new ProceedConfigError('createApp cookies.secrets: each secret has at least 32 bytes');
    }
    this.#secrets = secrets;
  }

  get signs(): boolean {
    return this.#secrets.length > 0;
  }

  #mac(secret: string, name: string, value: string): string {
    return createHmac('sha256', secret).update(`${name}=${value}`).digest('base64url');
  }

  sign(name: string, value: string): string {
    const secret = this.#secrets[0];
    if (secret === undefined)
      throw new ProceedConfigError(
        `response.cookie("${name}", …, { signed: true }): the app has no cookie secret (createApp({ cookies: { secrets } }))`,
      );
    return `${value}.${this.#mac(secret, name, value)}`;
  }

  /** The value, when one of the secrets signed it; undefined for a forged, altered or unsigned cookie. */
  unsign(name: string, signed: string): string | undefined {
    const dot = signed.lastIndexOf('.');
    if (dot < 0) return undefined;
    const value = signed.slice(0, dot);
    const given = Buffer.from(signed.slice(dot + 1));
    let valid = false;
    // Every secret is tried, whichever matches: the time taken says nothing about which did.
    for (const secret of this.#secrets) {
      const expected = Buffer.from(this.#mac(secret, name, value));
      if (expected.length === given.length && timingSafeEqual(expected, given)) valid = true;
    }
    return valid ? value : undefined;
  }
}

/** One `Set-Cookie` line. */
export function setCookieLine(cookie: ResponseCookie, signer: CookieSigner): string {
  const { name, options } = cookie;
  const value =
    options.signed === true && cookie.value !== '' ? signer.sign(name, cookie.value) : cookie.value;
  return serialize(name, value, {
    path: options.path,
    secure: options.secure,
    httpOnly: options.httpOnly,
    sameSite: options.sameSite,
    ...(options.domain === undefined ? {} : { domain: options.domain }),
    ...(options.maxAge === undefined ? {} : { maxAge: options.maxAge }),
    ...(options.expires === undefined ? {} : { expires: options.expires }),
    ...(options.partitioned === true ? { partitioned: true } : {}),
  });
}

/** Signs the cookies a handler set, once, when it set any. */
export function setCookieLines(cookies: readonly ResponseCookie[], signer: CookieSigner): string[] {
  return cookies.map((cookie) => setCookieLine(cookie, signer));
}

/** A request's cookies, parsed on first use. */
export class RequestCookies {
  #parsed: Record<string, string | undefined> | undefined;
  readonly #header: string | string[] | undefined;
  readonly #signer: CookieSigner;

  constructor(header: string | string[] | undefined, signer: CookieSigner) {
    this.#header = header;
    this.#signer = signer;
  }

  /** A cookie's value; with `signed`, only when its signature holds (else undefined). */
  get(name: string, options?: { signed?: boolean }): string | undefined {
    const header = this.#header;
    if (header === undefined) return undefined;
    // Two Cookie headers (HTTP/2 may split them) are one list.
    this.#parsed ??= parse(Array.isArray(header) ? header.join('; ') : header);
    const raw = this.#parsed[name];
    if (raw === undefined || options?.signed !== true) return raw;
    return this.#signer.unsign(name, raw);
  }
}
