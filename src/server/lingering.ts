/** The lingering close of src/http/lingering.ts on Node's server: a refused body read on, then the socket closed. */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { lingeringMilliseconds, lingersOn } from '../http/lingering.js';

/** Sockets reading a refused body on: a request timeout there ends them without a second answer. */
const lingeringSockets = new WeakSet<Socket>();

/** Whether the socket is reading a refused body on, its answer already sent. */
export function isLingering(socket: Socket): boolean {
  return lingeringSockets.has(socket);
}

/**
 * Reads a request's unread body on and drops it, up to `bytes` and for up to 30 s, after which
 * the socket is closed; a body read to its end leaves the connection open for the next request,
 * as Node does after reading a body itself. Returns false, reading nothing, for a body declared
 * longer than `bytes`: its answer must close the connection. A request that is not on a socket
 * (`app.inject()`) has nothing to read on.
 */
export function lingerOnUnreadBody(request: IncomingMessage, bytes: number): boolean {
  if (request.complete || request.readableEnded) return true;
  const { socket } = request as { socket: Socket | null | undefined };
  if (socket === null || socket === undefined || typeof socket.destroy !== 'function') return true;
  if (!lingersOn(request.headers['content-length'], bytes)) return false;
  if (lingeringSockets.has(socket)) return true;
  lingeringSockets.add(socket);
  const timer = setTimeout(() => socket.destroy(), lingeringMilliseconds);
  timer.unref();
  let read = 0;
  const stop = () => {
    clearTimeout(timer);
    lingeringSockets.delete(socket);
    request.off('data', count);
    request.off('end', stop);
    socket.off('close', stop);
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
  socket.once('close', stop);
  request.resume();
  return true;
}
