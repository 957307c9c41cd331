/** The Fastify instance under an app: its options and its one body format, JSON. */

import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type * as FastifyModule from 'fastify';
import type { FastifyBaseLogger, FastifyInstance, FastifyServerOptions, RawServerDefault } from 'fastify';
import type { Logger } from 'pino';
import type { ServerTimeouts } from '../config/server.js';
import { ProceedConfigError } from '../core/errors.js';
import { forbiddenKeyIn } from '../http/json.js';
import { requestIdFrom } from '../http/request-id.js';
import { maxParamLength } from '../http/url.js';
import { timeoutCheckInterval } from './lifecycle.js';
import type { TraceFields } from './logger.js';
import { newRequestId } from './request-id.js';
import { lazyChildLoggers, oneLinePerRequest } from './request-log.js';

/** A well-formed `X-Request-Id` from the client is kept (src/http/request-id.ts); else a new one. */
function requestIdOf(request: IncomingMessage): string {
  return requestIdFrom(request.headers['x-request-id'], newRequestId);
}

export interface FastifySettings {
  /** The app's logger (src/server/logger.ts), or undefined when the app logs nothing. */
  logger: Logger | undefined;
  /** Whether request ids come from `X-Request-Id` or a UUID (true), or are a counter (false). */
  requestIds: boolean;
  /** The app's count of its requests: the ids with `requestIds: false`, shared with the pipeline. */
  countRequest: () => string;
  bodyLimit: number;
  trustProxy: boolean | number | string | string[];
  timeouts: ServerTimeouts;
  frameworkErrors: NonNullable<FastifyServerOptions['frameworkErrors']>;
  clientErrorHandler: NonNullable<FastifyServerOptions['clientErrorHandler']>;
  /** The trace ids a request's log line carries, when the app traces. */
  traceFields: TraceFields | undefined;
}

/**
 * What Fastify checks and passes when it holds the logger, kept now that the app holds it: a
 * route's or plugin's `logLevel` must be one of the logger's levels (else the route is refused
 * when it is added, not at its first request), and a child logger factory set on the server or a
 * plugin receives the app's logger as the parent of a request's logger.
 */
function holdLoggerRules(server: FastifyInstance, logger: Logger): void {
  server.addHook('onRoute', (route) => {
    // An empty level means "the plugin's", as in Fastify.
    const level: string | undefined = route.logLevel;
    if (level !== undefined && level !== '' && logger.levels.values[level] === undefined) {
      throw new ProceedConfigError(
        `Log level for '${String(route.method)}:${route.url}' route must be a valid logger level (one of ${Object.keys(logger.levels.values).join(', ')})`,
      );
    }
  });
  const setFactory = server.setChildLoggerFactory;
  server.setChildLoggerFactory = function setChildLoggerFactory(this: FastifyInstance, factory) {
    return setFactory.call(
      this,
      function childOfAppLogger(this: FastifyInstance, _parent, bindings, options, request) {
        return factory.call(this, logger as unknown as FastifyBaseLogger, bindings, options, request);
      },
    );
  };
}

/**
 * Fastify, loaded when an app first asks for it (`app.server`): an app that never does is served
 * by Node's own http module and loads none of it (docs/deployment.md, "Fastify: the escape hatch").
 * Fastify is CommonJS, so it loads in the asking call.
 */
function loadFastify(): typeof FastifyModule {
  return createRequire(import.meta.url)('fastify') as typeof FastifyModule;
}

export function createServer(settings: FastifySettings): FastifyInstance {
  const { timeouts } = settings;
  const { logger } = settings;
  const fastify = loadFastify();
  const requestLog = oneLinePerRequest(fastify.LogController, settings.traceFields);
  const server = fastify.fastify<RawServerDefault>({
    // Fastify is given no logger of its own, or it would time every request and listen for the
    // end of every answer: the app's logger reaches requests through the child logger factory
    // (docs/deployment.md, "Logs").
    logger: false,
    bodyLimit: settings.bodyLimit,
    genReqId: settings.requestIds ? requestIdOf : settings.countRequest,
    logController: requestLog,
    // Without a logger Fastify hands every request the null logger itself; with one, a request's
    // child logger is made only when something logs through it.
    ...(logger === undefined ? {} : { childLoggerFactory: lazyChildLoggers(logger) }),
    // A number of hops as the function proxy-addr is given for one, which Fastify's types take.
    trustProxy:
      typeof settings.trustProxy === 'number' ? hopsTrusted(settings.trustProxy) : settings.trustProxy,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength },
    // Requests that arrive while closing get a problem+json 503 from the app (lifecycle.ts),
    // not Fastify's own JSON.
    return503OnClosing: false,
    // Errors the router meets before any route runs (a malformed URL, an over-long parameter).
    frameworkErrors: settings.frameworkErrors,
    // Errors before there is a request at all: malformed HTTP, headers too large, timeouts.
    clientErrorHandler: settings.clientErrorHandler,
    forceCloseConnections: 'idle',
    http: {
      headersTimeout: timeouts.headers,
      connectionsCheckingInterval: timeoutCheckInterval,
      // Checked by the pipeline on Node, which answers a problem (PipelineOnNode.answer).
      requireHostHeader: false,
    },
    requestTimeout: timeouts.request,
    keepAliveTimeout: timeouts.keepAlive,
  }) as unknown as FastifyInstance;
  if (logger !== undefined) {
    // Fastify, its plugins and the app's own code log through `server.log`.
    (server as { log: FastifyBaseLogger }).log = logger as unknown as FastifyBaseLogger;
    requestLog.attach(logger);
    // The last requests' lines are written before `close()` resolves, not a turn after it.
    server.addHook('onClose', (_instance, done) => {
      requestLog.writeHeld();
      done();
    });
    holdLoggerRules(server, logger);
  }
  // JSON is the only body format; Fastify's default text/plain parser would let text through.
  server.removeContentTypeParser('text/plain');
  // Many clients send `Content-Type: application/json` on every request: an empty body with it
  // is no body (a DELETE, a POST /publish), not malformed JSON. Anything else parses as before,
  // prototype-poisoning checks included, with an answer that says which of the two went wrong.
  const parseJson = server.getDefaultJsonParser('error', 'error');
  server.removeContentTypeParser('application/json');
  server.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text === '') return done(null, undefined);
    parseJson(request, text, (error, parsed) => {
      if (error === null) return done(null, parsed);
      const refused = forbiddenKeyIn(text);
      done(refused === undefined ? error : refused, undefined);
    });
  });
  return server;
}

/** Trusts the nearest `hops` addresses of a request's chain: the peer, then each proxy before it. */
function hopsTrusted(hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops;
}
