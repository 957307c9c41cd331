/** The lingering close of src/http/lingering.ts on Node's server: a refused body read on, then the socket closed. */
import type { IncomingMessage } from 'node:http';
import { lingeringMilliseconds, lingersOn } from '../http/lingering.js';

const lingering = Symbol('lingering');

/**
 * Reads a request's unread body on and drops it, up to `bytes` and for up to 30 s, after which
 * the socket is closed; a body read to its end leaves the connection open for the next request,
 * as Node does after reading a body itself. Returns false, reading nothing, for a body declared
 * longer than `bytes`: its answer must close the connection.
 */
export function lingerOnUnreadBody(request: IncomingMessage, bytes: number): boolean {
  if (request.complete) return true;
  if (!lingersOn(request.headers['content-length'], bytes)) return false;
  const marked = request as IncomingMessage & { [lingering]?: true };
  if (marked[lingering]) return true;
  marked[lingering] = true;
  const { socket } = request;
  const timer = setTimeout(() => socket.destroy(), lingeringMilliseconds);
  timer.unref();
  let read = 0;
  const stop = () => {
    clearTimeout(timer);
    request.off('data', count);
  };
  const count = (chunk: Buffer) => {
    read += chunk.byteLength;
    if (read > bytes) {
      stop();
      socket.destroy();
    }
  };
  request.on('data', count);
  request.once('end', stop);
  request.once('close', stop);
  request.resume();
  return true;
}
