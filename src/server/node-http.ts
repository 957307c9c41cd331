/**
 * The app on Node's own http module, without Fastify (`proceedjs/node`, docs/deployment.md, "Node
 * without Fastify"): each request read as the pipeline's neutral request (src/server/node-request.ts),
 * answered by the same pipeline as `app.fetch` on every runtime, and its neutral answer written
 * on Node's response. This module only converts; every HTTP rule is the pipeline's. What only a
 * Node server has (its timeouts, the connection limit, malformed HTTP, WebSocket upgrades,
 * graceful close) is set up here as the Fastify adapter sets it up.
 */
import {
  createServer,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { ServerTimeouts } from '../config/server.js';
import { ProceedError, toProblem } from '../core/errors.js';
import type { PipelineHandler } from '../http/fetch.js';
import { proxyRefusal } from '../http/not-found.js';
import { problemAnswer } from '../http/problems.js';
import type { NativeServer } from '../http/runtime.js';
import type { SentAnswer } from '../http/sent.js';
import { type Lifecycle, timeoutCheckInterval } from './lifecycle.js';
import { NodeRequest, waitingForContinue } from './node-request.js';
import { answerClientErrorOn, rawProblemResponse } from './problems.js';
import { newRequestId } from './request-id.js';
import { routeUpgrades } from './sockets.js';

export interface NodeServeOptions {
  readonly port: number;
  readonly host: string;
  readonly handle: PipelineHandler;
  readonly lifecycle: Lifecycle;
  readonly timeouts: ServerTimeouts;
  readonly maxConnections: number;
  /** Whether any route opens a WebSocket: only then are upgrade requests taken. */
  readonly upgrades: boolean;
  readonly exposeErrors: boolean;
  readonly log: Logger;
  /** Counts the requests in flight, when a plugin asked (`app.countRequestsInFlight()`). */
  readonly counting: () => boolean;
  readonly arrived: () => void;
  readonly answered: () => void;
}

/**
 * Answers Node's requests with the pipeline: each read as the neutral request, its neutral answer
 * written on Node's response. Both Node servers use it: this module's and the Fastify adapter's
 * one route (src/server/fastify-adapter.ts).
 */
export class PipelineOnNode {
  /** The server's own `host:port`: the origin of a request that names none. */
  ownHost: string;
  readonly #handle: PipelineHandler;
  readonly #lifecycle: Lifecycle;
  readonly #exposeErrors: boolean;
  readonly #log: Logger;
  readonly #serverTakes: ((method: string, path: string) => boolean) | undefined;
  readonly #sendTimeout: number;

  constructor(
    options: {
      handle: PipelineHandler;
      lifecycle: Lifecycle;
      exposeErrors: boolean;
      log: Logger;
      /** How long a streamed answer waits for its client to read on (`timeouts.send`). */
      sendTimeout: number;
      /** Whether the server serves a method on a path with a route of its own (Fastify's). */
      serverTakes?: (method: string, path: string) => boolean;
    },
    ownHost: string,
  ) {
    this.#handle = options.handle;
    this.#serverTakes = options.serverTakes;
    this.#lifecycle = options.lifecycle;
    this.#exposeErrors = options.exposeErrors;
    this.#log = options.log;
    this.#sendTimeout = options.sendTimeout;
    this.ownHost = ownHost;
  }

  /** Answers a request of Node's; `givenId` is the id the server under the app gave it (Fastify's). */
  readonly answer = (incoming: IncomingMessage, response: ServerResponse, givenId?: string): void => {
    let answered: SentAnswer | Promise<SentAnswer>;
    try {
      answered = this.#handle(
        new NodeRequest(incoming, response, this.ownHost, this.#lifecycle, this.#serverTakes, givenId),
        { incoming },
      );
    } catch (error) {
      // A step outside the pipeline's own answers (a tracer's start) failed.
      this.#failed(response, error);
      return;
    }
    if (answered instanceof Promise)
      answered.then(
        (sent) => this.#send(response, sent),
        (error: unknown) => this.#failed(response, error),
      );
    else this.#send(response, answered);
  };

  #send(response: ServerResponse, sent: SentAnswer): void {
    if (sent.readsFile) {
      // Counted until the answer ends; a client that left while the handler ran has ended it already.
      const release = this.#lifecycle.fileOpened();
      if (response.closed) release();
      else response.once('close', release);
    }
    try {
      write(response, sent, this.#sendTimeout);
    } catch (error) {
      if (sent.body instanceof ReadableStream) void sent.body.cancel().catch(() => undefined);
      this.#failed(response, error);
    }
  }

  #failed(response: ServerResponse, error: unknown): void {
    const problem = problemAnswer(error, { exposeErrors: this.#exposeErrors, log: this.#log });
    if (response.headersSent) response.destroy();
    else
      response
        .writeHead(problem.status, { ...problem.headers, 'content-length': Buffer.byteLength(problem.body) })
        .end(problem.body);
  }

  /**
   * Answers, before any route, a request whose framing Node would answer with a bare status of
   * its own (no body, no media type): a problem, then the connection closes (what the client sent
   * after it is not read).
   */
  refuse(response: ServerResponse, error: ProceedError): void {
    response.shouldKeepAlive = false;
    response.setHeader('x-request-id', newRequestId());
    this.#failed(response, error);
  }

  /**
   * Whether a request is refused for its framing before any route (the server's own included):
   * an HTTP/1.1 request names its host once (RFC 9112, section 3.2); Node's own check answered a
   * missing one with an empty 400 and kept the first of two. Both Node servers ask it first.
   */
  refusesFraming(incoming: IncomingMessage, response: ServerResponse): boolean {
    const refusal = framingRefusal(incoming);
    if (refusal === undefined) return false;
    this.refuse(response, refusal);
    return true;
  }

  /** Node's own answers to a request's framing, given as problems instead (both Node servers). */
  watchFraming(server: Server): void {
    // CONNECT: with no listener Node drops the connection without a byte. This server is no proxy.
    // Node hands the socket over without its own error listener: a client that resets it would
    // otherwise throw in the process. Half-closed first, ended a second later, so that the client
    // reads the answer rather than a reset (as src/server/lifecycle.ts refuses a connection).
    server.on('connect', (_incoming: IncomingMessage, socket: Socket) => {
      socket.on('error', () => undefined);
      socket.resume();
      socket.end(rawProblemResponse(toProblem(proxyRefusal())));
      setTimeout(() => socket.destroy(), 1000).unref();
    });
    // An Expect other than 100-continue, which Node answered with a bare 417: ignored, as RFC 9110
    // lets a server ignore it and Bun, Deno and workerd do, so that a request is answered alike
    // on every runtime (docs/deployment.md).
    server.on('checkExpectation', (incoming: IncomingMessage, response: ServerResponse) =>
      server.emit('request', incoming, response),
    );
    // `Expect: 100-continue`: Node would answer 100 at once, inviting a body the route may refuse
    // unread (401, 403, 413 by its length). The 100 goes when the body is first read instead
    // (src/server/node-request.ts); a refusal goes without it, and Node closes the connection.
    server.on('checkContinue', (incoming: IncomingMessage, response: ServerResponse) => {
      // A route of the server's own (Fastify's) reads the body its own way: its 100 goes now.
      const path = (incoming.url ?? '/').split('?', 1)[0] as string;
      if (this.#serverTakes?.(incoming.method ?? 'GET', path) === true) response.writeContinue();
      else waitingForContinue.add(incoming);
      server.emit('request', incoming, response);
    });
  }
}

/**
 * What RFC 9112 (section 3.2) has a server refuse of a request's `Host` that Node lets through:
 * none on HTTP/1.1, or two lines (Node keeps the first; a proxy in front may have read the
 * other). The value itself, and a transfer coding other than chunked, are the pipeline's to
 * check on every runtime (src/http/url.ts).
 */
function framingRefusal(incoming: IncomingMessage): ProceedError | undefined {
  if (incoming.headers.host === undefined)
    return incoming.httpVersion === '1.1'
      ? new ProceedError('BAD_REQUEST', 'An HTTP/1.1 request names its host: send a Host header')
      : undefined;
  const raw = incoming.rawHeaders;
  let hosts = 0;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index] as string;
    if (name.length === 4 && name.toLowerCase() === 'host' && ++hosts === 2)
      return new ProceedError('BAD_REQUEST', 'A request names one host: it sent two Host headers');
  }
  return undefined;
}

/** Serves the pipeline on a new `node:http` server; resolves once it listens. */
export async function serveOnNode(options: NodeServeOptions): Promise<NativeServer> {
  const { lifecycle, timeouts, log } = options;
  const pipeline = new PipelineOnNode({ ...options, sendTimeout: timeouts.send }, options.host);
  const server: Server = createServer(
    {
      connectionsCheckingInterval: timeoutCheckInterval,
      headersTimeout: timeouts.headers,
      // Checked by the pipeline on Node, which answers a problem (PipelineOnNode.answer).
      requireHostHeader: false,
    },
    (incoming: IncomingMessage, response: ServerResponse) => {
      if (options.counting()) {
        options.arrived();
        response.once('close', options.answered);
      }
      if (pipeline.refusesFraming(incoming, response)) return;
      pipeline.answer(incoming, response);
    },
  );
  server.requestTimeout = timeouts.request;
  server.keepAliveTimeout = timeouts.keepAlive;
  server.on('clientError', (error: Error, socket: Socket) => answerClientErrorOn(socket, error, log));
  pipeline.watchFraming(server);
  lifecycle.watch(server, options.maxConnections, log);
  if (options.upgrades) routeUpgrades(server, lifecycle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port, host: options.host, backlog: 4096 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  pipeline.ownHost = hostAndPort(options.host, port);
  return {
    port,
    stop: (force) => (force ? closeAll(server) : closeGracefully(server, lifecycle)),
  };
}

/** `host:port` as a `Host` header names it (an IPv6 address in brackets). */
export function hostAndPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Stops accepting; resolves once every connection has ended, idle ones closed as they become idle. */
function closeGracefully(server: Server, lifecycle: Lifecycle): Promise<void> {
  // The app is closing already: a request that arrives now gets the pipeline's 503.
  lifecycle.dropUnused();
  // A connection whose answer ends now (an event stream told to close, a request that was
  // running) would otherwise stay open, idle, until its keep-alive timeout holds up the close.
  const sweep = setInterval(() => server.closeIdleConnections(), 100);
  sweep.unref();
  return new Promise<void>((resolve) => {
    server.close(() => {
      clearInterval(sweep);
      resolve();
    });
    server.closeIdleConnections();
  });
}

function closeAll(server: Server): Promise<void> {
  server.closeAllConnections();
  return Promise.resolve();
}

/** The neutral answer on Node's response. */
function write(response: ServerResponse, sent: SentAnswer, sendTimeout: number): void {
  // A WebSocket: `ws` wrote the 101 and has the connection.
  if (sent.handshake !== undefined) return;
  const { status, body } = sent;
  const headers: OutgoingHttpHeaders = sent.headers;
  if (sent.cookies.length > 0) headers['set-cookie'] = [...sent.cookies];
  if (typeof body === 'string') {
    headers['content-length'] ??= String(Buffer.byteLength(body));
    response.writeHead(status, headers).end(body);
  } else if (body instanceof Uint8Array) {
    headers['content-length'] ??= String(body.byteLength);
    response.writeHead(status, headers).end(body);
  } else if (body === null) {
    response.writeHead(status, headers).end();
  } else {
    response.writeHead(status, headers);
    pump(
      body instanceof Blob ? (body.stream() as ReadableStream<Uint8Array>) : body,
      response,
      sendTimeout,
    ).catch(() => response.destroy());
  }
}

/**
 * A streamed body (a file, event frames) written as the client reads: the next chunk is pulled
 * only once Node has sent the last one; a client that leaves cancels the stream, which lets go
 * of its file or ends its handler. A client that stops reading for `sendTimeout` ms while a
 * chunk waits to be sent is one that left: each such stalled download held a connection and
 * its file open for as long as the client liked (docs/deployment.md, "Timeouts").
 */
async function pump(
  stream: ReadableStream<Uint8Array>,
  response: ServerResponse,
  sendTimeout: number,
): Promise<void> {
  const reader = stream.getReader();
  // The client left before the answer: the stream lets go of its file or ends its handler.
  if (response.destroyed) {
    await reader.cancel().catch(() => undefined);
    return;
  }
  let gone = false;
  let resume: (() => void) | undefined;
  const leave = () => {
    if (gone) return;
    gone = true;
    resume?.();
    void reader.cancel().catch(() => undefined);
  };
  response.once('close', leave);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || gone) break;
      if (!response.write(value) && !response.destroyed) {
        const stalled = setTimeout(() => response.destroy(), sendTimeout);
        await new Promise<void>((resolve) => {
          resume = resolve;
          response.once('drain', resolve);
        });
        clearTimeout(stalled);
      }
      if (response.destroyed) leave();
      resume = undefined;
      if (gone) break;
    }
    if (!gone) response.end();
  } catch {
    // The source failed midway: the client sees the connection end before the length it was told.
    response.destroy();
  } finally {
    response.off('close', leave);
  }
}
