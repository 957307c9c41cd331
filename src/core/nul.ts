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
  // Iterative: a deeply nested body must not overflow the stack here.
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
    const prototype = Object.getPrototypeOf(value);
    // Plain records only: a File, a Date or a class instance is not text to look into.
    if (prototype !== Object.prototype && prototype !== null) continue;
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
