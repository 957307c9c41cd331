/**
 * Error translation: everything thrown on the way to an answer (a handler's ProceedError,
 * Fastify's own errors, anything unexpected) leaves as RFC 9457 problem+json.
 */

import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ProblemResponse, ProceedError, toProblem } from '../core/errors.js';
import { invalidJson, notJsonBody } from '../http/json.js';
import { problemAnswer } from '../http/problems.js';
import { malformedUrl, paramTooLong } from '../http/url.js';

/** Fastify's client errors (body, media type, URL) as Proceed's codes; undefined for the rest. */
export function fromFastifyError(error: FastifyError): ProceedError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return notJsonBody();
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ProceedError('PAYLOAD_TOO_LARGE', 'The request body is larger than the server accepts');
    case 'FST_ERR_BAD_URL':
      return malformedUrl();
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return paramTooLong();
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return invalidJson();
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ProceedError('INVALID_JSON', error.message);
  }
  const status = error.statusCode;
  if (status === undefined || status < 400 || status >= 500) return undefined;
  if (status === 400 && error instanceof SyntaxError) return invalidJson();
  if (status === 413) return new ProceedError('PAYLOAD_TOO_LARGE', error.message);
  if (status === 415) return new ProceedError('UNSUPPORTED_MEDIA_TYPE', error.message);
  if (status === 429) return new ProceedError('RATE_LIMITED', error.message);
  if (status === 404) return new ProceedError('ROUTE_NOT_FOUND', error.message);
  return new ProceedError('VALIDATION_FAILED', error.message);
}

/** The problem code each answered request was given (read by the metrics plugin). */
const answeredCodes = new WeakMap<FastifyReply, string>();

/** The problem code a reply was sent with; undefined for a success. */
export function problemCodeOf(reply: FastifyReply): string | undefined {
  return answeredCodes.get(reply);
}

/**
 * Sends anything thrown as problem+json. Unexpected errors are logged with their stack and
 * answered 500 without their message, unless `exposeErrors`.
 */
export function sendProblem(
  error: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
  exposeErrors: boolean,
  requestIds = true,
): FastifyReply {
  const problem = problemAnswer(error, {
    exposeErrors,
    log: request.log,
    translate: (thrown) => fromFastifyError(thrown as FastifyError),
  });
  answeredCodes.set(reply, problem.code);
  reply.code(problem.status).headers(problem.headers);
  if (requestIds) reply.header('x-request-id', request.id);
  return reply.send(problem.body);
}

/** Node's client errors (before any request exists) as Proceed's codes. */
function clientProblem(error: NodeJS.ErrnoException): ProceedError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ProceedError('REQUEST_TIMEOUT', 'The request did not arrive in time');
    case 'HPE_HEADER_OVERFLOW':
      return new ProceedError(
        'HEADERS_TOO_LARGE',
        'The request line and headers are larger than the server accepts',
      );
    default:
      return new ProceedError('BAD_REQUEST', 'The request is not valid HTTP');
  }
}

/**
 * Answers a connection Node refused before any request existed (malformed HTTP, headers over
 * the limit, a request or its headers too slow) with a problem+json, then closes it: the
 * connection cannot carry another request.
 */
export function answerClientError(this: FastifyInstance, error: Error, socket: Socket): void {
  answerClientErrorOn(socket, error, this.log);
}

/** {@link answerClientError} for any Node server, with the logger to tell. */
export function answerClientErrorOn(
  socket: Socket,
  error: Error,
  log: { info(object: object, message: string): void },
): void {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ECONNRESET' || socket.destroyed) return;
  const problem = toProblem(clientProblem(error as NodeJS.ErrnoException));
  const id = randomUUID();
  // A response already under way on this connection (a pipelined request behind it was
  // malformed, or the body it was still reading timed out after an early answer) must not get
  // a second status line written into it: the connection just ends, as Node's own handler does.
  const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  const answered = socket.writable && current?.headersSent !== true;
  // The request line of an answer no route made: its id is the X-Request-Id the client got, so
  // what a client reports of a 400, 408 or 431 is found in the log (docs/deployment.md, "Logs").
  // Not under `req`: that is a request's serializer, and there is no request.
  const where = { remoteAddress: socket.remoteAddress, remotePort: socket.remotePort };
  const reason = `${code ?? error.name}: ${error.message}`;
  if (answered) {
    log.info(
      { reqId: id, ...where, res: { statusCode: problem.status }, reason },
      `request refused: ${problem.body.detail ?? problem.body.title}`,
    );
    socket.write(rawProblemResponse(problem, id));
  } else log.info({ ...where, reason }, 'connection closed: an answer was under way');
  socket.destroy();
}

/**
 * A whole HTTP/1.1 answer carrying a problem, for a connection no request object exists for:
 * malformed HTTP, or a connection over the limit. It closes the connection.
 */
export function rawProblemResponse(problem: ProblemResponse, id: string = randomUUID()): string {
  const body = JSON.stringify(problem.body);
  const extra = Object.entries(problem.headers)
    .filter(([name]) => name.toLowerCase() !== 'connection')
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return (
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? ''}\r\n` +
    'Content-Type: application/problem+json; charset=utf-8\r\n' +
    'X-Content-Type-Options: nosniff\r\n' +
    `X-Request-Id: ${id}\r\n` +
    extra +
    'Connection: close\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}
