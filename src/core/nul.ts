/**
 * Text no store keeps as sent, in any input: U+0000 (NUL), which PostgreSQL's text types cannot
 * store (the query fails, a 500) and C libraries cut strings at, and a lone surrogate (`"\ud800"`
 * in JSON: half of a character), which every UTF-8 encoder replaces with U+FFFD, changing what
 * the client sent without a word. No text a person writes holds either. They are refused where
 * the input is assembled, in the path, the query string, a JSON body at any depth and a form's
 * fields alike (docs/procedures.md, "Input"). Bytes travel as files.
 */
import { ValidationError } from './errors.js';

/** `String.prototype.isWellFormed` (ES2024), on every runtime Proceed supports. */
interface WellFormed {
  isWellFormed(): boolean;
}

/** Whether a string holds NUL or a lone surrogate. */
function unstorable(text: string): boolean {
  return text.includes('\u0000') || !(text as unknown as WellFormed).isWellFormed();
}

/** The path of the first string holding NUL or a lone surrogate in an input (`''` for the input itself), or undefined. */
export function nulPathIn(input: unknown): string | undefined {
  return unstorableIn(input)?.path;
}

/** Where the first unstorable text is, and that text (a value, or a key). */
function unstorableIn(input: unknown): { path: string; text: string } | undefined {
  if (typeof input === 'string') return unstorable(input) ? { path: '', text: input } : undefined;
  if (typeof input !== 'object' || input === null) return undefined;
  // Every request's input is looked through: the paths are named only once one is found.
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
          if (unstorable(item)) return true;
        } else if (typeof item === 'object' && item !== null) pending.push(item);
      }
    } else if (isPlainRecord(value)) {
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        if (unstorable(key)) return true;
        const item = (value as Record<string, unknown>)[key];
        if (typeof item === 'string') {
          if (unstorable(item)) return true;
        } else if (typeof item === 'object' && item !== null) pending.push(item);
      }
    }
  }
  return false;
}

/** The first string holding NUL or a lone surrogate, and its path, depth first in key and index order. */
function firstNulPath(input: object): { path: string; text: string } | undefined {
  const pending: [value: unknown, path: string][] = [[input, '']];
  while (pending.length > 0) {
    const [value, path] = pending.pop() as [unknown, string];
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) {
        const item = value[index];
        const at = path === '' ? String(index) : `${path}.${index}`;
        if (typeof item === 'string') {
          if (unstorable(item)) return { path: at, text: item };
        } else if (typeof item === 'object' && item !== null) pending.push([item, at]);
      }
      continue;
    }
    if (!isPlainRecord(value as object)) continue;
    for (const key of Object.keys(value as object)) {
      const item = (value as Record<string, unknown>)[key];
      const at = path === '' ? key : `${path}.${key}`;
      if (unstorable(key)) return { path: at, text: key };
      if (typeof item === 'string') {
        if (unstorable(item)) return { path: at, text: item };
      } else if (typeof item === 'object' && item !== null) pending.push([item, at]);
    }
  }
  return undefined;
}

/** Throws a 400 naming the field when the input holds NUL or a lone surrogate in any string. */
export function refuseNul(input: unknown): void {
  const found = unstorableIn(input);
  if (found === undefined) return;
  const message = found.text.includes('\u0000')
    ? 'Text may not hold the NUL character (U+0000); send bytes as a file'
    : 'Text may not hold a lone surrogate (half of a UTF-16 pair, as \\ud800 alone); send bytes as a file';
  throw new ValidationError([{ path: found.path, message }]);
}
