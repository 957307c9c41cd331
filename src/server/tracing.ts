/**
 * Tracing on Node (docs/observability.md): each request Node hands to Fastify begins its trace,
 * which ends when the response closes; an `onRequest` hook names the route it took. Installed
 * only when the app traces, so an untraced app keeps Fastify's own listener and no hook.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { pathTemplate } from '../core/naming.js';
import type { RequestTrace, RequestTracing, TracedRequest } from '../http/tracing.js';

const traceKey = Symbol('proceed.trace');

type TracedMessage = IncomingMessage & { [traceKey]?: RequestTrace };

/** The trace of a request Node received; undefined when the app traces nothing. */
export function traceOf(request: IncomingMessage): RequestTrace | undefined {
  return (request as TracedMessage)[traceKey];
}

/** A Node request as the tracer reads it. */
class NodeTracedRequest implements TracedRequest {
  readonly method: string;
  readonly path: string;
  readonly scheme: string;
  readonly #request: IncomingMessage;

  constructor(request: IncomingMessage) {
    this.#request = request;
    this.method = request.method ?? 'GET';
    const url = request.url ?? '/';
    const query = url.indexOf('?');
    this.path = query === -1 ? url : url.slice(0, query);
    this.scheme = (request.socket as { encrypted?: boolean }).encrypted === true ? 'https' : 'http';
  }

  header(name: string): string | undefined {
    const value = this.#request.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  }
}

/** Routes Fastify's template of a route to the request's trace, once per route. */
const templates = new WeakMap<object, string>();
function templateOf(request: FastifyRequest): string | undefined {
  const { routeOptions } = request;
  const { url } = routeOptions;
  if (url === undefined) return undefined;
  let template = templates.get(routeOptions.config);
  if (template === undefined) {
    template = pathTemplate(url);
    templates.set(routeOptions.config, template);
  }
  return template;
}

/**
 * Traces every request of `fastify`: wraps the listener Fastify gave its Node server, so the
 * request's span is active through Fastify's hooks (the user loader's queries nest under it).
 */
export function traceRequests(fastify: FastifyInstance, server: Server, tracing: RequestTracing): void {
  const listeners = server.listeners('request') as Array<
    (request: IncomingMessage, response: ServerResponse) => void
  >;
  server.removeAllListeners('request');
  server.on('request', (request: TracedMessage, response: ServerResponse) => {
    const trace = tracing.begin(new NodeTracedRequest(request));
    request[traceKey] = trace;
    // The body's events come from the socket, outside `run`: bound, Fastify's parser calls the
    // route in the request's context, which carries its sampling decision on whether it records
    // or not (with no SDK started, binding is free).
    trace.bind(request);
    if (trace.recording) {
      trace.bind(response);
      // No answer was begun when the client left first: the span says so by having no status.
      response.once('close', () => trace.end(response.headersSent ? response.statusCode : undefined));
    }
    trace.run(() => {
      for (const listener of listeners) listener.call(server, request, response);
    });
  });
  fastify.addHook('onRequest', (request, _reply, done) => {
    const template = templateOf(request);
    const trace = traceOf(request.raw);
    if (template !== undefined && trace?.recording === true)
      trace.routed(template, request.routeOptions.config.procedure, request.id);
    done();
  });
}
