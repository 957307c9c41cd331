/**
 * Text holding U+0000 (NUL) in any input: PostgreSQL's text types cannot store it (the query
 * fails, a 500), C libraries cut strings at it, and no text a person writes holds one. It is
 * refused where the input is assembled, in the path, the query string, a JSON body at any depth
 * and a form's fields alike (docs/procedures.md, "Input"). Bytes travel as files.
 */
import { ValidationError } from './errors.js';

/** The path of the first string holding NUL in an input (`''` for the input itself), or undefined. */
export function nulPathIn(input: unknown): string | undefined {
  if (typeof input === 'string') return input.includes('\u0000') ? '' : undefined;
  if (typeof input !== 'object' || input === null) return undefined;
  // Every request's input is looked through: the paths are named only once a NUL is found.
  return holdsNul(input) ? firstNulPath(input) : undefined;
}

/** Plain records and arrays are text to look into; a File, a Date or a class instance is not. */
function isPlainRecord(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Whether any string in a record or an array (or any of its keys) holds NUL. */
function holdsNul(input: object): boolean {
  // Iterative: a deeply nested body must not overflow the stack here.
  const pending: object[] = [input];
  while (pending.length > 0) {
    const value = pending.pop() as object;
    if (Array.isArray(value)) {
      for (const item of value) {
        if (typeof item === 'string') {
          if (item.includes('\u0000')) return true;
        } else if (typeof item === 'object' && item !== null) pending.push(item);
      }
    } else if (isPlainRecord(value)) {
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        if (key.includes('\u0000')) return true;
        const item = (value as Record<string, unknown>)[key];
        if (typeof item === 'string') {
          if (item.includes('\u0000')) return true;
        } else if (typeof item === 'object' && item !== null) pending.push(item);
      }
    }
  }
  return false;
}

/** The path of the first string holding NUL, depth first in key and index order. */
function firstNulPath(input: object): string | undefined {
  const pending: [value: unknown, path: string][] = [[input, '']];
  while (pending.length > 0) {
    const [value, path] = pending.pop() as [unknown, string];
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) {
        const item = value[index];
        const at = path === '' ? String(index) : `${path}.${index}`;
        if (typeof item === 'string') {
          if (item.includes('\u0000')) return at;
        } else if (typeof item === 'object' && item !== null) pending.push([item, at]);
      }
      continue;
    }
    if (!isPlainRecord(value as object)) continue;
    for (const key of Object.keys(value as object)) {
      const item = (value as Record<string, unknown>)[key];
      const at = path === '' ? key : `${path}.${key}`;
      if (key.includes('\u0000')) return at;
      if (typeof item === 'string') {
        if (item.includes('\u0000')) return at;
      } else if (typeof item === 'object' && item !== null) pending.push([item, at]);
    }
  }
  return undefined;
}

/** Throws a 400 naming the field when the input holds NUL in any string. */
export function refuseNul(input: unknown): void {
  const path = nulPathIn(input);
  if (path !== undefined)
    throw new ValidationError([
      { path, message: 'Text may not hold the NUL character (U+0000); send bytes as a file' },
    ]);
}
