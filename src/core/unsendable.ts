import { ServerEvent } from './events.js';
import { FileAnswer } from './files.js';

/**
 * What a JSON answer cannot carry, named for the log, or undefined for plain data. Serialized,
 * a Buffer would leave as `{"type":"Buffer","data":[…]}`, a stream as its internals and a
 * generator as `{}`: a 500 that names the procedure is the honest answer (docs/procedures.md,
 * "What a handler returns").
 */
export function unsendableKind(value: unknown): string | undefined {
  if (typeof value === 'function') return 'a function';
  if (typeof value !== 'object' || value === null) return undefined;
  const prototype = Object.getPrototypeOf(value);
  if (prototype === Object.prototype || prototype === null || Array.isArray(value)) return undefined;
  if (value instanceof FileAnswer) return 'a file answer (sendFile) without .output(download())';
  if (value instanceof ServerEvent) return 'a server event (serverEvent) without .output(eventStream())';
  if (ArrayBuffer.isView(value)) return `bytes (${value.constructor.name})`;
  if (value instanceof ArrayBuffer) return 'bytes (ArrayBuffer)';
  if (typeof Blob === 'function' && value instanceof Blob) return 'a Blob';
  if (typeof ReadableStream === 'function' && value instanceof ReadableStream) return 'a ReadableStream';
  const object = value as { pipe?: unknown; on?: unknown; next?: unknown; [Symbol.asyncIterator]?: unknown };
  if (typeof object.pipe === 'function' && typeof object.on === 'function') return 'a Node.js stream';
  if (typeof object[Symbol.asyncIterator] === 'function') return 'an async iterable (an async generator?)';
  if (
    typeof object.next === 'function' &&
    typeof (value as Iterable<unknown>)[Symbol.iterator] === 'function'
  )
    return 'an iterator (a generator?)';
  return undefined;
}
