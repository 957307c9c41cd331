/**
 * What a `DATABASE_URL` names (docs/blog.md, "Configuration"). Light on purpose: the entry reads
 * it before any driver loads, so a bad value is refused at once.
 */
import { resolve } from 'node:path';
import { ProceedConfigError } from 'proceedjs/config';

/** The default `DATABASE_URL`: a persistent PGlite database beside the working directory. */
export const defaultDatabaseUrl = './.data/db';

/** What a `DATABASE_URL` names. */
export type DatabaseLocation =
  | { kind: 'postgres'; url: string }
  | { kind: 'memory' }
  | { kind: 'directory'; path: string };

/**
 * Reads a `DATABASE_URL` without connecting, so that a bad one is refused before anything slow.
 * Unset or empty: {@link defaultDatabaseUrl}.
 *
 * @example
 * databaseLocation('postgres://db/blog') // { kind: 'postgres', url: 'postgres://db/blog' }
 * databaseLocation('./.data/db')         // { kind: 'directory', path: '/srv/blog/.data/db' }
 */
export function databaseLocation(url: string | undefined): DatabaseLocation {
  const value = url === undefined || url.trim() === '' ? defaultDatabaseUrl : url.trim();
  if (/^postgres(?:ql)?:\/\//i.test(value)) {
    if (!URL.canParse(value)) {
      // Not echoed: the URL may hold a password.
      throw new ProceedConfigError('DATABASE_URL starts with postgres:// but is not a valid URL');
    }
    return { kind: 'postgres', url: value };
  }
  if (/^memory:\/\//i.test(value)) return { kind: 'memory' };
  // Anything else is a directory, but not a URL of another scheme: `postgre://user:secret@db`
  // is a typo to refuse, not a folder to create (and to print, password and all).
  const scheme = /^([a-z][a-z0-9+.-]+):/i.exec(value)?.[1];
  if (scheme !== undefined && scheme.toLowerCase() !== 'file') {
    throw new ProceedConfigError(
      `DATABASE_URL has the scheme "${scheme}:"; use postgres://… or postgresql://… for a server, ` +
        'memory:// for an in-memory database, or a directory path for an embedded one',
    );
  }
  return { kind: 'directory', path: resolve(value.replace(/^file:\/\//i, '')) };
}
